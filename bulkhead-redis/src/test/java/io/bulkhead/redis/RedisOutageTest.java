package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Permit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Redis down at start, and Redis killed and restarted without its data mid-run, on servers of the
 * test's own.
 */
class RedisOutageTest {

  // Long enough that no sync on a loaded host misses it while Redis is up; short enough to wait
  // out.
  private static final Duration TTL = Duration.ofSeconds(3);
  private static final Duration POLL = Duration.ofMillis(100);
  private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);
  private static final Duration CALL = Duration.ofMillis(500);

  private static RedisCompartments connect(String uri) {
    return RedisCompartments.settings()
        .leaseTtl(TTL)
        .rebalanceInterval(POLL)
        .commandTimeout(COMMAND_TIMEOUT)
        .connectTimeout(Duration.ofSeconds(1))
        .connect(uri);
  }

  @Test
  void startsWithRedisDownAndAdmitsUpToTheLocalShare() throws Exception {
    int port = RedisServerProcess.freePort(); // nothing listens there
    try (LogCapture log = LogCapture.library();
        RedisCompartments fleet = connect("redis://127.0.0.1:" + port)) {
      FleetBulkhead shared =
          fleet.builder("llm").limit(5).maxCallDuration(CALL).fallbackToLocalShare(2).build();
      FleetBulkhead closed = fleet.builder("payments").limit(5).maxCallDuration(CALL).build();
      assertThat(shared.fleetStats().inFallback()).isTrue();

      Permit first = shared.tryAcquire().orElseThrow();
      Permit second = shared.tryAcquire().orElseThrow();
      assertThat(shared.tryAcquire()).as("beyond the local share").isEmpty();
      assertThat(closed.tryAcquire()).as("fail closed, the default").isEmpty();

      FleetStats stats = shared.fleetStats();
      assertThat(stats.fallbackInFlight()).isEqualTo(2);
      assertThat(stats.leaseInUse()).isZero();
      assertThat(((FleetPermit) first).fencingToken()).as("no lease, no token").isZero();
      assertThat(stats.refusedByFallback()).isEqualTo(1);
      assertThat(stats.fallbackSwitches()).as("switched once").isEqualTo(1);
      assertThat(closed.fleetStats().refusedByFallback()).isEqualTo(1);
      assertThat(log.warningsContaining("compartment 'llm': cannot reach Redis at start-up"))
          .as("logged once")
          .hasSize(1);
      first.close();
      second.close();
      assertThat(shared.fleetStats().fallbackInFlight()).isZero();
      assertThat(shared.stats().inFlight()).isZero();
    }
  }

  @Test
  void aSlotOfTheShareTakenWhenTheLocalLimitHasNoneIsGivenBackUnused() throws Exception {
    int port = RedisServerProcess.freePort(); // nothing listens there
    try (RedisCompartments fleet = connect("redis://127.0.0.1:" + port)) {
      FleetBulkhead shared =
          fleet.builder("llm").limit(3).maxCallDuration(CALL).fallbackToLocalShare(3).build();
      assertThat(shared.fleetStats().inFallback()).isTrue();
      shared.setLimit(1); // the local limit at once; the share stays 3 while Redis is away
      Permit held = shared.tryAcquire().orElseThrow();

      // A call admitted at once takes the share's slot first, then the local limit's: none free.
      assertThat(shared.tryAcquire()).as("the local limit is 1").isEmpty();
      FleetStats stats = shared.fleetStats();
      assertThat(stats.fallbackInFlight()).as("the share's slot was given back").isEqualTo(1);
      assertThat(stats.refusedByFallback()).as("the share had room").isZero();
      assertThat(shared.stats().rejected()).as("refused by the local limit").isEqualTo(1);
      assertThat(shared.stats().admitted()).isEqualTo(1);

      held.close();
      assertThat(shared.fleetStats().fallbackInFlight()).isZero();
      try (Permit next = shared.tryAcquire().orElseThrow()) {
        assertThat(shared.fleetStats().fallbackInFlight()).isEqualTo(1);
      }
      assertThat(shared.stats().inFlight()).isZero();
      assertThat(shared.stats().completed()).isEqualTo(2);
    }
  }

  @Test
  void aKilledRedisIsCoveredForOneLeaseTtlThenTheShareAdmitsAndAnEmptyRestartHoldsGrowthOneTerm()
      throws Exception {
    String name = "llm";
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start();
        LogCapture log = LogCapture.library();
        RedisCompartments fleet = connect(redis.uri())) {
      FleetBulkhead llm =
          fleet.builder(name).limit(5).maxCallDuration(CALL).fallbackToLocalShare(1).build();
      awaitSlots(llm, 5); // a fresh server grants nothing for one term after it started
      Permit a = llm.tryAcquire().orElseThrow();
      Permit b = llm.tryAcquire().orElseThrow();
      long tokenBefore = ((FleetPermit) a).fencingToken();
      assertThat(tokenBefore).isPositive();

      redis.stop(); // SIGKILL, no persistence: the records, the epoch and the script cache are gone
      // The lease still covers calls for a lease TTL after its last sync: Redis is not asked.
      Permit c = llm.tryAcquire().orElseThrow();
      assertThat(llm.fleetStats().inFallback()).isFalse();
      await().atMost(TTL.multipliedBy(5)).pollInterval(POLL).until(() -> inFallback(llm));
      assertThat(llm.fleetStats().fallbackSwitches()).isEqualTo(1);
      assertThat(log.warningsContaining("no sync with Redis succeeded for a whole lease TTL"))
          .as("the lapse, logged once")
          .hasSize(1);
      assertThat(llm.tryAcquire())
          .as("the share of 1 counts the 3 calls still running under the lease")
          .isEmpty();
      a.close();
      b.close();
      c.close();
      Permit d = llm.tryAcquire().orElseThrow(); // the share of 1
      assertThat(llm.fleetStats().fallbackInFlight()).isEqualTo(1);
      assertThat(llm.tryAcquire()).as("beyond the share").isEmpty();

      redis.start(); // same port, empty
      // The next sync meets a new epoch: the call still running is registered again, and Redis
      // grants nothing new for one term (TTL + maxCallDuration) after its restart.
      await().atMost(Duration.ofSeconds(20)).pollInterval(POLL).until(() -> !inFallback(llm));
      FleetStats back = llm.fleetStats();
      System.out.println("Redis restarted without its data: " + back);
      assertThat(back.leasesLost()).as("the record, lost with the data").isEqualTo(1);
      assertThat(log.warningsContaining("Redis lost the fleet's state")).hasSize(1);
      assertThat(slotsInRedis(redis, name)).as("the running call, registered again").isEqualTo(1);
      assertThat(back.scriptReloads()).as("NOSCRIPT answered by EVAL").isPositive();
      if (back.learning()) {
        assertThat(back.leaseSlots()).as("no growth while Redis learns").isLessThanOrEqualTo(1);
      }
      awaitSlots(llm, 5);
      d.close();
      List<Permit> all = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        all.add(llm.tryAcquire().orElseThrow());
      }
      assertThat(llm.tryAcquire()).as("the whole limit, and no more").isEmpty();
      assertThat(((FleetPermit) all.get(0)).fencingToken())
          .as("tokens keep growing after Redis lost its counter")
          .isGreaterThan(tokenBefore);
      assertThat(slotsInRedis(redis, name)).isEqualTo(5);
      all.forEach(Permit::close);
      assertThat(llm.fleetStats().fallbackSwitches()).as("one outage, one switch").isEqualTo(1);
      assertThat(llm.stats().inFlight()).isZero();
    }
  }

  @Test
  void connectingGetsItsOwnTimeoutLongerThanACommands() throws Exception {
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start();
        RedisCompartments fleet =
            RedisCompartments.settings().commandTimeout(Duration.ofNanos(1)).connect(redis.uri())) {
      // No connection opens in a nanosecond; the default connect timeout lets it, and only the
      // commands after it are held to the command timeout.
      assertThat(fleet.connected()).isTrue();
    }
    assertThatThrownBy(() -> RedisCompartments.settings().connectTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("connectTimeout must be positive but was PT0S");
    assertThatThrownBy(
            () ->
                RedisCompartments.settings()
                    .leaseTtl(Duration.ofSeconds(1))
                    .rebalanceInterval(Duration.ofMillis(500))
                    .connect("redis://127.0.0.1:1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "leaseTtl 1000 ms must be at least three rebalanceInterval (500 ms)");
  }

  private static boolean inFallback(FleetBulkhead b) {
    return b.fleetStats().inFallback();
  }

  static void awaitSlots(FleetBulkhead b, int slots) {
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(POLL)
        .until(() -> b.fleetStats().leaseSlots() == slots);
  }

  static long slotsInRedis(RedisServerProcess redis, String name) throws Exception {
    String reply = redis.command("EVAL", SUM_HELD, "1", LettuceLeaseStore.heldKey(name));
    return Long.parseLong(reply.replace(":", ""));
  }

  private static final String SUM_HELD =
      "local s = 0 for _, v in ipairs(redis.call('HVALS', KEYS[1])) do s = s + tonumber(v) end"
          + " return s";
}
