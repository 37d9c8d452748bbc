package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.localdb.LocalPostgres;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Real JVMs, each with database pools sized by one fleet budget of 10 on the Redis on
 * 127.0.0.1:6379, joining, leaving and killed with SIGKILL, while PostgreSQL's own {@code
 * pg_stat_activity} is read in a loop: the connections of their pools never add up to more than the
 * budget.
 */
class FleetPoolsTest {

  private static final String REDIS = "redis://127.0.0.1:6379";
  private static final long TTL_MILLIS = 1500;
  private static final Duration STARTS_WITHIN =
      Duration.ofSeconds(120); // a ceiling: a JVM starting at load average 50 took more than 40 s
  private static final Duration SETTLES = Duration.ofSeconds(20);
  private static final long SAMPLE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void killLeftovers() throws InterruptedException {
    for (Process p : processes) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void poolsOfInstancesJoiningAndLeavingNeverHoldMoreThanTheFleetBudget() throws Exception {
    LocalPostgres db = LocalPostgres.findOrStart();
    String database = "bhf-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
    String budget = "pools-" + UUID.randomUUID();
    AtomicInteger max = new AtomicInteger();
    AtomicInteger samples = new AtomicInteger();
    AtomicReference<Throwable> samplerFailed = new AtomicReference<>();
    AtomicBoolean sampling = new AtomicBoolean(true);
    Thread sampler =
        new Thread(
            () -> {
              try (Connection c = db.connect();
                  PreparedStatement ps =
                      c.prepareStatement(
                          "SELECT count(*) FROM pg_stat_activity WHERE application_name IN (?, ?)")) {
                ps.setString(1, database + ".checkout");
                ps.setString(2, database + ".reports");
                while (sampling.get()) {
                  try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    max.accumulateAndGet(rs.getInt(1), Math::max);
                    samples.incrementAndGet();
                  }
                  LockSupport.parkNanos(SAMPLE_EVERY_NANOS); // leave the 2 cores to the instances
                }
              } catch (SQLException | RuntimeException e) {
                samplerFailed.set(e);
              }
            },
            "pg_stat_activity-sampler");
    sampler.start();

    try {
      String[] args = {
        REDIS, budget, Long.toString(TTL_MILLIS), db.jdbcUrl(), db.username().orElse("-"), database
      };
      Instance first = launch(args);
      first.await("OPEN ");
      assertThat(connections(db, database)).isEqualTo(FleetPoolsWorker.CAPACITY);
      Instance second = launch(args);
      second.await("OPEN ");
      Instance third = launch(args);
      third.await("OPEN ");
      awaitFleetHolds(db, database, FleetPoolsWorker.CAPACITY);

      second.leave();
      awaitFleetHolds(db, database, FleetPoolsWorker.CAPACITY); // the two others grow to 5 each

      Instance fourth = launch(args);
      fourth.await("OPEN ");
      awaitFleetHolds(db, database, FleetPoolsWorker.CAPACITY);

      long killed = System.nanoTime();
      first.process.destroyForcibly(); // SIGKILL: no goodbye to Redis; the OS closes its sockets
      first.process.waitFor(10, TimeUnit.SECONDS);
      await().atMost(SETTLES).until(() -> connections(db, database) < FleetPoolsWorker.CAPACITY);
      awaitFleetHolds(db, database, FleetPoolsWorker.CAPACITY); // third and fourth take its share
      long reclaimMillis = Duration.ofNanos(System.nanoTime() - killed).toMillis();

      third.leave();
      fourth.leave();
      await().atMost(SETTLES).until(() -> connections(db, database), n -> n == 0);

      sampling.set(false);
      sampler.join(TimeUnit.SECONDS.toMillis(10));
      assertThat(samplerFailed.get()).isNull();
      System.out.println(
          "fleet pools: pg_stat_activity showed at most "
              + max.get()
              + " connections of the instances' pools in "
              + samples.get()
              + " samples (budget "
              + FleetPoolsWorker.CAPACITY
              + "); the share of the instance killed with SIGKILL was back"
              + " in use "
              + reclaimMillis
              + " ms later (TTL "
              + TTL_MILLIS
              + " ms)");
      assertThat(max.get())
          .isLessThanOrEqualTo(FleetPoolsWorker.CAPACITY)
          .isEqualTo(FleetPoolsWorker.CAPACITY);
      assertThat(samples.get()).isPositive();
    } finally {
      sampling.set(false);
    }
  }

  /** Until the pools of the live instances hold the whole budget, as PostgreSQL counts them. */
  private static void awaitFleetHolds(LocalPostgres db, String database, int connections) {
    await().atMost(SETTLES).until(() -> connections(db, database), n -> n == connections);
  }

  private static int connections(LocalPostgres db, String database) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name IN (?, ?)")) {
      ps.setString(1, database + ".checkout");
      ps.setString(2, database + ".reports");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** A running instance: its process and the lines it printed. */
  private record Instance(Process process, BlockingQueue<String> lines) {

    void await(String prefix) throws InterruptedException {
      WorkerJvms.lineStartingWith(lines, prefix, STARTS_WITHIN);
    }

    void leave() throws IOException, InterruptedException {
      OutputStream in = process.getOutputStream();
      in.write("leave\n".getBytes(StandardCharsets.UTF_8));
      in.flush();
      await("LEFT");
      assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isZero();
    }
  }

  private Instance launch(String... args) throws IOException {
    WorkerJvms.Started started = WorkerJvms.start(FleetPoolsWorker.class, args);
    processes.add(started.process());
    return new Instance(started.process(), started.lines());
  }
}
