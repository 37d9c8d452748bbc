package io.bulkhead.benchmarks.soak;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.Compartment;
import io.bulkhead.config.Quantities;
import io.bulkhead.internal.DaemonThreads;
import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.PoolConfig;
import io.bulkhead.jdbc.WorkloadPool;
import io.bulkhead.localdb.LocalPostgres;
import io.bulkhead.scenarios.AppSettings;
import io.bulkhead.scenarios.DemoApp;
import io.bulkhead.scenarios.FakeUpstream;
import io.bulkhead.scenarios.Mode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The soak: the demo app (bulkhead mode) and the checkout-vs-reports pools, in one process, under a
 * mixed open-loop load for a long time, sampled for whatever grows. {@code /login} answers at once;
 * {@code /chat} calls a slow upstream that answers a fraction of calls with 500; checkout and
 * report queries run on a real PostgreSQL through split pools (checkout 6 connections with a queue
 * of 40 and 1 s of patience, reports 4 with none), whose compartments join the app's registry.
 *
 * <p>Every sampling interval it forces a full collection and records the heap in use after it, the
 * live threads, the open file descriptors and the slots in flight of every compartment; every
 * minute, each workload's p99 (from when each call was due) and outcomes. It writes {@code
 * samples.csv}, {@code minutes.csv} and {@code soak.json} into the results directory, from which
 * {@code scripts/report.py soak} writes {@code summary.md} (a verdict per series) and {@code
 * soak.svg}. Run it with {@code bulkhead-benchmarks/scripts/soak}, which does both.
 */
public final class Soak {

  private static final String SLEEP = "SELECT pg_sleep(?)";
  private static final int DB_BUDGET = 10;
  private static final int CHECKOUT_POOL = 6;
  private static final int CHECKOUT_QUEUE = 40;
  private static final Duration CHECKOUT_WAIT = Duration.ofSeconds(1);

  /** Enough database workers that a call never waits for one: 40/s x 1 s of patience, and more. */
  private static final int DB_WORKERS = 96;

  private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration DRAIN = Duration.ofSeconds(30);
  private static final long MINUTE_NANOS = TimeUnit.MINUTES.toNanos(1);

  private Soak() {}

