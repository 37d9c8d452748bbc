package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Permit;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Two processes that disagree on a compartment's limit, as in a rolling deploy, on the Redis at
 * 127.0.0.1:6379: the latest build or setLimit sets the fleet's one limit. Two RedisCompartments in
 * one JVM stand for the two processes; Redis's own count of leases is the oracle.
 */
class FleetLimitTest {

  private static final String REDIS = "redis://127.0.0.1:6379";

  private static RedisCompartments connect() {
    return RedisCompartments.settings()
        .leaseTtl(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(100))
        .connect(REDIS);
  }

  @Test
  void theLatestBuildSetsTheFleetsLimitAndTheOtherProcessWarnsOnce() throws Exception {
    String name = "limit-" + UUID.randomUUID();
    try (LogCapture log = LogCapture.library();
        RedisCompartments oldProcess = connect();
        RedisCompartments newProcess = connect()) {
      FleetBulkhead old = oldProcess.builder(name).limit(6).build();
      Deque<Permit> oldHeld = new ArrayDeque<>();
      for (int i = 0; i < 5; i++) {
        oldHeld.push(old.tryAcquire().orElseThrow());
      }
      assertThat(storedLimit(name)).isEqualTo("6");

      // The new build says 4, and is the latest: the fleet's limit is 4 from now on.
      FleetBulkhead fresh = newProcess.builder(name).limit(4).build();
      assertThat(storedLimit(name)).isEqualTo("4");
      assertThat(fresh.tryAcquire()).as("5 held, the fleet's limit is 4").isEmpty();
      assertThat(old.tryAcquire()).as("the old process admits against 4 too, not its 6").isEmpty();
      assertThat(old.tryAcquire()).isEmpty();
      assertThat(leases(name)).as("granted before the limit went down: they drain").isEqualTo(5);
      assertThat(log.warningsContaining("limit is 6 but the fleet's limit is 4"))
          .as("one warning naming both values, however often it is seen")
          .hasSize(1);

      oldHeld.pop().close();
      oldHeld.pop().close(); // 3 held
      Permit freshOne = fresh.tryAcquire().orElseThrow(); // 4 held
      assertThat(old.tryAcquire()).isEmpty();
      assertThat(fresh.tryAcquire()).isEmpty();
      assertThat(leases(name)).as("never more than the latest-written limit").isEqualTo(4);

      // setLimit is a write too: the old process raises it to 5, the latest word again.
      old.setLimit(5);
      assertThat(storedLimit(name)).isEqualTo("5");
      Permit oldFourth = old.tryAcquire().orElseThrow();
      assertThat(fresh.tryAcquire()).as("5 held, the fleet's limit is 5").isEmpty();
      assertThat(leases(name)).isEqualTo(5);
      assertThat(log.warningsContaining("limit is 4 but the fleet's limit is 5"))
          .as("now the other process disagrees, and says so once")
          .hasSize(1);

      // A store that lost the key (a restart without its data) takes the admitting process's limit.
      redis(c -> c.del(LettuceLeaseStore.limitKey(name)));
      freshOne.close(); // 4 held
      assertThat(fresh.tryAcquire()).as("the fleet's limit is 4 again: fresh wrote it").isEmpty();
      assertThat(storedLimit(name)).isEqualTo("4");

      oldFourth.close();
      oldHeld.forEach(Permit::close);
      assertThat(leases(name)).isZero();
      assertThat(old.stats().inFlight()).isZero();
      assertThat(fresh.stats().inFlight()).isZero();
    } finally {
      redis(
          c ->
              c.del(
                  LettuceLeaseStore.leasesKey(name),
                  LettuceLeaseStore.fenceKey(name),
                  LettuceLeaseStore.epochKey(name),
                  LettuceLeaseStore.limitKey(name)));
    }
  }

  private static String storedLimit(String name) {
    return redis(c -> c.get(LettuceLeaseStore.limitKey(name)));
  }

  private static long leases(String name) {
    return redis(c -> c.zcard(LettuceLeaseStore.leasesKey(name)));
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
