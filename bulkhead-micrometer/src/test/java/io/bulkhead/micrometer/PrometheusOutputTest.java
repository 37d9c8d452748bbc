package io.bulkhead.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Permit;
import io.bulkhead.testing.FakeTicker;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The names a Prometheus user sees, from a real PrometheusMeterRegistry scrape. */
class PrometheusOutputTest {

  @Test
  void scrape_showsEveryMetricWithItsPrometheusName_tags_andTypes() throws Exception {
    FakeTicker ticker = new FakeTicker();
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    BulkheadRegistry registry = BulkheadRegistry.create();
    Bulkhead chat =
        registry.register(
            Bulkhead.builder("chat")
                .limit(2)
                .maxQueue(1)
                .maxWait(Duration.ofMinutes(1))
                .ticker(ticker)
                .build());
    registry.register(Bulkhead.builder("login").limit(8).unboundedQueue().unboundedWait().build());
    BulkheadMetrics.of(registry).bindTo(prometheus);

    CompletableFuture<String> first = new CompletableFuture<>();
    CompletableFuture<String> second = new CompletableFuture<>();
    chat.submit(() -> first);
    chat.submit(() -> second);
    CompletableFuture<String> waiter = chat.submit(() -> CompletableFuture.completedFuture("w"));
    chat.submit(() -> CompletableFuture.completedFuture("x")); // queue full: rejected
    ticker.advance(Duration.ofMillis(250));
    first.complete("done"); // waiter admitted after 250 ms (on the compartment's own thread)
    assertThat(waiter.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("w");
    Permit p = chat.tryAcquire().orElse(null);
    assertThat(p)
        .as("the freed slot went to the waiter, which finished; one slot is free")
        .isNotNull();

    String text = prometheus.scrape();
    Files.createDirectories(Path.of("target"));
    Files.writeString(Path.of("target", "prometheus-scrape.txt"), text, StandardCharsets.UTF_8);

    assertThat(text)
        .contains(
            "# TYPE bulkhead_limit gauge",
            "bulkhead_limit{name=\"chat\"} 2.0",
            "bulkhead_limit{name=\"login\"} 8.0",
            "# TYPE bulkhead_in_flight gauge",
            "bulkhead_in_flight{name=\"chat\"} 2.0",
            "# TYPE bulkhead_waiting gauge",
            "bulkhead_waiting{name=\"chat\"} 0.0",
            "# TYPE bulkhead_max_queue gauge",
            "bulkhead_max_queue{name=\"chat\"} 1.0",
            "bulkhead_max_queue{name=\"login\"} +Inf",
            "# TYPE bulkhead_admitted_total counter",
            "bulkhead_admitted_total{name=\"chat\"} 4.0",
            "# TYPE bulkhead_rejected_total counter",
            "bulkhead_rejected_total{name=\"chat\",reason=\"queue_full\"} 1.0",
            "bulkhead_rejected_total{name=\"chat\",reason=\"wait_timeout\"} 0.0",
            "bulkhead_rejected_total{name=\"chat\",reason=\"interrupted\"} 0.0",
            "# TYPE bulkhead_cancelled_total counter",
            "# TYPE bulkhead_call_duration_seconds histogram",
            "bulkhead_call_duration_seconds_count{name=\"chat\"} 2",
            "bulkhead_call_duration_seconds_sum{name=\"chat\"} 0.25",
            "bulkhead_call_duration_seconds_bucket{name=\"chat\",le=\"+Inf\"} 2",
            "# TYPE bulkhead_queue_wait_seconds histogram",
            "bulkhead_queue_wait_seconds_count{name=\"chat\"} 1",
            "bulkhead_queue_wait_seconds_sum{name=\"chat\"} 0.25");
    // A histogram with buckets between 1 ms and 1 min, so histogram_quantile() works server-side.
    List<String> buckets =
        text.lines()
            .filter(l -> l.startsWith("bulkhead_call_duration_seconds_bucket{name=\"chat\""))
            .toList();
    assertThat(buckets).hasSizeGreaterThan(10);
    assertThat(buckets).anyMatch(l -> l.contains("le=\"0.001\""));
    assertThat(buckets).anyMatch(l -> l.contains("le=\"60.0\""));
    p.close();
    second.complete("done");

    registry.remove("chat");
    assertThat(prometheus.scrape()).doesNotContain("name=\"chat\"").contains("name=\"login\"");
  }
}
