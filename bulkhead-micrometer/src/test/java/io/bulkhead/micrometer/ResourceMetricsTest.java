package io.bulkhead.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Bulkhead;
import io.bulkhead.Compartment;
import io.bulkhead.insight.ResourceView;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ResourceMetricsTest {

  private static final List<String> PROCESS_FIGURES =
      List.of(
          "cpuUsedMilli",
          "cpuQuotaMilli",
          "memoryUsedMiB",
          "memoryLimitMiB",
          "restarts",
          "throttledPeriods");

  private final MeterRegistry meters = new SimpleMeterRegistry();
  private final Compartment front = Bulkhead.builder("reports").limit(2).build();

  /** A view whose next answer the test sets, counting how often it is asked. */
  private static final class FakeView implements ResourceView {
    final AtomicReference<Optional<Resource>> next = new AtomicReference<>(Optional.empty());
    final AtomicInteger reads = new AtomicInteger();

    @Override
    public Optional<Resource> of(Compartment compartment) {
      reads.incrementAndGet();
      return compartment.name().equals("reports") ? next.get() : Optional.empty();
    }

    void answer(String kind, long first) {
      Map<String, Long> figures = new LinkedHashMap<>();
      for (int i = 0; i < PROCESS_FIGURES.size(); i++) {
        figures.put(PROCESS_FIGURES.get(i), first + i);
      }
      next.set(Optional.of(new Resource(kind, figures, kind + " from " + first)));
    }
  }

  private double gauge(String meter) {
    return meters.get(meter).tag("name", "reports").tag("kind", "process").gauge().value();
  }

  @Test
  void oneGaugePerFigureNamedInDottedLowerCaseTaggedWithNameAndKind() {
    FakeView view = new FakeView();
    view.answer("process", 100);

    ResourceMetrics.bind(meters, front, view);

    assertThat(meters.getMeters())
        .extracting(m -> m.getId().getName())
        .containsExactlyInAnyOrder(
            "bulkhead.resource.cpu.used.milli", "bulkhead.resource.cpu.quota.milli",
            "bulkhead.resource.memory.used.mib", "bulkhead.resource.memory.limit.mib",
            "bulkhead.resource.restarts", "bulkhead.resource.throttled.periods");
    assertThat(meters.getMeters())
        .allSatisfy(
            m -> {
              assertThat(m).isInstanceOf(Gauge.class);
              assertThat(m.getId().getTag("name")).isEqualTo("reports");
              assertThat(m.getId().getTag("kind")).isEqualTo("process");
            });
  }

  @Test
  void gaugesReadTheViewAtScrapeTimeOncePerScrape() {
    FakeView view = new FakeView();
    view.answer("process", 100);
    ResourceMetrics.bind(meters, front, view);
    int readsAtBind = view.reads.get();

    view.answer("process", 200);
    assertThat(gauge("bulkhead.resource.restarts")).isEqualTo(204);
    assertThat(gauge("bulkhead.resource.cpu.used.milli")).isEqualTo(200);
    assertThat(gauge("bulkhead.resource.throttled.periods")).isEqualTo(205);
    view.answer("process", 300); // taken by the next scrape, not the rest of this one
    assertThat(gauge("bulkhead.resource.memory.used.mib")).isEqualTo(202);
    assertThat(gauge("bulkhead.resource.memory.limit.mib")).isEqualTo(203);
    assertThat(gauge("bulkhead.resource.cpu.quota.milli")).isEqualTo(201);
    assertThat(view.reads.get() - readsAtBind).isEqualTo(1);

    assertThat(gauge("bulkhead.resource.cpu.quota.milli")).isEqualTo(301); // next scrape
    assertThat(gauge("bulkhead.resource.restarts")).isEqualTo(304);
    assertThat(view.reads.get() - readsAtBind).isEqualTo(2);
  }

  @Test
  void aMissingFigureAnEmptyViewOrAnotherKindReadNaNUntilTheyComeBack() {
    FakeView view = new FakeView();
    view.answer("process", 10);
    ResourceMetrics.bind(meters, front, view);

    view.next.set(
        Optional.of(new ResourceView.Resource("process", Map.of("restarts", 7L), "only restarts")));
    assertThat(gauge("bulkhead.resource.restarts")).isEqualTo(7);
    assertThat(gauge("bulkhead.resource.memory.used.mib")).isNaN();

    view.next.set(Optional.empty());
    assertThat(gauge("bulkhead.resource.restarts")).isNaN();

    view.answer("pool", 10);
    assertThat(gauge("bulkhead.resource.restarts")).isNaN();

    view.answer("process", 20);
    assertThat(gauge("bulkhead.resource.restarts")).isEqualTo(24);
  }

  @Test
  void aViewThatKnowsNothingAtBindTimeIsRefusedNamingTheCompartment() {
    FakeView view = new FakeView();

    assertThatThrownBy(() -> ResourceMetrics.bind(meters, front, view))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "the view knows no resource behind compartment 'reports'; bind it to the "
                + "compartment its resource is behind");
    assertThat(meters.getMeters()).isEmpty();
  }

  @Test
  void nullInputIsOneNpeNamingTheParameter() {
    FakeView view = new FakeView();
    view.answer("process", 1);

    assertThatThrownBy(() -> ResourceMetrics.bind(null, front, view))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("registry");
    assertThatThrownBy(() -> ResourceMetrics.bind(meters, null, view))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("compartment");
    assertThatThrownBy(() -> ResourceMetrics.bind(meters, front, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("view");
    assertThat(view.reads.get()).isZero();
  }

  @Test
  void figureNamesThatCollideOrNameNothingAreRefused() {
    FakeView view = new FakeView();
    view.next.set(
        Optional.of(
            new ResourceView.Resource(
                "pool", Map.of("activeCount", 1L, "active_count", 2L), "two names for one gauge")));
    assertThatThrownBy(() -> ResourceMetrics.bind(meters, front, view))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("would both be gauge bulkhead.resource.active.count");

    view.next.set(Optional.of(new ResourceView.Resource("pool", Map.of("--", 1L), "none")));
    assertThatThrownBy(() -> ResourceMetrics.bind(meters, front, view))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("figure name '--' has no letter or digit to name a gauge after");
    assertThat(meters.getMeters()).isEmpty();
  }

  @Test
  void meterNamesSplitCamelCaseCapitalRunsAndKeepBinaryUnitsWhole() {
    assertThat(ResourceMetrics.meterName("cpuUsedMilli"))
        .isEqualTo("bulkhead.resource.cpu.used.milli");
    assertThat(ResourceMetrics.meterName("memoryLimitMiB"))
        .isEqualTo("bulkhead.resource.memory.limit.mib");
    assertThat(ResourceMetrics.meterName("HTTPCode")).isEqualTo("bulkhead.resource.http.code");
    assertThat(ResourceMetrics.meterName("threads_awaiting"))
        .isEqualTo("bulkhead.resource.threads.awaiting");
    assertThat(ResourceMetrics.meterName("p99Millis")).isEqualTo("bulkhead.resource.p99.millis");
    assertThat(ResourceMetrics.meterName("active")).isEqualTo("bulkhead.resource.active");
  }

  @Test
  void closeRemovesTheGaugesOnce() {
    FakeView view = new FakeView();
    view.answer("process", 1);
    ResourceMetrics binding = ResourceMetrics.bind(meters, front, view);
    assertThat(meters.getMeters()).hasSize(PROCESS_FIGURES.size());

    binding.close();
    binding.close();

    assertThat(meters.getMeters()).isEmpty();
  }

  @Test
  void prometheusShowsOneSeriesPerFigure() {
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    FakeView view = new FakeView();
    view.answer("process", 40);
    ResourceMetrics.bind(prometheus, front, view);

    String text = prometheus.scrape();

    assertThat(text)
        .contains("bulkhead_resource_cpu_used_milli{kind=\"process\",name=\"reports\"} 40.0")
        .contains("bulkhead_resource_memory_limit_mib{kind=\"process\",name=\"reports\"} 43.0")
        .contains("bulkhead_resource_throttled_periods{kind=\"process\",name=\"reports\"} 45.0");
  }
}
