package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.Permit;
import io.bulkhead.redis.micrometer.FleetMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The fleet's meters in a SimpleMeterRegistry, on a redis-server of the test's own that it kills.
 */
class FleetMetricsTest {

  private static final Duration POLL = Duration.ofMillis(100);

  @Test
  void theMetersFollowLeasesTimeoutsAndAFallbackSwitch() throws Exception {
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start()) {
      try (RedisCompartments fleet = connect(redis.uri());
          RedisCompartments other = connect(redis.uri())) {
        FleetBulkhead llm =
            fleet
                .builder("llm")
                .limit(2)
                .maxQueue(1)
                .maxWait(Duration.ofMillis(200))
                .fallbackToLocalShare(1)
                .build();
        FleetBulkhead theirs = other.builder("llm").limit(2).build();
        MeterRegistry registry = new SimpleMeterRegistry();
        FleetMetrics metrics = FleetMetrics.of(llm);
        metrics.bindTo(registry);

        Permit mine = llm.tryAcquire().orElseThrow();
        Permit held = theirs.tryAcquire().orElseThrow(); // the fleet is full
        assertThat(gauge(registry, FleetMetrics.LEASES_HELD)).isEqualTo(1);
        assertThat(gauge(registry, FleetMetrics.IN_FALLBACK)).isZero();
        assertThatThrownBy(llm::acquire)
            .isInstanceOf(BulkheadFullException.class)
            .extracting(e -> ((BulkheadFullException) e).reason())
            .isEqualTo(BulkheadFullException.Reason.WAIT_TIMEOUT);
        assertThat(counter(registry, FleetMetrics.FLEET_TIMEOUTS)).isEqualTo(1);
        mine.close();
        held.close();

        redis.stop();
        await()
            .atMost(Duration.ofSeconds(20))
            .pollInterval(POLL)
            .until(
                () -> {
                  Optional<Permit> p = llm.tryAcquire();
                  p.ifPresent(Permit::close);
                  return llm.fleetStats().inFallback();
                });
        Permit share = llm.tryAcquire().orElseThrow();
        assertThat(llm.tryAcquire()).as("beyond the share of 1").isEmpty();
        assertThat(gauge(registry, FleetMetrics.IN_FALLBACK)).isEqualTo(1);
        assertThat(counter(registry, FleetMetrics.FALLBACK_SWITCHES)).isEqualTo(1);
        assertThat(counter(registry, FleetMetrics.REFUSED_BY_FALLBACK))
            .isEqualTo(llm.fleetStats().refusedByFallback())
            .isPositive();
        assertThat(counter(registry, FleetMetrics.LEASES_LOST)).isZero();
        assertThat(gauge(registry, FleetMetrics.LEASES_HELD)).isZero();
        share.close();

        metrics.close();
        assertThat(registry.getMeters()).as("close() removes every meter").isEmpty();
        assertThatThrownBy(() -> metrics.bindTo(registry))
            .isInstanceOf(IllegalStateException.class)
            .hasMessage(
                "FleetMetrics of compartment 'llm' was closed; create a new one to bind again");
      }
    }
  }

  private static RedisCompartments connect(String uri) {
    return RedisCompartments.settings()
        .leaseTtl(Duration.ofSeconds(5))
        .pollInterval(POLL)
        .commandTimeout(Duration.ofMillis(300))
        .connect(uri);
  }

  private static double gauge(MeterRegistry registry, String name) {
    return registry.get(name).tag("name", "llm").gauge().value();
  }

  private static double counter(MeterRegistry registry, String name) {
    return registry.get(name).tag("name", "llm").functionCounter().count();
  }
}
