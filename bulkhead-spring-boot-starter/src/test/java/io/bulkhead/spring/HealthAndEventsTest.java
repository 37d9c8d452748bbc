package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Permit;
import io.bulkhead.insight.Diagnosis;
import io.bulkhead.insight.Insight;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code bulkheads} health component and the recent rejections, on a registry and an insight
 * driven by the test: the diagnosis by a fake ticker, the rejections by a fake clock.
 */
class HealthAndEventsTest {

  private final AtomicLong nanos = new AtomicLong();
  private final BulkheadRegistry registry = BulkheadRegistry.create();
  private final Insight insight = Insight.builder().ticker(nanos::get).build();

  {
    registry.register(Bulkhead.builder("llm").limit(1).build());
    registry.register(Bulkhead.builder("db").limit(4).build());
    insight.watch(registry);
  }

  /** Samples once a second for {@code seconds} seconds of the fake ticker. */
  private void sample(int seconds) {
    for (int i = 0; i < seconds; i++) {
      nanos.addAndGet(Duration.ofSeconds(1).toNanos());
      insight.sample();
    }
  }

  @Test
  void aSaturatedCompartmentIsReportedWithItsStateAndTheComponentStaysUp() {
    Permit held = registry.bulkhead("llm").orElseThrow().tryAcquire().orElseThrow();
    sample(12); // at the limit for every interval of the 10 s window
    assertThat(insight.diagnosis("llm").orElseThrow().state()).isEqualTo(Diagnosis.State.SATURATED);

    Health health = new BulkheadsHealthIndicator(registry, insight, Set.of()).health();
    assertThat(health.getStatus()).isEqualTo(Status.UP);
    @SuppressWarnings("unchecked")
    Map<String, Object> llm = (Map<String, Object>) health.getDetails().get("llm");
    assertThat(llm)
        .containsEntry("state", "SATURATED")
        .containsEntry("limit", 1)
        .containsEntry("inFlight", 1)
        .containsEntry("waiting", 0);
    assertThat((String) llm.get("explanation")).startsWith("saturated: at the limit in 100%");
    @SuppressWarnings("unchecked")
    Map<String, Object> db = (Map<String, Object>) health.getDetails().get("db");
    assertThat(db).containsEntry("state", "HEALTHY").containsEntry("inFlight", 0);

    assertThat(
            new BulkheadsHealthIndicator(registry, insight, Set.of(Diagnosis.State.SATURATED))
                .health()
                .getStatus())
        .as("down-on: saturated")
        .isEqualTo(Status.DOWN);
    assertThat(
            new BulkheadsHealthIndicator(
                    registry, insight, Set.of(Diagnosis.State.DEPENDENCY_DEGRADING))
                .health()
                .getStatus())
        .isEqualTo(Status.UP);
    held.close();
  }

  @Test
  void theRecentRejectionsKeepTheLastOnesInOrderWithTheirReasonAndTime() throws Exception {
    AtomicLong millis = new AtomicLong(1_764_657_000_000L);
    RecentRejections rejections = new RecentRejections(registry, millis::getAndIncrement);
    Bulkhead llm = registry.bulkhead("llm").orElseThrow();
    Permit held = llm.tryAcquire().orElseThrow();
    int refused = RecentRejections.CAPACITY + 5;
    for (int i = 0; i < refused; i++) {
      assertThat(llm.tryAcquire()).isEmpty();
    }
    held.close();

    RecentRejections.Ring ring = rejections.rings().get("llm");
    assertThat(ring.recorded()).isEqualTo(refused);
    List<RecentRejections.Event> events = ring.events();
    assertThat(events).hasSize(RecentRejections.CAPACITY);
    assertThat(events.get(0).number()).as("the oldest kept").isEqualTo(5);
    assertThat(events.get(events.size() - 1).number()).isEqualTo(refused - 1);
    assertThat(events.get(0).toMap())
        .containsExactly(
            Map.entry("time", "2025-12-02T06:30:00.005Z"), Map.entry("reason", "queue_full"));
    assertThat(events)
        .allSatisfy(e -> assertThat(e.reason()).isEqualTo(BulkheadFullException.Reason.QUEUE_FULL));
    assertThat(rejections.rings().get("db").recorded()).isZero();

    // A compartment added later is followed; one removed is forgotten and no longer listened to.
    registry.register(Bulkhead.builder("late").limit(1).build());
    assertThat(rejections.rings()).containsOnlyKeys("llm", "db", "late");
    registry.remove("llm");
    assertThat(rejections.rings()).containsOnlyKeys("db", "late");
    Permit again = llm.tryAcquire().orElseThrow();
    assertThat(llm.tryAcquire()).isEmpty();
    again.close();
    assertThat(ring.recorded()).as("not listening any more").isEqualTo(refused);
    rejections.destroy();
  }
}
