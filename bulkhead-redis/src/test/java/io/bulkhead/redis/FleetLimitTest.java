package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Permit;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Two processes that disagree on a compartment's limit, as in a rolling deploy, on the Redis at
 * 127.0.0.1:6379: the latest build or setLimit sets the fleet's one limit. Two RedisCompartments in
 * one JVM stand for the two processes; the calls they run together are the oracle.
 */
class FleetLimitTest {

  private static final String REDIS = "redis://127.0.0.1:6379";
  private static final Duration CALL = Duration.ofSeconds(5);

  private static RedisCompartments connect() {
    return RedisCompartments.settings()
        .leaseTtl(Duration.ofSeconds(10))
        .rebalanceInterval(Duration.ofMillis(100))
        .connect(REDIS);
  }

  @Test
  void theLatestBuildSetsTheFleetsLimitAndTheOtherProcessWarnsOnce() throws Exception {
    String name = "limit-" + UUID.randomUUID();
    try (LogCapture log = LogCapture.library();
        RedisCompartments oldProcess = connect();
        RedisCompartments newProcess = connect()) {
      FleetBulkhead old = oldProcess.builder(name).limit(6).maxCallDuration(CALL).build();
      Deque<Permit> oldHeld = new ArrayDeque<>();
      for (int i = 0; i < 5; i++) {
        oldHeld.push(old.tryAcquire().orElseThrow());
      }
      assertThat(storedLimit(name)).isEqualTo("6");

      // The new build says 4, and is the latest: the fleet's limit is 4 from now on.
      FleetBulkhead fresh = newProcess.builder(name).limit(4).maxCallDuration(CALL).build();
      assertThat(storedLimit(name)).isEqualTo("4");
      assertThat(fresh.tryAcquire()).as("5 run, the fleet's limit is 4").isEmpty();
      // The old process learns it at its next sync, and from then on admits nothing while the
      // fleet runs more than 4: its calls drain.
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> old.fleetStats().leaseSlots() < 5);
      assertThat(old.tryAcquire()).as("the old process admits against 4 too, not its 6").isEmpty();
      assertThat(log.warningsContaining("limit is 6 but the fleet's limit is 4"))
          .as("one warning naming both values, however often it is seen")
          .hasSize(1);

      oldHeld.pop().close();
      oldHeld.pop().close(); // 3 run
      Permit freshOne = takeOnce(fresh); // 4 run, once the old process gave a slot back
      assertThat(running(old, fresh)).as("never more than the latest-written limit").isEqualTo(4);
      assertThat(old.tryAcquire()).isEmpty();
      assertThat(fresh.tryAcquire()).isEmpty();
      assertThat(running(old, fresh)).isEqualTo(4);

      // setLimit is a write too: the old process raises it to 5, the latest word again.
      old.setLimit(5);
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> "5".equals(storedLimit(name)));
      Permit oldFourth = takeOnce(old);
      assertThat(running(old, fresh)).isEqualTo(5);
      assertThat(fresh.tryAcquire()).as("5 run, the fleet's limit is 5").isEmpty();
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> log.warningsContaining("limit is 4 but the fleet's limit is 5").size() == 1);

      // A store that lost the key (a restart without its data) gets a syncing process's own back.
      redis(c -> c.del(LettuceLeaseStore.limitKey(name)));
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> storedLimit(name) != null);
      assertThat(storedLimit(name)).isIn("4", "5");

      freshOne.close();
      oldFourth.close();
      oldHeld.forEach(Permit::close);
      assertThat(old.stats().inFlight()).isZero();
      assertThat(fresh.stats().inFlight()).isZero();
    }
  }

  /** A permit of {@code b} once the fleet has given it a free slot (empty attempts before). */
  private static Permit takeOnce(FleetBulkhead b) {
    AtomicReference<Permit> taken = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(10))
        .until(
            () -> {
              b.tryAcquire().ifPresent(taken::set);
              return taken.get() != null;
            });
    return taken.get();
  }

  private static int running(FleetBulkhead... compartments) {
    int n = 0;
    for (FleetBulkhead b : compartments) {
      n += b.stats().inFlight();
    }
    return n;
  }

  private static String storedLimit(String name) {
    return redis(c -> c.get(LettuceLeaseStore.limitKey(name)));
  }

  private static <T> T redis(Function<RedisCommands<String, String>, T> command) {
    RedisClient client = RedisClient.create(RedisURI.create(REDIS));
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      return command.apply(c.sync());
    } finally {
      client.shutdown();
    }
  }
}
