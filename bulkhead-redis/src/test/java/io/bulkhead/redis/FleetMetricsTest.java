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
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The fleet's meters in a SimpleMeterRegistry, on a redis-server of the test's own that it kills.
 */
class FleetMetricsTest {

  private static final Duration POLL = Duration.ofMillis(100);
  private static final Duration CALL = Duration.ofMillis(500);

  @Test
  void theMetersFollowTheLeaseTimeoutsAndAFallbackSwitch() throws Exception {
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start()) {
      try (RedisCompartments fleet = connect(redis.uri());
          RedisCompartments other = connect(redis.uri())) {
        FleetBulkhead llm =
            fleet
                .builder("llm")
                .limit(2)
                .maxQueue(1)
                .maxWait(Duration.ofMillis(200))
                .maxCallDuration(CALL)
                .fallbackToLocalShare(1)
                .build();
        MeterRegistry registry = new SimpleMeterRegistry();
        FleetMetrics metrics = FleetMetrics.of(llm);
        metrics.bindTo(registry);
        // A fresh server grants nothing for one term after it started (it cannot tell a first
        // start from a restart that lost calls still running): wait for the whole limit.
        await()
            .atMost(Duration.ofSeconds(20))
            .pollInterval(POLL)
            .until(() -> gauge(registry, FleetMetrics.LEASE_SLOTS) == 2);
        Permit mine = llm.tryAcquire().orElseThrow();
        assertThat(gauge(registry, FleetMetrics.LEASE_IN_USE)).isEqualTo(1);
        assertThat(gauge(registry, FleetMetrics.IN_FALLBACK)).isZero();

        // Another process takes the other slot; this one then has none free: a wait times out.
        FleetBulkhead theirs = other.builder("llm").limit(2).maxCallDuration(CALL).build();
        AtomicReference<Permit> held = new AtomicReference<>();
        await()
            .atMost(Duration.ofSeconds(20))
            .pollInterval(Duration.ofMillis(10))
            .until(
                () -> {
                  theirs.tryAcquire().ifPresent(held::set);
                  return held.get() != null;
                });
        assertThat(gauge(registry, FleetMetrics.LEASE_SLOTS)).isEqualTo(1);
        assertThatThrownBy(llm::acquire)
            .isInstanceOf(BulkheadFullException.class)
            .extracting(e -> ((BulkheadFullException) e).reason())
            .isEqualTo(BulkheadFullException.Reason.WAIT_TIMEOUT);
        assertThat(counter(registry, FleetMetrics.FLEET_TIMEOUTS)).isEqualTo(1);
        held.get().close();

        // Redis goes away: the lease admits for one lease TTL, then the fallback share does.
        redis.stop();
        await()
            .atMost(Duration.ofSeconds(20))
            .pollInterval(POLL)
            .until(() -> gauge(registry, FleetMetrics.IN_FALLBACK) == 1);
        assertThat(counter(registry, FleetMetrics.FALLBACK_SWITCHES)).isEqualTo(1);
        assertThat(gauge(registry, FleetMetrics.LEASE_SLOTS)).isZero();
        assertThat(llm.tryAcquire())
            .as("the share of 1 counts the call still running under the lease")
            .isEmpty();
        assertThat(counter(registry, FleetMetrics.REFUSED_BY_FALLBACK)).isEqualTo(1);
        assertThat(counter(registry, FleetMetrics.LEASES_LOST)).isZero();
        assertThat(counter(registry, FleetMetrics.CALLS_OVERRAN)).isZero();
        mine.close();

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
        .leaseTtl(Duration.ofSeconds(1))
        .rebalanceInterval(POLL)
        .commandTimeout(Duration.ofMillis(300))
        .connectTimeout(Duration.ofSeconds(1))
        .connect(uri);
  }

  private static double gauge(MeterRegistry registry, String name) {
    return registry.get(name).tag("name", "llm").gauge().value();
  }

  private static double counter(MeterRegistry registry, String name) {
    return registry.get(name).tag("name", "llm").functionCounter().count();
  }
}
