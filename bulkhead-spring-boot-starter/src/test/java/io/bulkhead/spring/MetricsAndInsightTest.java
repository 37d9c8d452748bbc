package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.insight.Insight;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/** Histograms follow Spring Boot's properties; the insight is sampled while the context runs. */
class MetricsAndInsightTest {

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {}

  private static ConfigurableApplicationContext start(String... properties) {
    return new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.NONE)
        .properties(properties)
        .run();
  }

  @Test
  void histogramsAreOffByDefaultAndOnWhenManagementMetricsDistributionAsks() {
    try (ConfigurableApplicationContext off = start("bulkhead.compartments.llm.limit=2")) {
      String scrape = off.getBean(PrometheusMeterRegistry.class).scrape();
      assertThat(scrape)
          .contains("bulkhead_call_duration_seconds_count{name=\"llm\"}")
          .doesNotContain("bulkhead_call_duration_seconds_bucket");
    }
    try (ConfigurableApplicationContext on =
        start(
            "bulkhead.compartments.llm.limit=2",
            "management.metrics.distribution.percentiles-histogram.bulkhead.call.duration=true")) {
      String scrape = on.getBean(PrometheusMeterRegistry.class).scrape();
      assertThat(scrape)
          .contains("bulkhead_call_duration_seconds_bucket{name=\"llm\"")
          .as("only the timer that was asked for")
          .doesNotContain("bulkhead_queue_wait_seconds_bucket");
    }
  }

  private static Stream<Thread> samplers() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("bulkhead-insight"));
  }

  @Test
  void theSamplerFeedsTheInsightOnADaemonThreadUntilTheContextCloses() {
    // Other contexts of this JVM (Spring's test context cache keeps them) have samplers of their
    // own.
    Set<Thread> before = samplers().collect(Collectors.toSet());
    Thread sampler;
    try (ConfigurableApplicationContext context = start("bulkhead.compartments.llm.limit=2")) {
      Insight insight = context.getBean(Insight.class);
      // Advice exists only once a sample was taken: waiting for that event, not for a time.
      await().atMost(Duration.ofSeconds(30)).until(() -> insight.advice("llm").isPresent());
      sampler = samplers().filter(t -> !before.contains(t)).findFirst().orElseThrow();
      assertThat(sampler.isDaemon()).isTrue();
      assertThat(
              context
                  .getBean(io.bulkhead.BulkheadRegistry.class)
                  .bulkhead("llm")
                  .map(Bulkhead::name))
          .hasValue("llm");
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> !sampler.isAlive());
  }
}
