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
 * A fleet budget too small to give every instance what its pools need: capacity 7, instances with
 * two pools each (one connection each at least). Three instances fit (3, 2 and 2); a fourth is
 * parked with nothing until one leaves, and is told so at once rather than waiting for room that
 * cannot come. Real JVMs and PostgreSQL's own {@code pg_stat_activity}, read in a loop: the
 * instances' connections never add up to more than the capacity, while every heartbeat comes within
 * the TTL of the one before (each instance counts those that did not: the worst case its class
 * comment states).
 */
class FleetFullTest {

  private static final String REDIS = "redis://127.0.0.1:6379";
  private static final int CAPACITY = 7;
  private static final long TTL_MILLIS = 1500;
  private static final Duration STARTS_WITHIN =
      Duration.ofSeconds(120); // a ceiling: 8 builds share 2 cores
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
  void aFourthInstanceThatDoesNotFitIsParkedAndTheFleetNeverHoldsMoreThanItsCapacity()
      throws Exception {
    LocalPostgres db = LocalPostgres.findOrStart();
    String database = "bhfull-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
    String budget = "full-" + UUID.randomUUID();
    AtomicInteger max = new AtomicInteger();
    AtomicInteger samples = new AtomicInteger();
    AtomicReference<Throwable> samplerFailed = new AtomicReference<>();
    AtomicBoolean sampling = new AtomicBoolean(true);
    Thread sampler =
        new Thread(
            () -> {
              try {
                while (sampling.get()) {
                  max.accumulateAndGet(connections(db, database), Math::max);
                  samples.incrementAndGet();
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
        REDIS,
        budget,
        Long.toString(TTL_MILLIS),
        db.jdbcUrl(),
        db.username().orElse("-"),
        database,
        Integer.toString(CAPACITY)
      };
      Instance a = launch(args);
      a.await("OPEN ");
      Instance b = launch(args);
      b.await("OPEN ");
      Instance c = launch(args);
      c.await("OPEN ");
      await().atMost(SETTLES).until(() -> connections(db, database), n -> n == CAPACITY);

      Instance d = launch(args);
      String fourth = d.awaitEither("PARKED", "OPEN ");
      System.out.println("the fourth instance: " + fourth);
      boolean parked = fourth.startsWith("PARKED");
      long late;
      if (parked) {
        assertThat(connections(db, database)).isEqualTo(CAPACITY);
        late = b.leave(); // room for the fourth: it opens its pools with the share b gave back
        d.await("OPEN ");
      } else {
        late = b.leave();
      }
      await().atMost(SETTLES).until(() -> connections(db, database), n -> n == CAPACITY);

      late += a.leave() + c.leave() + d.leave();
      await().atMost(SETTLES).until(() -> connections(db, database), n -> n == 0);

      sampling.set(false);
      sampler.join(TimeUnit.SECONDS.toMillis(10));
      assertThat(samplerFailed.get()).isNull();
      System.out.println(
          "fleet full: pg_stat_activity showed at most "
              + max.get()
              + " connections of the instances' pools in "
              + samples.get()
              + " samples (capacity "
              + CAPACITY
              + ", 4 instances of 2 pools; "
              + late
              + " heartbeat(s) later than the TTL of "
              + TTL_MILLIS
              + " ms)");
      if (late == 0) { // a heartbeat later than the TTL is the documented worst case
        assertThat(max.get()).isLessThanOrEqualTo(CAPACITY);
      }
      assertThat(samples.get()).isPositive();
      assertThat(fourth)
          .as("the fourth instance, told at once it does not fit")
          .startsWith("PARKED");
    } finally {
      sampling.set(false);
    }
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

    String await(String prefix) throws InterruptedException {
      return WorkerJvms.lineStartingWith(lines, prefix, STARTS_WITHIN);
    }

    /** The first line that starts with either prefix. */
    String awaitEither(String one, String other) throws InterruptedException {
      long deadline = System.nanoTime() + STARTS_WITHIN.toNanos();
      for (; ; ) {
        String line = lines.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        assertThat(line).as("'" + one + "' or '" + other + "' within " + STARTS_WITHIN).isNotNull();
        if (line.startsWith(one) || line.startsWith(other)) {
          return line;
        }
        System.out.println("  worker: " + line);
      }
    }

    /** Leaves; returns how many of its heartbeats came later than the TTL. */
    long leave() throws IOException, InterruptedException {
      OutputStream in = process.getOutputStream();
      in.write("leave\n".getBytes(StandardCharsets.UTF_8));
      in.flush();
      String left = await("LEFT late heartbeats: ");
      assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isZero();
      return Long.parseLong(left.substring("LEFT late heartbeats: ".length()).trim());
    }
  }

  private Instance launch(String... args) throws IOException {
    WorkerJvms.Started started = WorkerJvms.start(FleetFullWorker.class, args);
    processes.add(started.process());
    return new Instance(started.process(), started.lines());
  }
}
