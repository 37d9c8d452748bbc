package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Permit;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults of the Redis itself, on servers of the test's own: a restart that keeps its data, a script
 * cache flushed under a running fleet, a wrong password, a URI that is not one.
 */
class RedisFaultsTest {

  // Long enough that the lease covers the restart (no sync reaches Redis while it is down).
  private static final Duration TTL = Duration.ofSeconds(6);
  private static final Duration CALL = Duration.ofMillis(500);
  private static final Duration POLL = Duration.ofMillis(100);
  private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);

  private static RedisCompartments connect(String uri) {
    return RedisCompartments.settings()
        .leaseTtl(TTL)
        .rebalanceInterval(POLL)
        .commandTimeout(COMMAND_TIMEOUT)
        .connect(uri);
  }

  @Test
  void aRedisRestartedWithItsDataWithinTheLeaseTtlCostsNoFallbackAndNoLease(@TempDir Path dir)
      throws Exception {
    String name = "llm";
    try (RedisServerProcess redis =
            RedisServerProcess.persistent(RedisServerProcess.freePort(), dir).start();
        LogCapture log = LogCapture.library();
        RedisCompartments fleet = connect(redis.uri())) {
      FleetBulkhead llm =
          fleet.builder(name).limit(5).maxCallDuration(CALL).fallbackToLocalShare(1).build();
      RedisOutageTest.awaitSlots(llm, 5); // a fresh server grants nothing for one term
      Permit a = llm.tryAcquire().orElseThrow();
      Permit b = llm.tryAcquire().orElseThrow();
      String epochBefore = redis.command("GET", LettuceLeaseStore.epochKey(name));
      long reloadsBefore = llm.fleetStats().scriptReloads();

      redis.stop(); // SIGKILL; every write was fsynced to the append-only file before its reply
      Permit c = llm.tryAcquire().orElseThrow(); // the lease covers the gap: Redis is not asked
      redis.start(); // same port, same directory: it loads its append-only file
      assertThat(redis.command("GET", LettuceLeaseStore.epochKey(name)))
          .as("the same state, so the same epoch")
          .isEqualTo(epochBefore);
      // The restarted server forgot its scripts: the first sync that reaches it reloads one.
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(POLL)
          .until(() -> llm.fleetStats().scriptReloads() > reloadsBefore);
      FleetStats stats = llm.fleetStats();
      System.out.println("Redis restarted with its data: " + stats);
      assertThat(stats.inFallback()).isFalse();
      assertThat(stats.fallbackSwitches()).as("the lease covered the restart").isZero();
      assertThat(stats.leasesLost()).as("Redis kept this process's record").isZero();
      assertThat(stats.learning()).as("no new epoch, so nothing to learn").isFalse();
      assertThat(log.warningsContaining("lost")).isEmpty();
      assertThat(RedisOutageTest.slotsInRedis(redis, name)).isEqualTo(5);
      a.close();
      b.close();
      c.close();
      List<Permit> all = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        all.add(llm.tryAcquire().orElseThrow());
      }
      assertThat(llm.tryAcquire()).as("the limit").isEmpty();
      all.forEach(Permit::close);
      assertThat(llm.stats().inFlight()).isZero();
    }
  }

  @Test
  void aScriptCacheFlushedUnderARunningFleetIsLoadedAgainByTheNextSync() throws Exception {
    String name = "llm";
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start();
        RedisCompartments fleet = connect(redis.uri())) {
      FleetBulkhead llm = fleet.builder(name).limit(2).maxCallDuration(CALL).build();
      RedisOutageTest.awaitSlots(llm, 2);
      Permit running = llm.tryAcquire().orElseThrow();
      long reloadsBefore = llm.fleetStats().scriptReloads();

      assertThat(redis.command("SCRIPT", "FLUSH")).isEqualTo("+OK");
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(POLL)
          .until(() -> llm.fleetStats().scriptReloads() > reloadsBefore);
      assertThat(llm.fleetStats().inFallback()).as("NOSCRIPT is not an outage").isFalse();
      assertThat(llm.fleetStats().fallbackSwitches()).isZero();
      Permit next = llm.tryAcquire().orElseThrow();
      assertThat(llm.tryAcquire()).as("the limit still holds").isEmpty();
      running.close();
      next.close();
      assertThat(RedisOutageTest.slotsInRedis(redis, name)).isEqualTo(2);
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
        FleetBulkhead llm =
            fleet.builder("llm").limit(4).maxCallDuration(CALL).fallbackToLocalShare(1).build();
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
        FleetBulkhead llm = fleet.builder("llm").limit(4).maxCallDuration(CALL).build();
        assertThat(llm.fleetStats().inFallback()).as("the right password connects").isFalse();
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
}
