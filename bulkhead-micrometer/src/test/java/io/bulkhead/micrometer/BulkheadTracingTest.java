package io.bulkhead.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Permit;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Wait spans on a real tracer: Micrometer Tracing over the OpenTelemetry SDK, every ended span
 * exported at once to an in-memory exporter. Which call waits is decided by a held permit and the
 * compartment's own waiting count, never by a sleep.
 */
class BulkheadTracingTest {

  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final SdkTracerProvider provider =
      SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
  private final Tracer tracer =
      new OtelTracer(provider.get("bulkhead-test"), new OtelCurrentTraceContext(), event -> {});
  private final BulkheadTracing tracing = BulkheadTracing.of(tracer);

  @AfterEach
  void close() {
    provider.close();
  }

  /** Runs {@code work} on a new thread inside a span named {@code request}, as a server would. */
  private CompletableFuture<Void> request(String request, ThrowingRunnable work) {
    return CompletableFuture.runAsync(
        () -> {
          Span span = tracer.nextSpan().name(request).start();
          try (Tracer.SpanInScope ignored = tracer.withSpan(span)) {
            work.run();
          } catch (Exception e) {
            span.error(e);
          } finally {
            span.end();
          }
        },
        r -> new Thread(r, request).start());
  }

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  private List<SpanData> spans(String name) {
    return exporter.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).toList();
  }

  private static String tag(SpanData span, String key) {
    return span.getAttributes().get(AttributeKey.stringKey(key));
  }

  @Test
  void aQueuedCall_getsAWaitSpan_childOfTheRequest_beforeItsWork() throws Exception {
    Bulkhead llm =
        Bulkhead.builder("llm")
            .limit(1)
            .maxQueue(1)
            .maxWait(Duration.ofSeconds(30))
            .listener(tracing)
            .build();
    Permit held = llm.tryAcquire().orElseThrow();
    CompletableFuture<Void> chat =
        request(
            "GET /chat",
            () ->
                llm.call(
                    () -> {
                      tracer.nextSpan().name("upstream call").start().end();
                      return null;
                    }));
    await().atMost(Duration.ofSeconds(10)).until(() -> llm.stats().waiting() == 1);
    held.close();
    chat.get(30, TimeUnit.SECONDS);

    SpanData request = spans("GET /chat").get(0);
    SpanData wait = spans(BulkheadTracing.SPAN).get(0);
    SpanData work = spans("upstream call").get(0);
    System.out.print(tree(exporter.getFinishedSpanItems()));
    assertThat(wait.getTraceId()).isEqualTo(request.getTraceId());
    assertThat(wait.getParentSpanId()).isEqualTo(request.getSpanId());
    assertThat(work.getParentSpanId()).isEqualTo(request.getSpanId());
    assertThat(tag(wait, BulkheadTracing.NAME_TAG)).isEqualTo("llm");
    assertThat(tag(wait, BulkheadTracing.OUTCOME_TAG)).isEqualTo("admitted");
    assertThat(tag(wait, BulkheadTracing.REASON_TAG)).isNull();
    double waitedMs = Double.parseDouble(tag(wait, BulkheadTracing.WAIT_TAG));
    assertThat(waitedMs).isPositive();
    assertThat((wait.getEndEpochNanos() - wait.getStartEpochNanos()) / 1e6)
        .as("the span is at least the compartment's own measure of the wait")
        .isGreaterThanOrEqualTo(waitedMs - 0.001);
    assertThat(wait.getEndEpochNanos())
        .as("the wait ends before the work starts")
        .isLessThanOrEqualTo(work.getStartEpochNanos())
        .isGreaterThan(wait.getStartEpochNanos());
    assertThat(wait.getStartEpochNanos()).isGreaterThanOrEqualTo(request.getStartEpochNanos());
  }

  @Test
  void aCallRefusedAtOnce_getsARejectionSpan_withItsReason() throws Exception {
    Bulkhead llm = Bulkhead.builder("llm").limit(1).maxQueue(0).listener(tracing).build();
    Permit held = llm.tryAcquire().orElseThrow();
    CompletableFuture<Void> chat =
        request(
            "GET /chat",
            () ->
                assertThatThrownBy(() -> llm.call(() -> null))
                    .isInstanceOf(BulkheadFullException.class));
    chat.get(30, TimeUnit.SECONDS);
    held.close();

    SpanData request = spans("GET /chat").get(0);
    SpanData refused = spans(BulkheadTracing.SPAN).get(0);
    System.out.print(tree(exporter.getFinishedSpanItems()));
    assertThat(refused.getParentSpanId()).isEqualTo(request.getSpanId());
    assertThat(tag(refused, BulkheadTracing.OUTCOME_TAG)).isEqualTo("rejected");
    assertThat(tag(refused, BulkheadTracing.REASON_TAG)).isEqualTo("queue_full");
    assertThat(tag(refused, BulkheadTracing.WAIT_TAG)).isEqualTo("0.000");
    assertThat(refused.getEndEpochNanos()).isEqualTo(refused.getStartEpochNanos());
  }

  @Test
  void aCallThatWaitsPastMaxWait_getsARejectionSpan_asLongAsItWaited() throws Exception {
    Duration maxWait = Duration.ofMillis(100);
    Bulkhead llm =
        Bulkhead.builder("llm").limit(1).maxQueue(1).maxWait(maxWait).listener(tracing).build();
    try (Permit held = llm.tryAcquire().orElseThrow()) {
      request(
              "GET /chat",
              () ->
                  assertThatThrownBy(() -> llm.call(() -> null))
                      .isInstanceOfSatisfying(
                          BulkheadFullException.class,
                          e ->
                              assertThat(e.reason())
                                  .isEqualTo(BulkheadFullException.Reason.WAIT_TIMEOUT)))
          .get(30, TimeUnit.SECONDS);
    }
    SpanData request = spans("GET /chat").get(0);
    SpanData refused = spans(BulkheadTracing.SPAN).get(0);
    assertThat(refused.getParentSpanId()).isEqualTo(request.getSpanId());
    assertThat(tag(refused, BulkheadTracing.OUTCOME_TAG)).isEqualTo("rejected");
    assertThat(tag(refused, BulkheadTracing.REASON_TAG)).isEqualTo("wait_timeout");
    // From its queueing to its refusal, inside the request; how long depends on the machine.
    assertThat(refused.getStartEpochNanos()).isGreaterThanOrEqualTo(request.getStartEpochNanos());
    assertThat(refused.getEndEpochNanos())
        .isGreaterThan(refused.getStartEpochNanos())
        .isLessThanOrEqualTo(request.getEndEpochNanos());
    assertThat(Double.parseDouble(tag(refused, BulkheadTracing.WAIT_TAG))).isPositive();
  }

  @Test
  void withoutACurrentSpan_orWithoutWaiting_noSpanIsMade() throws Exception {
    Bulkhead llm =
        Bulkhead.builder("llm")
            .limit(1)
            .maxQueue(1)
            .maxWait(Duration.ofSeconds(30))
            .listener(tracing)
            .build();
    request("GET /login", () -> llm.call(() -> null)).get(30, TimeUnit.SECONDS); // admitted at once
    Permit held = llm.tryAcquire().orElseThrow();
    CompletableFuture<Void> untraced =
        CompletableFuture.runAsync(
            () -> {
              try {
                llm.call(() -> null);
              } catch (Exception e) {
                throw new CompletionException(e);
              }
            },
            r -> new Thread(r, "untraced").start());
    await().atMost(Duration.ofSeconds(10)).until(() -> llm.stats().waiting() == 1);
    held.close();
    untraced.get(30, TimeUnit.SECONDS);
    assertThat(spans(BulkheadTracing.SPAN)).isEmpty();
  }

  /**
   * A call queued by {@code submit} ends its wait on the compartment's thread, away from its
   * caller's trace: it makes no span, and its caller's next refusal is still a span of its own.
   */
  @Test
  void anAsyncWait_makesNoSpan_andLeavesNothingBehindForTheCallersNextCall() throws Exception {
    Bulkhead llm =
        Bulkhead.builder("llm")
            .limit(1)
            .maxQueue(1)
            .maxWait(Duration.ofSeconds(30))
            .listener(tracing)
            .build();
    Permit held = llm.tryAcquire().orElseThrow();
    CompletableFuture<CompletableFuture<Object>> queued = new CompletableFuture<>();
    request(
            "GET /chat",
            () -> {
              queued.complete(llm.submit(() -> CompletableFuture.completedFuture(null)));
              // the queue is full now: refused at once, on this thread, after its own queueing
              assertThatThrownBy(() -> llm.call(() -> null))
                  .isInstanceOf(BulkheadFullException.class);
            })
        .get(30, TimeUnit.SECONDS);
    held.close();
    queued.get().get(30, TimeUnit.SECONDS);

    List<SpanData> waits = spans(BulkheadTracing.SPAN);
    assertThat(waits).hasSize(1);
    assertThat(tag(waits.get(0), BulkheadTracing.REASON_TAG)).isEqualTo("queue_full");
    assertThat(tag(waits.get(0), BulkheadTracing.WAIT_TAG)).isEqualTo("0.000");
  }

  @Test
  void attachedToARegistry_followsItsCompartments_untilClosed() throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    Bulkhead before = registry.register(Bulkhead.builder("before").limit(1).maxQueue(0).build());
    BulkheadTracing.Attachment attached = tracing.attachTo(registry);
    Bulkhead after = registry.register(Bulkhead.builder("after").limit(1).maxQueue(0).build());
    Permit b = before.tryAcquire().orElseThrow();
    Permit a = after.tryAcquire().orElseThrow();
    refuseInRequest(before);
    refuseInRequest(after);
    assertThat(spans(BulkheadTracing.SPAN))
        .extracting(s -> tag(s, BulkheadTracing.NAME_TAG))
        .containsExactlyInAnyOrder("before", "after");

    registry.remove("after");
    refuseInRequest(after);
    attached.close();
    refuseInRequest(before);
    assertThat(spans(BulkheadTracing.SPAN)).hasSize(2);
    a.close();
    b.close();
  }

  private void refuseInRequest(Bulkhead b) throws Exception {
    request(
            "GET /" + b.name(),
            () ->
                assertThatThrownBy(() -> b.call(() -> null))
                    .isInstanceOf(BulkheadFullException.class))
        .get(30, TimeUnit.SECONDS);
  }

  /** The spans as a tree, children under their parent, in start order; for the test's output. */
  static String tree(List<SpanData> spans) {
    StringBuilder out = new StringBuilder();
    List<SpanData> sorted =
        spans.stream().sorted(Comparator.comparingLong(SpanData::getStartEpochNanos)).toList();
    long origin = sorted.isEmpty() ? 0 : sorted.get(0).getStartEpochNanos();
    for (SpanData root : sorted) {
      if (!root.getParentSpanContext().isValid()) {
        print(root, sorted, origin, 0, out);
      }
    }
    return out.toString();
  }

  private static void print(
      SpanData span, List<SpanData> all, long origin, int depth, StringBuilder out) {
    out.append("  ".repeat(depth))
        .append(depth == 0 ? "" : "└─ ")
        .append(span.getName())
        .append(
            String.format(
                Locale.ROOT,
                "  [%.1f ms .. %.1f ms]",
                (span.getStartEpochNanos() - origin) / 1e6,
                (span.getEndEpochNanos() - origin) / 1e6));
    span.getAttributes()
        .forEach((k, v) -> out.append(' ').append(k.getKey()).append('=').append(v));
    out.append('\n');
    for (SpanData child : all) {
      if (child.getParentSpanId().equals(span.getSpanId())) {
        print(child, all, origin, depth + 1, out);
      }
    }
  }
}
