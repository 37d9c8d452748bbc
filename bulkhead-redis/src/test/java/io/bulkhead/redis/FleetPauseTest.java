package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A process stopped with kill -STOP for longer than the lease TTL while it holds leases, then
 * resumed with kill -CONT, among two processes that keep calling: three JVMs on the Redis at
 * 127.0.0.1:6379, one compartment of limit 10, and the dependency's own count of concurrent calls
 * as the oracle.
 */
class FleetPauseTest {

  private static final String REDIS = "redis://127.0.0.1:6379";
  private static final long TTL_MILLIS = 1000;
  private static final int HELD = 4;

  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void killLeftovers() throws InterruptedException {
    for (Process p : processes) {
      p.destroyForcibly(); // SIGKILL ends a stopped process too
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aProcessStoppedPastTheTtlLearnsItsLeasesWereLostAndNothingExceedsTheLimit()
      throws Exception {
    String name = "pause-" + UUID.randomUUID();
    String ttl = Long.toString(TTL_MILLIS);
    RedisClient client = RedisClient.create(RedisURI.create(REDIS));
    try (CountingDependency dependency = new CountingDependency(5);
        StatefulRedisConnection<String, String> connection = client.connect()) {
      RedisCommands<String, String> redis = connection.sync();
      String port = Integer.toString(dependency.port());
      WorkerJvms.Started paused =
          launch("pause", REDIS, name, ttl, port, Integer.toString(HELD), "4", "30");
      WorkerJvms.lineStartingWith(paused.lines(), "HOLDING " + HELD, Duration.ofSeconds(90));
      String epoch = redis.get(LettuceLeaseStore.epochKey(name));
      // No other process has started yet, and the paused one runs no call but the held ones: every
      // lease in Redis now is one of them. Their ids stay the same through renewals.
      List<String> pausedLeases = redis.zrange(LettuceLeaseStore.leasesKey(name), 0, -1);
      assertThat(pausedLeases).as("the paused process's leases").hasSize(HELD);
      List<WorkerJvms.Started> others =
          List.of(
              launch("until", REDIS, name, ttl, port, "6"),
              launch("until", REDIS, name, ttl, port, "6"));
      for (WorkerJvms.Started other : others) {
        WorkerJvms.lineStartingWith(other.lines(), "HAMMERING", Duration.ofSeconds(90));
      }
      // The other two fill what the paused one leaves: 4 + 6.
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(5))
          .until(() -> redis.zcard(LettuceLeaseStore.leasesKey(name)) == FleetWorker.LIMIT);

      long stoppedAt = System.nanoTime();
      signal("STOP", paused.process());
      // Its leases expire one TTL after its last renewal and the others' admissions purge them and
      // take the slots. When that last renewal ran is not known here: the stop lands some time
      // after
      // kill is forked (long on a loaded host), and a renewal written just before it may even run
      // after kill returns. A bound taken from Redis's clock before the signal was passed by such a
      // renewal, let the wait end with the paused leases still live, and the resumed process then
      // renewed them instead of losing them (no LOST). So wait for the paused leases themselves to
      // be
      // gone: once purged, nothing the paused process sends can bring one back (its renewal adds a
      // lease only while it is live, or after an epoch change), so the renewal it sends after the
      // resume finds all of them lost.
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(5))
          .until(
              () ->
                  pausedLeases.stream()
                          .allMatch(
                              id -> redis.zscore(LettuceLeaseStore.leasesKey(name), id) == null)
                      && redis.zcard(LettuceLeaseStore.leasesKey(name)) == FleetWorker.LIMIT);
      long takenAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt);

      long resumedAt = System.nanoTime();
      signal("CONT", paused.process());
      paused.process().getOutputStream().write("resumed\n".getBytes(StandardCharsets.UTF_8));
      paused.process().getOutputStream().flush();
      String lost = WorkerJvms.lineStartingWith(paused.lines(), "LOST ", Duration.ofSeconds(30));
      long learnedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumedAt);
      assertThat(lost).as("each held lease reported lost, once").isEqualTo("LOST " + HELD);

      String[] pausedDone =
          WorkerJvms.lineStartingWith(paused.lines(), "DONE ", Duration.ofSeconds(60)).split(" ");
      long admitted = Long.parseLong(pausedDone[1]);
      assertThat(Long.parseLong(pausedDone[3])).as("leases still held").isZero();
      assertThat(Long.parseLong(pausedDone[4])).as("no fallback: Redis kept its epoch").isZero();
      assertThat(Long.parseLong(pausedDone[5])).as("lost: the held ones only").isEqualTo(HELD);
      assertThat(admitted).as("new calls after the resume, under new leases").isGreaterThan(HELD);
      for (WorkerJvms.Started other : others) {
        other.process().getOutputStream().write("stop\n".getBytes(StandardCharsets.UTF_8));
        other.process().getOutputStream().flush();
        String[] done =
            WorkerJvms.lineStartingWith(other.lines(), "DONE ", Duration.ofSeconds(60)).split(" ");
        admitted += Long.parseLong(done[1]);
        assertThat(Long.parseLong(done[3])).as("leases still held").isZero();
        assertThat(Long.parseLong(done[4])).as("switches to the fallback share").isZero();
        assertThat(Long.parseLong(done[5])).as("leases lost by a process never paused").isZero();
      }
      for (Process p : processes) {
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
      }
      System.out.println(
          "kill -STOP/-CONT: the dependency saw at most "
              + dependency.maxOpen()
              + " concurrent calls; the others held all "
              + FleetWorker.LIMIT
              + " leases "
              + takenAfter
              + " ms after the stop (TTL "
              + TTL_MILLIS
              + " ms); the resumed process reported its "
              + HELD
              + " leases lost "
              + learnedAfter
              + " ms after kill -CONT; "
              + dependency.served()
              + " calls served");
      assertThat(dependency.maxOpen()).isLessThanOrEqualTo(FleetWorker.LIMIT).isGreaterThan(1);
      assertThat(dependency.served()).isEqualTo(admitted);
      assertThat(redis.zcard(LettuceLeaseStore.leasesKey(name))).as("nothing leaks").isZero();
      assertThat(redis.get(LettuceLeaseStore.epochKey(name))).isEqualTo(epoch);
    } finally {
      client.shutdown();
    }
  }

  private static void signal(String signal, Process process) throws Exception {
    Process kill =
        new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).as("kill -" + signal).isZero();
  }

  private WorkerJvms.Started launch(String... args) throws IOException {
    WorkerJvms.Started started = WorkerJvms.start(FleetWorker.class, args);
    processes.add(started.process());
    return started;
  }
}
