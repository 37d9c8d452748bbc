package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Permit;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults of the Redis itself, on servers of the test's own: a restart that keeps its data, a script
 * cache flushed under a running fleet, a wrong password, a URI that is not one.
 */
class RedisFaultsTest {

  // Long enough that the leases of the running calls outlive the outage (no renewal reaches Redis
  // while it is down): the restart is then one that lost nothing.
  private static final Duration TTL = Duration.ofSeconds(6);
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
  void redisRestartedWithItsDataGoesBackToLeasesAtOnceAndLeaksNothing(@TempDir Path dir)
      throws Exception {
    String name = "llm";
    try (RedisServerProcess redis =
            RedisServerProcess.persistent(RedisServerProcess.freePort(), dir).start();
        LogCapture log = LogCapture.library();
        RedisCompartments fleet = connect(redis.uri())) {
      FleetBulkhead llm = fleet.builder(name).limit(5).fallbackToLocalShare(1).build();
      Permit a = llm.tryAcquire().orElseThrow();
      Permit b = llm.tryAcquire().orElseThrow();
      String epochBefore = redisCall(redis, c -> c.get(LettuceLeaseStore.epochKey(name)));
      assertThat(leasesInRedis(redis, name)).isEqualTo(2);

      long killedAt = System.nanoTime();
      redis.stop(); // SIGKILL; every write was fsynced to the append-only file before its reply
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(POLL)
          .until(
              () -> {
                Optional<Permit> p = llm.tryAcquire();
                p.ifPresent(Permit::close);
                return llm.fleetStats().inFallback();
              });
      long fallbackAfter = (System.nanoTime() - killedAt) / 1_000_000;
      Permit c = llm.tryAcquire().orElseThrow(); // the local share of 1
      assertThat(llm.tryAcquire()).as("beyond the local share").isEmpty();
      assertThat(llm.fleetStats().fallbackInFlight()).isEqualTo(1);

      redis.start(); // same port, same directory: it loads its append-only file
      long restartedAt = System.nanoTime();
      String epochAfter = redisCall(redis, cmd -> cmd.get(LettuceLeaseStore.epochKey(name)));
      assertThat(epochAfter).as("the same state, so the same epoch").isEqualTo(epochBefore);
      assertThat(leasesInRedis(redis, name)).as("the running calls' leases came back").isEqualTo(2);
      // The first acquire that reaches Redis ends the fallback: same epoch, no rejoin window. The
      // share is full (c), so a permit now can only be a lease.
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(POLL)
          .until(
              () -> {
                Optional<Permit> p = llm.tryAcquire();
                p.ifPresent(Permit::close);
                return p.isPresent();
              });
      long globalAfter = (System.nanoTime() - restartedAt) / 1_000_000;
      assertThat(log.warningsContaining("for one lease TTL")).as("no rejoin window").isEmpty();
      FleetStats stats = llm.fleetStats();
      assertThat(stats.inFallback()).isFalse();
      System.out.println(
          "Redis restarted with its data: fallback "
              + fallbackAfter
              + " ms after the kill, leases again "
              + globalAfter
              + " ms after the restart; "
              + stats);
      assertThat(stats.fallbackSwitches()).as("one outage, one switch").isEqualTo(1);
      assertThat(stats.leasesLost()).as("nothing expired: the leases outlived the outage").isZero();
      assertThat(stats.leasesHeld()).isEqualTo(2);
      assertThat(log.warningsContaining("cannot reach Redis"))
          .as("the switch, logged once")
          .hasSize(1);
      assertThat(log.warningsContaining("lost its leases")).as("no new epoch was seen").isEmpty();

      c.close(); // the share's call ends: the whole limit is leases again
      assertThat(llm.fleetStats().fallbackInFlight()).isZero();
      List<Permit> more = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        more.add(llm.tryAcquire().orElseThrow());
      }
      assertThat(leasesInRedis(redis, name)).isEqualTo(5);
      assertThat(llm.tryAcquire()).as("the limit").isEmpty();
      a.close();
      b.close();
      more.forEach(Permit::close);
      assertThat(leasesInRedis(redis, name)).as("nothing leaks in Redis").isZero();
      assertThat(llm.fleetStats().leasesHeld()).isZero();
      assertThat(llm.fleetStats().fallbackInFlight()).isZero();
      assertThat(llm.stats().inFlight()).isZero();
    }
  }

  @Test
  void aScriptCacheFlushedUnderARunningFleetIsLoadedAgainByTheNextCall() throws Exception {
    String name = "llm";
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start();
        RedisCompartments fleet = connect(redis.uri())) {
      FleetBulkhead llm = fleet.builder(name).limit(2).build();
      Permit running = llm.tryAcquire().orElseThrow(); // the acquire script is loaded
      long reloadsBefore = llm.fleetStats().scriptReloads();

      String flushed = redisCall(redis, RedisCommands::scriptFlush);
      assertThat(flushed).isEqualTo("OK");
      Permit next = llm.tryAcquire().orElseThrow(); // NOSCRIPT, then EVAL
      // The renewal of `running` (every third of the TTL) may also meet the flushed cache first,
      // and
      // reload its own script: once per flush at most, since it is loaded again then.
      assertThat(llm.fleetStats().scriptReloads()).isBetween(reloadsBefore + 1, reloadsBefore + 2);
      assertThat(llm.fleetStats().inFallback()).as("NOSCRIPT is not an outage").isFalse();
      assertThat(leasesInRedis(redis, name)).isEqualTo(2);
      assertThat(llm.tryAcquire()).as("the limit still holds").isEmpty();

      redisCall(redis, RedisCommands::scriptFlush);
      running.close(); // the release script, flushed too
      next.close();
      assertThat(leasesInRedis(redis, name)).as("both released, nothing leaks").isZero();
      assertThat(llm.fleetStats().scriptReloads())
          .as("the release script once, the renewal's at most" + " once per flush")
          .isBetween(reloadsBefore + 2, reloadsBefore + 4);
      assertThat(llm.fleetStats().fallbackSwitches()).isZero();
    }
  }

  @Test
  void aWrongPasswordStartsTheServiceInFallbackWithOneLineThatNeverShowsThePassword()
      throws Exception {
    String serverPassword = "server-pass-5f1c";
    String wrongPassword = "wrong-pass-9a7e";
    int port = RedisServerProcess.freePort();
    try (RedisServerProcess redis =
            new RedisServerProcess(port, "--requirepass", serverPassword).start();
        LogCapture library = LogCapture.library();
        LogCapture everything = LogCapture.everything()) {
      try (RedisCompartments fleet = connect("redis://" + wrongPassword + "@127.0.0.1:" + port)) {
        FleetBulkhead llm = fleet.builder("llm").limit(4).fallbackToLocalShare(1).build();
        assertThat(llm.fleetStats().inFallback()).as("started, and sheds by its share").isTrue();
        Permit p = llm.tryAcquire().orElseThrow();
        assertThat(llm.tryAcquire()).isEmpty();
        p.close();
        assertThat(fleet.connected()).isFalse();
      }
      List<String> lines = library.warningsContaining("127.0.0.1:" + port);
      System.out.println("wrong password: " + lines);
      assertThat(lines).as("one line names the server, and why").hasSize(1);
      assertThat(lines.get(0)).contains("WRONGPASS").doesNotContain("\n");
      assertThat(library.allText())
          .as("no line of ours, at any level, shows a password")
          .noneMatch(line -> line.contains(wrongPassword) || line.contains(serverPassword));
      // Lettuce's own DEBUG/TRACE protocol log prints commands as sent, AUTH included (the README
      // says so); at INFO and above, what a default set-up shows, it never does.
      assertThat(everything.allText(java.util.logging.Level.INFO))
          .as("no log line at INFO or above, or its exception, shows a password")
          .noneMatch(line -> line.contains(wrongPassword) || line.contains(serverPassword));

      try (RedisCompartments fleet = connect("redis://" + serverPassword + "@127.0.0.1:" + port)) {
        FleetBulkhead llm = fleet.builder("llm").limit(4).build();
        assertThat(llm.fleetStats().inFallback()).as("the right password connects").isFalse();
        llm.tryAcquire().orElseThrow().close();
      }
    }
  }

  @Test
  void aUriThatIsNotOneIsRefusedInOneLineNamingTheFieldWithThePasswordMasked() {
    assertThatThrownBy(() -> RedisCompartments.connect("redis://:pass-3b8d@127.0.0.1:notaport"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "uri is not a Redis URI (redis://[password@]host:port[/database]):"
                + " 'redis://***@127.0.0.1:notaport'")
        .hasNoCause();
    assertThatThrownBy(() -> RedisCompartments.connect("http://127.0.0.1:6379"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "uri is not a Redis URI (redis://[password@]host:port[/database]):"
                + " 'http://127.0.0.1:6379'");
    assertThatThrownBy(() -> RedisCompartments.connect("redis://secret@"))
        .isInstanceOf(IllegalArgumentException.class)
        .message()
        .doesNotContain("secret")
        .startsWith("uri ");
  }

  private static long leasesInRedis(RedisServerProcess redis, String name) {
    return redisCall(redis, c -> c.zcard(LettuceLeaseStore.leasesKey(name)));
  }

  private static <T> T redisCall(
      RedisServerProcess redis, Function<RedisCommands<String, String>, T> command) {
    RedisClient client = RedisClient.create(RedisURI.create(redis.uri()));
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      return command.apply(c.sync());
    } finally {
      client.shutdown();
    }
  }
}
