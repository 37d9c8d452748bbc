package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Permit;
import io.bulkhead.micrometer.BulkheadTracing;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@link BulkheadTracingAutoConfiguration}: with a tracer, a refused call in a compartment of
 * {@code bulkhead.*} is a {@code bulkhead.wait} span under the caller's.
 */
class TracingAutoConfigurationTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  BulkheadAutoConfiguration.class, BulkheadTracingAutoConfiguration.class))
          .withPropertyValues(
              "bulkhead.compartments.llm.limit=1", "bulkhead.compartments.llm.max-queue=0");

  @Test
  void withATracer_aRefusedCallIsASpanUnderTheCallers() {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    try (SdkTracerProvider provider =
        SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(exporter))
            .build()) {
      Tracer tracer =
          new OtelTracer(provider.get("test"), new OtelCurrentTraceContext(), event -> {});
      runner
          .withBean(Tracer.class, () -> tracer)
          .run(
              context -> {
                Bulkhead llm =
                    context.getBean(BulkheadRegistry.class).bulkhead("llm").orElseThrow();
                try (Permit held = llm.tryAcquire().orElseThrow()) {
                  Span request = tracer.nextSpan().name("GET /chat").start();
                  try (Tracer.SpanInScope ignored = tracer.withSpan(request)) {
                    assertThatThrownBy(() -> llm.call(() -> null))
                        .isInstanceOf(BulkheadFullException.class);
                  } finally {
                    request.end();
                  }
                }
              });
      SpanData wait =
          exporter.getFinishedSpanItems().stream()
              .filter(s -> s.getName().equals(BulkheadTracing.SPAN))
              .findFirst()
              .orElseThrow();
      SpanData request =
          exporter.getFinishedSpanItems().stream()
              .filter(s -> s.getName().equals("GET /chat"))
              .findFirst()
              .orElseThrow();
      assertThat(wait.getParentSpanId()).isEqualTo(request.getSpanId());
      assertThat(wait.getAttributes().get(AttributeKey.stringKey(BulkheadTracing.NAME_TAG)))
          .isEqualTo("llm");
      assertThat(wait.getAttributes().get(AttributeKey.stringKey(BulkheadTracing.REASON_TAG)))
          .isEqualTo("queue_full");
    }
  }
}
