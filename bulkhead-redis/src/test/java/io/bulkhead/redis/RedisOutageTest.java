package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Permit;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Redis down at start, and Redis restarted without its data mid-run, on servers of the test's own.
 */
class RedisOutageTest {

  private static final Duration TTL = Duration.ofMillis(1000);
  private static final Duration POLL = Duration.ofMillis(100);
  private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);

  private static RedisCompartments connect(String uri) {
    return RedisCompartments.settings()
        .leaseTtl(TTL)
        .pollInterval(POLL)
        .commandTimeout(COMMAND_TIMEOUT)
        .connect(uri);
  }

  @Test
  void startsWithRedisDownAndAdmitsUpToTheLocalShare() throws Exception {
    int port = RedisServerProcess.freePort(); // nothing listens there
    try (RedisCompartments fleet = connect("redis://127.0.0.1:" + port)) {
      FleetBulkhead shared = fleet.builder("llm").limit(5).fallbackToLocalShare(2).build();
      FleetBulkhead closed = fleet.builder("payments").limit(5).failClosed().build();
      assertThat(shared.fleetStats().inFallback()).isTrue();

      Permit first = shared.tryAcquire().orElseThrow();
      Permit second = shared.tryAcquire().orElseThrow();
      assertThat(shared.tryAcquire()).as("beyond the local share").isEmpty();
      assertThat(closed.tryAcquire()).as("fail closed").isEmpty();

      FleetStats stats = shared.fleetStats();
      assertThat(stats.fallbackInFlight()).isEqualTo(2);
      assertThat(stats.leasesHeld()).isZero();
      assertThat(stats.refusedByFallback()).isEqualTo(1);
      assertThat(stats.fallbackSwitches()).as("switched once, logged once").isEqualTo(1);
      assertThat(closed.fleetStats().refusedByFallback()).isEqualTo(1);
      first.close();
      second.close();
      assertThat(shared.fleetStats().fallbackInFlight()).isZero();
      assertThat(shared.stats().inFlight()).isZero();
    }
  }

  @Test
  void redisRestartedWithoutItsDataLosesNothingAndLeaksNothing() throws Exception {
    String name = "llm";
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start();
        RedisCompartments fleet = connect(redis.uri())) {
      FleetBulkhead llm = fleet.builder(name).limit(5).fallbackToLocalShare(1).build();
      Permit a = llm.tryAcquire().orElseThrow();
      Permit b = llm.tryAcquire().orElseThrow();
      assertThat(llm.fleetStats().leasesHeld()).isEqualTo(2);
      assertThat(leasesInRedis(redis, name)).isEqualTo(2);

      redis.stop(); // SIGKILL, no persistence: the leases, the epoch and the script cache are gone
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(POLL)
          .until(
              () -> {
                Optional<Permit> p = llm.tryAcquire();
                p.ifPresent(Permit::close);
                return llm.fleetStats().inFallback();
              });
      Permit c = llm.tryAcquire().orElseThrow(); // the local share of 1
      assertThat(llm.fleetStats().fallbackInFlight()).isEqualTo(1);
      assertThat(llm.tryAcquire()).as("beyond the local share").isEmpty();

      redis.start(); // same port, empty
      // The renewal registers the two calls still running under the new epoch (after NOSCRIPT).
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(POLL)
          .until(() -> leasesInRedis(redis, name) == 2);
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(POLL)
          .until(
              () -> {
                Optional<Permit> p = llm.tryAcquire();
                p.ifPresent(Permit::close);
                return p.isPresent() && !llm.fleetStats().inFallback();
              });
      FleetStats stats = llm.fleetStats();
      System.out.println("Redis restarted without its data: " + stats);
      assertThat(stats.scriptReloads()).as("NOSCRIPT answered by EVAL").isPositive();
      assertThat(stats.fallbackSwitches()).isEqualTo(1);
      assertThat(stats.leasesHeld()).isEqualTo(2);

      a.close();
      b.close();
      c.close();
      assertThat(leasesInRedis(redis, name)).as("nothing leaks in Redis").isZero();
      stats = llm.fleetStats();
      assertThat(stats.leasesHeld()).isZero();
      assertThat(stats.fallbackInFlight()).isZero();
      assertThat(llm.stats().inFlight()).isZero();
      List<Permit> all = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        all.add(llm.tryAcquire().orElseThrow());
      }
      assertThat(llm.tryAcquire()).as("the whole limit, and no more").isEmpty();
      all.forEach(Permit::close);
    }
  }

  @Test
  void keepsTheStaticShareForOneLeaseTtlAfterRedisReturns() throws Exception {
    String name = "llm";
    Duration ttl = Duration.ofSeconds(3); // the window the test's admissions must fall into
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start();
        RedisCompartments fleet =
            RedisCompartments.settings()
                .leaseTtl(ttl)
                .pollInterval(POLL)
                .commandTimeout(COMMAND_TIMEOUT)
                .connect(redis.uri())) {
      FleetBulkhead llm = fleet.builder(name).limit(5).fallbackToLocalShare(2).build();
      Permit running = llm.tryAcquire().orElseThrow();

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
      Permit duringOutage = llm.tryAcquire().orElseThrow();

      redis.start(); // empty: the running call's lease is gone until this process registers it
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(POLL)
          .until(() -> leasesInRedis(redis, name) == 1);
      Permit afterReturn = llm.tryAcquire().orElseThrow();
      FleetStats rejoining = llm.fleetStats();
      assertThat(rejoining.fallbackInFlight())
          .as("admitted by the share, not by a lease")
          .isEqualTo(2);
      assertThat(rejoining.leasesHeld()).isEqualTo(1);
      assertThat(rejoining.inFallback()).isTrue();
      assertThat(leasesInRedis(redis, name)).isEqualTo(1);
      assertThat(llm.tryAcquire()).as("the share of 2 is taken").isEmpty();

      await()
          .atMost(ttl.multipliedBy(3))
          .pollInterval(POLL)
          .until(
              () -> {
                Optional<Permit> p = llm.tryAcquire();
                p.ifPresent(Permit::close);
                return p.isPresent() && !llm.fleetStats().inFallback();
              });
      assertThat(llm.fleetStats().fallbackSwitches()).as("one outage, one switch").isEqualTo(1);
      running.close();
      duringOutage.close();
      afterReturn.close();
      assertThat(leasesInRedis(redis, name)).isZero();
      assertThat(llm.fleetStats().fallbackInFlight()).isZero();
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
      FleetBulkhead llm = fleet.builder("llm").limit(5).build();
      assertThat(llm.fleetStats().inFallback()).isFalse();
    }
    assertThatThrownBy(() -> RedisCompartments.settings().connectTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("connectTimeout must be positive but was PT0S");
  }

  private static long leasesInRedis(RedisServerProcess redis, String name) {
    RedisClient client = RedisClient.create(redis.uri());
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      return c.sync().zcard(LettuceLeaseStore.leasesKey(name));
    } finally {
      client.shutdown();
    }
  }
}