  public static void main(String[] args) {
    SoakOptions options;
    try {
      options = SoakOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("soak: " + e.getMessage() + " (" + SoakOptions.USAGE + ")");
      System.exit(2);
      return;
    }
    if (options == null) {
      System.out.println(SoakOptions.USAGE);
      System.exit(0);
      return;
    }
    try {
      run(options);
    } catch (SQLException | IOException | RuntimeException e) {
      System.err.println(
          "soak: failed: "
              + e.getClass().getSimpleName()
              + ": "
              + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
      System.exit(1);
    } catch (InterruptedException e) {
      System.err.println("soak: interrupted");
      System.exit(1);
    }
    System.exit(0); // the JDK 17 HttpClients' selector threads are not daemons until collected
  }

  static void run(SoakOptions o) throws SQLException, IOException, InterruptedException {
    Files.createDirectories(o.out);
    System.err.println("soak: " + o.describe());
    LocalPostgres db =
        o.jdbcUrl != null ? LocalPostgres.at(o.jdbcUrl) : LocalPostgres.findOrStart();
    ExecutorService dbWorkers =
        Executors.newFixedThreadPool(DB_WORKERS, DaemonThreads.numbered("soak-db-"));
    ExecutorService httpWorkers =
        Executors.newFixedThreadPool(4, DaemonThreads.numbered("soak-http-"));
    HttpClient client =
        HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(httpWorkers).build();
    try (db;
        FakeUpstream upstream = FakeUpstream.start(0, o.upstreamDelay, o.upstreamFailures);
        DemoApp app = new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri()));
        Probes probes = new Probes()) {
      DatabasePools.Builder pools =
          DatabasePools.builder("soak")
              .jdbcUrl(db.jdbcUrl())
              .capacity(DB_BUDGET)
              .registry(app.registry())
              .pool(
                  PoolConfig.builder("checkout")
                      .limit(CHECKOUT_POOL)
                      .maxQueue(CHECKOUT_QUEUE)
                      .maxWait(CHECKOUT_WAIT)
                      .build())
              .pool(PoolConfig.builder("reports").limit(DB_BUDGET - CHECKOUT_POOL).build());
      db.username().ifPresent(pools::username);
      try (DatabasePools dbPools = pools.open()) {
        app.start(0);
        System.err.println(
            "soak: app on "
                + app.uri()
                + ", compartments: "
                + app.describeCompartments()
                + "; database "
                + db.description());
        SoakResult result = load(o, app, client, dbWorkers, dbPools, probes);
        SoakReport.write(o, result);
        System.err.println(
            "soak: wrote " + o.out.resolve("samples.csv") + ", minutes.csv and soak.json");
      }
    } finally {
      dbWorkers.shutdownNow();
      httpWorkers.shutdownNow();
    }
  }

  private static SoakResult load(
      SoakOptions o,
      DemoApp app,
      HttpClient client,
      ExecutorService dbWorkers,
      DatabasePools pools,
      Probes probes)
      throws InterruptedException {
    Workload login = new Workload("login");
    Workload chat = new Workload("chat");
    Workload checkout = new Workload("checkout");
    Workload report = new Workload("report");
    List<Workload> workloads = List.of(login, chat, checkout, report);
    URI loginUri = app.uri().resolve("/login");
    URI chatUri = app.uri().resolve("/chat");
    WorkloadPool checkoutPool = pools.pool("checkout");
    WorkloadPool reportsPool = pools.pool("reports");
    OpenLoop loop =
        new OpenLoop()
            .add(o.loginsPerSecond, due -> http(client, loginUri, login, due))
            .add(o.chatsPerSecond, due -> http(client, chatUri, chat, due))
            .add(
                o.checkoutsPerSecond,
                due -> dbWorkers.execute(() -> query(checkoutPool, o.checkoutQuery, checkout, due)))
            .add(
                o.reportsPerSecond,
                due -> dbWorkers.execute(() -> query(reportsPool, o.reportQuery, report, due)));

    List<Compartment> compartments = app.registry().all();
    List<String> names = new ArrayList<>();
    for (Compartment c : compartments) {
      names.add(c.name());
    }
    List<SoakResult.Sample> samples = new ArrayList<>();
    List<SoakResult.Minute> minutes = new ArrayList<>();
    String loadBefore = Probes.loadAverage();
    long start = System.nanoTime();
    long end = start + o.duration.toNanos();
    Thread dispatcher = DaemonThreads.start("soak-dispatcher", () -> loop.run(start, end));

    long every = o.sampleEvery.toNanos();
    long nextSample = start;
    long nextMinute = start + MINUTE_NANOS;
    while (true) {
      long next = Math.min(Math.min(nextSample, nextMinute), end);
      long wait;
      while ((wait = next - System.nanoTime()) > 0) {
        LockSupport.parkNanos(wait);
      }
      if (next == nextSample && next - end < 0) {
        samples.add(sample(probes, compartments, (next - start) / 1e9));
        nextSample += every;
      }
      if (next == nextMinute || next == end) {
        minutes.add(
            new SoakResult.Minute(minutes.size() + 1, (next - start) / 1e9, intervals(workloads)));
        nextMinute += MINUTE_NANOS;
      }
      if (next == end) {
        break;
      }
    }
    dispatcher.join();
    String loadAfter = Probes.loadAverage();
    System.err.println(
        "soak: load over; waiting up to "
            + Quantities.formatDuration(DRAIN)
            + " for the calls in flight");
    long drainEnd = System.nanoTime() + DRAIN.toNanos();
    while (inFlight(compartments) > 0 && System.nanoTime() - drainEnd < 0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
    }
    SoakResult.Sample after = sample(probes, compartments, (System.nanoTime() - start) / 1e9);
    return new SoakResult(o, names, samples, minutes, after, loadBefore, loadAfter);
  }

  private static List<Workload.Interval> intervals(List<Workload> workloads) {
    List<Workload.Interval> out = new ArrayList<>();
    for (Workload w : workloads) {
      out.add(w.interval());
    }
    return out;
  }

  private static int inFlight(List<Compartment> compartments) {
    int sum = 0;
    for (Compartment c : compartments) {
      sum += c.stats().inFlight();
    }
    return sum;
  }

  private static SoakResult.Sample sample(
      Probes probes, List<Compartment> compartments, double atSeconds) throws InterruptedException {
    long heap = probes.heapAfterFullGc();
    Map<String, Integer> inFlight = new LinkedHashMap<>();
    for (Compartment c : compartments) {
      inFlight.put(c.name(), c.stats().inFlight());
    }
    return new SoakResult.Sample(
        atSeconds, heap, Probes.liveThreads(), Probes.openFileDescriptors(), inFlight);
  }

  private static void http(HttpClient client, URI uri, Workload w, long due) {
    client
        .sendAsync(
            HttpRequest.newBuilder(uri).timeout(HTTP_TIMEOUT).build(),
            HttpResponse.BodyHandlers.discarding())
        .whenComplete(
            (response, failure) -> {
              Workload.Outcome outcome;
              if (failure != null) {
                outcome = Workload.Outcome.FAILED;
              } else if (response.statusCode() == 200) {
                outcome = Workload.Outcome.OK;
              } else if (response.statusCode() == 503) {
                outcome = Workload.Outcome.REJECTED;
              } else if (response.statusCode() == 504) {
                outcome = Workload.Outcome.TIMED_OUT;
              } else {
                outcome = Workload.Outcome.FAILED;
              }
              w.record(due, System.nanoTime(), outcome);
            });
  }

  private static void query(WorkloadPool pool, Duration query, Workload w, long due) {
    Workload.Outcome outcome;
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(SLEEP)) {
      ps.setDouble(1, query.toNanos() / 1e9);
      ps.execute();
      outcome = Workload.Outcome.OK;
    } catch (BulkheadFullException e) {
      outcome = Workload.Outcome.REJECTED;
    } catch (SQLException | RuntimeException e) {
      outcome = Workload.Outcome.FAILED;
    }
    w.record(due, System.nanoTime(), outcome);
  }
}
