package io.bulkhead.scenarios;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.internal.DaemonThreads;
import io.bulkhead.internal.Durations;
import io.bulkhead.internal.JsonWriter;
import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.PoolConfig;
import io.bulkhead.jdbc.PoolStats;
import io.bulkhead.jdbc.WorkloadPool;
import io.bulkhead.localdb.LocalPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The checkout-vs-reports outage, measured on a real PostgreSQL: checkout and reports share a
 * database; the report query degrades; does checkout survive?
 *
 * <p>Checkout calls arrive at 40 per second and each runs a 50 ms query; reports arrive at 2 per
 * second and each runs a 1.5 s query (both {@code pg_sleep}). After a healthy phase (10 s by
 * default) the report query degrades to 30 s for the degraded phase (40 s by default). The same
 * load runs twice against a budget of 10 connections:
 *
 * <ul>
 *   <li><b>shared</b>: one pool of 10 for both workloads, where callers wait in line for a
 *       connection up to 30 s (HikariCP's default {@code connectionTimeout}), as in most
 *       applications.
 *   <li><b>split</b>: checkout gets 6 connections (it needs 40/s x 0.05 s = 2; a queue of 40
 *       callers who wait at most 1 s) and reports get 4 (they need 2/s x 1.5 s = 3; no queue: a
 *       report that finds its 4 connections busy is rejected at once).
 * </ul>
 *
 * <p>Arrivals follow the clock, not the completions (an open loop): a call due while the machine or
 * the pool is stuck still starts late, and its latency counts from when it was due, so a stall is
 * never hidden by the load generator slowing down with it.
 *
 * <p>Figures, for the degraded phase: checkout p50 and p99 over every checkout call due in it, the
 * failed ones included; checkout errors (rejected, timed out or failed); checkout calls completed
 * successfully per second of the phase; reports that completed, were rejected, or failed. When the
 * phase ends the run cancels the report queries still running (counted as cut off, in none of
 * those) and lets the checkout calls still waiting finish; they then get a connection sooner than
 * they would have, so the shared pool's figures are, if anything, flattering. A default run takes
 * about 2 x 50 seconds plus start-up.
 */
public final class CheckoutVsReports {

  private static final String SLEEP = "SELECT pg_sleep(?)";
  private static final String QUERY_CANCELED = "57014";
  private static final int BUDGET = 10;

  private CheckoutVsReports() {}

  /**
   * Follows the pools of each run, for a dashboard: their compartments join {@link #registry()}
   * while the run lasts, and {@link #opened}/{@link #closing} frame it. Called on the thread that
   * calls {@link CheckoutVsReports#run(LocalPostgres, Settings, Consumer, Watch)}.
   */
  public interface Watch {
    /**
     * The registry each run's compartments join when its pools open and leave when they close
     * ({@link DatabasePools.Builder#registry}).
     */
    BulkheadRegistry registry();

    /** A run's pools are open; its load starts after this returns. */
    default void opened(DatabasePools pools) {}

    /** A run's load is over, or failed (also when {@link #opened} threw); its pools close next. */
    default void closing(DatabasePools pools) {}
  }

  /**
   * Runs the shared layout, then the split one, against {@code db}.
   *
   * @param progress receives one line as each run starts and ends
   * @throws SQLException if the pools cannot be opened (the message says why)
   */
  public static Result run(LocalPostgres db, Settings settings, Consumer<String> progress)
      throws SQLException, InterruptedException {
    return run(db, settings, progress, null);
  }

  /**
   * Runs the shared layout, then the split one, against {@code db}, and lets {@code watch} follow
   * each run's pools (null: nobody watches).
   *
   * @param progress receives one line as each run starts and ends
   * @throws SQLException if the pools cannot be opened (the message says why)
   */
  public static Result run(
      LocalPostgres db, Settings settings, Consumer<String> progress, Watch watch)
      throws SQLException, InterruptedException {
    Objects.requireNonNull(db, "db");
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(progress, "progress");
    String runId = "demo-db-" + Long.toHexString(System.nanoTime() & 0xffffffL);
    Outcome shared = runLayout(db, settings, Layout.shared(settings), runId, progress, watch);
    Outcome split = runLayout(db, settings, Layout.split(settings), runId, progress, watch);
    return new Result(settings, db.description(), runId, shared, split);
  }

  private static Outcome runLayout(
      LocalPostgres db,
      Settings s,
      Layout layout,
      String runId,
      Consumer<String> progress,
      Watch watch)
      throws SQLException, InterruptedException {
    DatabasePools.Builder builder =
        DatabasePools.builder(runId + "-" + layout.key).jdbcUrl(db.jdbcUrl()).capacity(BUDGET);
    db.username().ifPresent(builder::username);
    if (watch != null) {
      builder.registry(watch.registry());
    }
    for (PoolConfig pool : layout.pools) {
      builder.pool(pool);
    }
    progress.accept(
        "running "
            + layout.description
            + " for "
            + Durations.format(s.healthyPhase.plus(s.degradedPhase))
            + " (connections named "
            + runId
            + "-"
            + layout.key
            + ".*) ...");
    try (DatabasePools pools = builder.open()) {
      try {
        if (watch != null) {
          watch.opened(pools);
        }
        WorkloadPool checkout = pools.pool(layout.checkoutPool);
        WorkloadPool reports = pools.pool(layout.reportsPool);
        warmUp(checkout);
        Outcome outcome = new Load(s, layout, pools, checkout, reports).run();
        progress.accept(
            "  checkout p99 "
                + millis(outcome.degradedCheckout.p99Nanos)
                + " in the degraded phase, "
                + outcome.degradedCheckout.errors
                + " errors");
        return outcome;
      } finally {
        if (watch != null) {
          watch.closing(pools);
        }
      }
    }
  }

  /** A few untimed calls, so class loading and the first JIT do not land in the healthy figures. */
  private static void warmUp(WorkloadPool pool) throws SQLException {
    for (int i = 0; i < 20; i++) {
      try (Connection c = pool.getConnection();
          PreparedStatement ps = c.prepareStatement(SLEEP)) {
        ps.setDouble(1, 0.001);
        ps.execute();
      }
    }
  }

  /*
   * One open-loop run of the two workloads against one layout of pools.
   *
   * Algorithm
   * ---------
   * The calling thread dispatches: it parks until the next call is due (checkout every 25 ms, a
   * report every 500 ms by default) and hands the call to a worker pool that grows without bound, so
   * no call ever waits for a thread: a call that waits, waits for a connection. Each call records
   * (kind, due, finished, outcome) in a lock-free queue. A sampler thread reads the pools' stats every
   * 50 ms for the peaks. At the end of the degraded phase the dispatcher stops, `stopping` is set, the
   * report queries still running are cancelled in the server, and the run waits for every call.
   *
   * Invariants
   * ----------
   *   I1 every dispatched call records exactly one Call, whatever happens to it (each task catches
   *      everything its connection can throw and records in one place).
   *   I2 no report query starts after `stopping` is set: a report checks the flag after registering
   *      its statement and before executing it.
   *   I3 every connection is closed by try-with-resources in the task that took it, so a cancelled
   *      or failed call gives its slot back (the pool's own release-once path).
   *
   * Races, as interleavings
   * -----------------------
   *   R1 stop vs a report about to execute. T1 (report) registers its statement and reads
   *      stopping == false; T2 (stopper) sets stopping and cancels the registered statement before T1
   *      has sent the query, which cancels nothing; T1 then executes. T2 repeats the cancellation
   *      every 100 ms until all reports have returned, so T1's query is cancelled on the next round.
   *   R2 stop vs a report that has just finished. T2 cancels a statement whose query completed a
   *      moment ago; the driver has nothing to cancel, or the statement is closed and cancel throws,
   *      which T2 ignores. T1 has already recorded OK.
   *   R3 stop vs a queued report (shared pool). T1 waits in the compartment's queue when stopping is
   *      set; when a slot is handed to it, it reads stopping == true, records CUT_OFF and closes the
   *      connection at once, passing the slot to the next waiter, often a checkout.
   */
  private static final class Load {

    private final Settings s;
    private final Layout layout;
    private final DatabasePools pools;
    private final WorkloadPool checkout;
    private final WorkloadPool reports;
    private final ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
    private final Set<PreparedStatement> runningReports = ConcurrentHashMap.newKeySet();
    private final List<CompletableFuture<Void>> reportsDone = new ArrayList<>();
    private final List<CompletableFuture<Void>> checkoutsDone = new ArrayList<>();
    private final LongAccumulator peakQueued = new LongAccumulator(Math::max, 0);
    private final LongAccumulator peakWaiting = new LongAccumulator(Math::max, 0);
    private volatile boolean stopping;
    private long healthyEnd;

    Load(
        Settings s,
        Layout layout,
        DatabasePools pools,
        WorkloadPool checkout,
        WorkloadPool reports) {
      this.s = s;
      this.layout = layout;
      this.pools = pools;
      this.checkout = checkout;
      this.reports = reports;
    }

    Outcome run() throws InterruptedException {
      ThreadPoolExecutor workers =
          new ThreadPoolExecutor(
              0,
              Integer.MAX_VALUE,
              10,
              TimeUnit.SECONDS,
              new SynchronousQueue<>(),
              daemon("demo-db-call"));
      ScheduledExecutorService sampler =
          Executors.newSingleThreadScheduledExecutor(daemon("demo-db-sampler"));
      try {
        sampler.scheduleAtFixedRate(this::sample, 0, 50, TimeUnit.MILLISECONDS);
        long t0 = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
        healthyEnd = t0 + s.healthyPhase.toNanos();
        long end = healthyEnd + s.degradedPhase.toNanos();
        dispatch(workers, t0, end);
        stopReports();
        awaitAll(checkoutsDone, Duration.ofSeconds(30).plus(layout.longestWait()));
        return outcome(t0, end);
      } finally {
        sampler.shutdownNow();
        workers.shutdownNow();
      }
    }

    /** Starts each call when it is due, whatever the calls before it are doing. */
    private void dispatch(ThreadPoolExecutor workers, long t0, long end) {
      long checkoutEvery = Math.round(1e9 / s.checkoutsPerSecond);
      long reportEvery = Math.round(1e9 / s.reportsPerSecond);
      long nextCheckout = t0;
      long nextReport = t0;
      while (true) {
        long due = Math.min(nextCheckout, nextReport);
        if (due >= end) {
          return;
        }
        for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
          LockSupport.parkNanos(wait); // pacing the arrivals, not waiting for another thread
        }
        if (nextCheckout <= nextReport) {
          long at = nextCheckout;
          checkoutsDone.add(CompletableFuture.runAsync(() -> checkout(at), workers));
          nextCheckout += checkoutEvery;
        } else {
          long at = nextReport;
          reportsDone.add(CompletableFuture.runAsync(() -> report(at), workers));
          nextReport += reportEvery;
        }
      }
    }

    private void checkout(long due) {
      Status outcome;
      try (Connection c = checkout.getConnection();
          PreparedStatement ps = c.prepareStatement(SLEEP)) {
        ps.setDouble(1, s.checkoutQuery.toNanos() / 1e9);
        ps.execute();
        outcome = Status.OK;
      } catch (BulkheadFullException e) {
        outcome = Status.REJECTED;
      } catch (SQLException | RuntimeException e) {
        outcome = Status.ERROR;
      }
      calls.add(new Call(true, due, System.nanoTime(), outcome));
    }

    private void report(long due) {
      Duration query = due < healthyEnd ? s.reportQuery : s.degradedReportQuery;
      Status outcome;
      try (Connection c = reports.getConnection();
          PreparedStatement ps = c.prepareStatement(SLEEP)) {
        ps.setDouble(1, query.toNanos() / 1e9);
        runningReports.add(ps);
        try {
          if (stopping) {
            outcome = Status.CUT_OFF;
          } else {
            ps.execute();
            outcome = Status.OK;
          }
        } finally {
          runningReports.remove(ps);
        }
      } catch (BulkheadFullException e) {
        outcome = Status.REJECTED;
      } catch (SQLException e) {
        outcome =
            stopping && QUERY_CANCELED.equals(e.getSQLState()) ? Status.CUT_OFF : Status.ERROR;
      } catch (RuntimeException e) {
        outcome = Status.ERROR;
      }
      calls.add(new Call(false, due, System.nanoTime(), outcome));
    }

    /**
     * Cancels the report queries still running and lets the queued ones give up their turn (R1-R3).
     */
    private void stopReports() throws InterruptedException {
      stopping = true;
      CompletableFuture<Void> all =
          CompletableFuture.allOf(reportsDone.toArray(new CompletableFuture<?>[0]));
      long deadline =
          System.nanoTime() + TimeUnit.SECONDS.toNanos(30) + layout.longestWait().toNanos();
      while (!all.isDone()) {
        for (PreparedStatement ps : runningReports) {
          try {
            ps.cancel();
          } catch (SQLException e) {
            // closed meanwhile: the call has finished on its own
          }
        }
        try {
          all.get(100, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("report calls still running 30 s after the run ended");
          }
        } catch (ExecutionException e) {
          throw new IllegalStateException("a report call failed unexpectedly", e.getCause());
        }
      }
    }

    private static void awaitAll(List<CompletableFuture<Void>> futures, Duration limit)
        throws InterruptedException {
      try {
        CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]))
            .get(limit.toNanos(), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        throw new IllegalStateException(
            "checkout calls still running " + Durations.format(limit) + " after the run ended");
      } catch (ExecutionException e) {
        throw new IllegalStateException("a checkout call failed unexpectedly", e.getCause());
      }
    }

    private void sample() {
      long queued = 0;
      long waiting = 0;
      for (PoolStats st : pools.stats()) {
        queued += st.queued();
        waiting += st.waiting();
      }
      peakQueued.accumulate(queued);
      peakWaiting.accumulate(waiting);
    }

    private Outcome outcome(long t0, long end) {
      List<CheckoutCall> timeline = new ArrayList<>();
      List<Call> healthyCheckouts = new ArrayList<>();
      List<Call> degradedCheckouts = new ArrayList<>();
      int completedInPhase = 0;
      int ok = 0;
      int rejected = 0;
      int errors = 0;
      int cutOff = 0;
      for (Call c : calls) {
        boolean degraded = c.due >= healthyEnd;
        if (c.checkout) {
          (degraded ? degradedCheckouts : healthyCheckouts).add(c);
          timeline.add(new CheckoutCall(c.due - t0, c.finished - c.due, c.result == Status.OK));
          if (c.result == Status.OK && c.finished >= healthyEnd && c.finished < end) {
            completedInPhase++;
          }
        } else if (degraded) {
          switch (c.result) {
            case OK:
              ok++;
              break;
            case REJECTED:
              rejected++;
              break;
            case CUT_OFF:
              cutOff++;
              break;
            default:
              errors++;
              break;
          }
        }
      }
      double phaseSeconds = s.degradedPhase.toNanos() / 1e9;
      return new Outcome(
          layout.key,
          layout.description,
          CheckoutFigures.of(
              healthyCheckouts,
              s.healthyPhase.toNanos() / 1e9,
              countCompleted(healthyCheckouts, healthyEnd)),
          CheckoutFigures.of(degradedCheckouts, phaseSeconds, completedInPhase),
          ok,
          rejected,
          errors,
          cutOff,
          peakQueued.get(),
          peakWaiting.get(),
          timeline);
    }

    private static int countCompleted(List<Call> calls, long before) {
      int n = 0;
      for (Call c : calls) {
        if (c.result == Status.OK && c.finished < before) {
          n++;
        }
      }
      return n;
    }
  }

  private enum Status {
    OK,
    REJECTED,
    ERROR,
    CUT_OFF
  }

  private static final class Call {
    final boolean checkout;
    final long due;
    final long finished;
    final Status result;

    Call(boolean checkout, long due, long finished, Status result) {
      this.checkout = checkout;
      this.due = due;
      this.finished = finished;
      this.result = result;
    }
  }

  /** The pools of one run: which workload draws on which pool. */
  private static final class Layout {
    final String key;
    final String description;
    final List<PoolConfig> pools;
    final String checkoutPool;
    final String reportsPool;

    private Layout(
        String key,
        String description,
        List<PoolConfig> pools,
        String checkoutPool,
        String reportsPool) {
      this.key = key;
      this.description = description;
      this.pools = pools;
      this.checkoutPool = checkoutPool;
      this.reportsPool = reportsPool;
    }

    static Layout shared(Settings s) {
      PoolConfig shared =
          PoolConfig.builder("shared")
              .limit(BUDGET)
              .unboundedQueue()
              .maxWait(s.sharedMaxWait)
              .build();
      return new Layout(
          "shared",
          "one shared pool of "
              + BUDGET
              + " (callers wait up to "
              + Durations.format(s.sharedMaxWait)
              + ")",
          List.of(shared),
          "shared",
          "shared");
    }

    static Layout split(Settings s) {
      PoolConfig checkout =
          PoolConfig.builder("checkout")
              .limit(s.checkoutSize)
              .maxQueue(s.checkoutMaxQueue)
              .maxWait(s.checkoutMaxWait)
              .build();
      PoolConfig reports = PoolConfig.builder("reports").limit(BUDGET - s.checkoutSize).build();
      return new Layout(
          "split",
          "split pools: checkout " + s.checkoutSize + ", reports " + (BUDGET - s.checkoutSize),
          List.of(checkout, reports),
          "checkout",
          "reports");
    }

    Duration longestWait() {
      Duration longest = Duration.ZERO;
      for (PoolConfig p : pools) {
        Duration wait = p.maxWait().orElse(Duration.ofNanos(Long.MAX_VALUE)); // empty: unbounded
        if (wait.compareTo(longest) > 0) {
          longest = wait;
        }
      }
      return longest;
    }
  }

  /** One checkout call: when it was due, how long it took from then, and whether it succeeded. */
  public static final class CheckoutCall {
    private final long dueNanos;
    private final long latencyNanos;
    private final boolean ok;

    CheckoutCall(long dueNanos, long latencyNanos, boolean ok) {
      this.dueNanos = dueNanos;
      this.latencyNanos = latencyNanos;
      this.ok = ok;
    }

    /** When the call was due, from the start of the healthy phase. */
    public Duration due() {
      return Duration.ofNanos(dueNanos);
    }

    /** From when the call was due until it returned. */
    public Duration latency() {
      return Duration.ofNanos(latencyNanos);
    }

    /** Whether the call succeeded (false: rejected, timed out or failed). */
    public boolean ok() {
      return ok;
    }
  }

  /** Checkout latency and throughput over one phase. */
  public static final class CheckoutFigures {
    private final int calls;
    private final int errors;
    private final long p50Nanos;
    private final long p99Nanos;
    private final double perSecond;

    private CheckoutFigures(int calls, int errors, long p50Nanos, long p99Nanos, double perSecond) {
      this.calls = calls;
      this.errors = errors;
      this.p50Nanos = p50Nanos;
      this.p99Nanos = p99Nanos;
      this.perSecond = perSecond;
    }

    static CheckoutFigures of(List<Call> calls, double phaseSeconds, int completed) {
      long[] latencies = new long[calls.size()];
      int errors = 0;
      for (int i = 0; i < latencies.length; i++) {
        Call c = calls.get(i);
        latencies[i] = c.finished - c.due;
        if (c.result != Status.OK) {
          errors++;
        }
      }
      Arrays.sort(latencies);
      return new CheckoutFigures(
          latencies.length,
          errors,
          percentile(latencies, 0.50),
          percentile(latencies, 0.99),
          completed / phaseSeconds);
    }

    /** Nearest-rank percentile of sorted values; 0 when there are none. */
    private static long percentile(long[] sorted, double q) {
      if (sorted.length == 0) {
        return 0;
      }
      int rank = (int) Math.ceil(q * sorted.length);
      return sorted[Math.max(0, rank - 1)];
    }

    /** Checkout calls due in the phase. */
    public int calls() {
      return calls;
    }

    /** Of those, calls that failed: rejected, timed out waiting, or failed in the database. */
    public int errors() {
      return errors;
    }

    /** Median latency, from when a call was due until it returned. */
    public Duration p50() {
      return Duration.ofNanos(p50Nanos);
    }

    /** 99th percentile latency, from when a call was due until it returned. */
    public Duration p99() {
      return Duration.ofNanos(p99Nanos);
    }

    /** Checkout calls that completed successfully within the phase, per second of the phase. */
    public double perSecond() {
      return perSecond;
    }
  }

  /** The figures of one layout. */
  public static final class Outcome {
    private final String key;
    private final String description;
    private final CheckoutFigures healthyCheckout;
    private final CheckoutFigures degradedCheckout;
    private final int reportsOk;
    private final int reportsRejected;
    private final int reportsErrors;
    private final int reportsCutOff;
    private final long peakQueued;
    private final long peakWaiting;
    private final List<CheckoutCall> checkoutCalls;

    Outcome(
        String key,
        String description,
        CheckoutFigures healthyCheckout,
        CheckoutFigures degradedCheckout,
        int reportsOk,
        int reportsRejected,
        int reportsErrors,
        int reportsCutOff,
        long peakQueued,
        long peakWaiting,
        List<CheckoutCall> checkoutCalls) {
      this.key = key;
      this.description = description;
      this.healthyCheckout = healthyCheckout;
      this.degradedCheckout = degradedCheckout;
      this.reportsOk = reportsOk;
      this.reportsRejected = reportsRejected;
      this.reportsErrors = reportsErrors;
      this.reportsCutOff = reportsCutOff;
      this.peakQueued = peakQueued;
      this.peakWaiting = peakWaiting;
      checkoutCalls.sort(Comparator.comparing(CheckoutCall::due));
      this.checkoutCalls = List.copyOf(checkoutCalls);
    }

    /** "shared" or "split". */
    public String key() {
      return key;
    }

    /** What the pools were, in words. */
    public String description() {
      return description;
    }

    /** Checkout during the healthy phase: the baseline. */
    public CheckoutFigures healthyCheckout() {
      return healthyCheckout;
    }

    /** Checkout during the degraded phase. */
    public CheckoutFigures checkout() {
      return degradedCheckout;
    }

    /** Reports due in the degraded phase that completed. */
    public int reportsOk() {
      return reportsOk;
    }

    /** Reports due in the degraded phase that the compartment turned away. */
    public int reportsRejected() {
      return reportsRejected;
    }

    /** Reports due in the degraded phase that failed in the database. */
    public int reportsErrors() {
      return reportsErrors;
    }

    /** Reports still running or queued when the run ended, and cancelled. */
    public int reportsCutOff() {
      return reportsCutOff;
    }

    /** The most callers seen queued in the compartments at once (sampled every 50 ms). */
    public long peakQueued() {
      return peakQueued;
    }

    /** The most threads seen waiting inside HikariCP at once (sampled every 50 ms). */
    public long peakWaitingInHikari() {
      return peakWaiting;
    }

    /** Every checkout call of the run, both phases, in the order they were due: for a chart. */
    public List<CheckoutCall> checkoutCalls() {
      return checkoutCalls;
    }

    /** Writes {@code {"checkout": {...}, "reports": {...}}}, figures to a tenth. */
    void writeTo(JsonWriter out) {
      CheckoutFigures c = degradedCheckout;
      out.beginObject();
      out.name("checkout")
          .beginObject()
          .name("p50_ms")
          .value(Math.round(c.p50Nanos / 1e5) / 10.0)
          .name("p99_ms")
          .value(Math.round(c.p99Nanos / 1e5) / 10.0)
          .name("errors")
          .value(c.errors)
          .name("per_s")
          .value(Math.round(c.perSecond * 10) / 10.0)
          .endObject();
      out.name("reports")
          .beginObject()
          .name("ok")
          .value(reportsOk)
          .name("rejected")
          .value(reportsRejected)
          .name("errors")
          .value(reportsErrors)
          .endObject();
      out.endObject();
    }
  }

  /** Both runs. */
  public static final class Result {
    private final Settings settings;
    private final String database;
    private final String runId;
    private final Outcome shared;
    private final Outcome split;

    Result(Settings settings, String database, String runId, Outcome shared, Outcome split) {
      this.settings = settings;
      this.database = database;
      this.runId = runId;
      this.shared = shared;
      this.split = split;
    }

    public Settings settings() {
      return settings;
    }

    /** The server the runs used. */
    public String database() {
      return database;
    }

    /**
     * The prefix of the {@code application_name} of every connection the runs opened, to find them
     * in {@code pg_stat_activity}.
     */
    public String applicationNamePrefix() {
      return runId;
    }

    public Outcome shared() {
      return shared;
    }

    public Outcome split() {
      return split;
    }

    /** {@code {"shared": D, "split": D}}, D being {@code {"checkout": {...}, "reports": {...}}}. */
    public String toJson() {
      JsonWriter out = JsonWriter.compact().beginObject().name("shared");
      shared.writeTo(out);
      split.writeTo(out.name("split"));
      return out.endObject().toJson();
    }

    /**
     * What was run, in two sentences: the workloads, the phases, the server. The first line of
     * {@link #table()}.
     */
    public String setup() {
      return String.format(
          Locale.ROOT,
          "Checkout (%.0f/s, %s queries) and reports (%.0f/s, %s queries, degraded to %s)%n"
              + "on %s.%n%s healthy, then %s with reports degraded; figures for the degraded"
              + " phase unless marked healthy.",
          settings.checkoutsPerSecond,
          Durations.format(settings.checkoutQuery),
          settings.reportsPerSecond,
          Durations.format(settings.reportQuery),
          Durations.format(settings.degradedReportQuery),
          database,
          Durations.format(settings.healthyPhase),
          Durations.format(settings.degradedPhase));
    }

    /** The two column headings: the shared layout and the split one. */
    public List<String> headings() {
      return List.of(
          "shared pool of " + BUDGET,
          "split: checkout "
              + settings.checkoutSize
              + ", reports "
              + (BUDGET - settings.checkoutSize));
    }

    /**
     * The rows of the side-by-side table, each {@code [label, shared, split]}, checkout first;
     * {@link #KEY_ROWS} names the ones that tell the story.
     */
    public List<List<String>> rows() {
      List<List<String>> rows = new ArrayList<>();
      rows.add(
          List.of(
              "checkout p50 (healthy)",
              millis(shared.healthyCheckout.p50Nanos),
              millis(split.healthyCheckout.p50Nanos)));
      rows.add(
          List.of(
              "checkout p99 (healthy)",
              millis(shared.healthyCheckout.p99Nanos),
              millis(split.healthyCheckout.p99Nanos)));
      rows.add(
          List.of(
              "checkout p50",
              millis(shared.degradedCheckout.p50Nanos),
              millis(split.degradedCheckout.p50Nanos)));
      rows.add(
          List.of(
              "checkout p99",
              millis(shared.degradedCheckout.p99Nanos),
              millis(split.degradedCheckout.p99Nanos)));
      rows.add(
          List.of(
              "checkout errors",
              shared.degradedCheckout.errors + " of " + shared.degradedCheckout.calls,
              split.degradedCheckout.errors + " of " + split.degradedCheckout.calls));
      rows.add(
          List.of(
              "checkout completed per second",
              String.format(Locale.ROOT, "%.1f", shared.degradedCheckout.perSecond),
              String.format(Locale.ROOT, "%.1f", split.degradedCheckout.perSecond)));
      rows.add(
          List.of(
              "reports ok", Integer.toString(shared.reportsOk), Integer.toString(split.reportsOk)));
      rows.add(
          List.of(
              "reports rejected",
              Integer.toString(shared.reportsRejected),
              Integer.toString(split.reportsRejected)));
      rows.add(
          List.of(
              "reports errors",
              Integer.toString(shared.reportsErrors),
              Integer.toString(split.reportsErrors)));
      rows.add(
          List.of(
              "reports cut off when the run ended",
              Integer.toString(shared.reportsCutOff),
              Integer.toString(split.reportsCutOff)));
      rows.add(
          List.of(
              "most callers queued for a connection",
              Long.toString(shared.peakQueued),
              Long.toString(split.peakQueued)));
      return rows;
    }

    /** The labels of the rows that tell the story, for emphasis. */
    public static final List<String> KEY_ROWS =
        List.of("checkout p99", "checkout errors", "checkout completed per second");

    /** The side-by-side table the demo prints: {@link #setup()}, then {@link #rows()}. */
    public String table() {
      StringBuilder sb =
          new StringBuilder(setup()).append(System.lineSeparator()).append(System.lineSeparator());
      String format = "%-38s %20s %30s%n";
      List<String> headings = headings();
      sb.append(String.format(Locale.ROOT, format, "", headings.get(0), headings.get(1)));
      for (List<String> row : rows()) {
        sb.append(String.format(Locale.ROOT, format, row.get(0), row.get(1), row.get(2)));
      }
      return sb.toString();
    }
  }

  static String millis(long nanos) {
    return String.format(Locale.ROOT, "%,d ms", Math.round(nanos / 1e6));
  }

  /** Many short calls at once, each needing little stack. */
  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return DaemonThreads.numbered(name + "-", 512 * 1024);
  }

  /**
   * The experiment's settings. The rates, query times and pool sizes are the outage's; the phase
   * lengths and the degraded query time are what a run usually varies.
   *
   * <p>This class is immutable.
   */
  public static final class Settings {
    final double checkoutsPerSecond;
    final Duration checkoutQuery;
    final double reportsPerSecond;
    final Duration reportQuery;
    final Duration degradedReportQuery;
    final Duration healthyPhase;
    final Duration degradedPhase;
    final Duration sharedMaxWait;
    final int checkoutSize;
    final int checkoutMaxQueue;
    final Duration checkoutMaxWait;

    private Settings(Builder b) {
      this.checkoutsPerSecond = b.checkoutsPerSecond;
      this.checkoutQuery = b.checkoutQuery;
      this.reportsPerSecond = b.reportsPerSecond;
      this.reportQuery = b.reportQuery;
      this.degradedReportQuery = b.degradedReportQuery;
      this.healthyPhase = b.healthyPhase;
      this.degradedPhase = b.degradedPhase;
      this.sharedMaxWait = b.sharedMaxWait;
      this.checkoutSize = b.checkoutSize;
      this.checkoutMaxQueue = b.checkoutMaxQueue;
      this.checkoutMaxWait = b.checkoutMaxWait;
    }

    /** The defaults: the outage's workloads, 10 s healthy, 40 s with reports degraded to 30 s. */
    public static Settings defaults() {
      return builder().build();
    }

    public static Builder builder() {
      return new Builder();
    }

    public Duration degradedReportQuery() {
      return degradedReportQuery;
    }

    public Duration healthyPhase() {
      return healthyPhase;
    }

    public Duration degradedPhase() {
      return degradedPhase;
    }

    public double reportsPerSecond() {
      return reportsPerSecond;
    }

    /** Builds {@link Settings}; setters throw {@link IllegalArgumentException} naming the value. */
    public static final class Builder {
      private double checkoutsPerSecond = 40;
      private Duration checkoutQuery = Duration.ofMillis(50);
      private double reportsPerSecond = 2;
      private Duration reportQuery = Duration.ofMillis(1500);
      private Duration degradedReportQuery = Duration.ofSeconds(30);
      private Duration healthyPhase = Duration.ofSeconds(10);
      private Duration degradedPhase = Duration.ofSeconds(40);
      private Duration sharedMaxWait = Duration.ofSeconds(30);
      private int checkoutSize = 6;
      private int checkoutMaxQueue = 40;
      private Duration checkoutMaxWait = Duration.ofSeconds(1);

      private Builder() {}

      /** How long a report query takes once degraded ({@code --degraded}); default 30 s. */
      public Builder degradedReportQuery(Duration d) {
        this.degradedReportQuery = positive("degraded report query time", d);
        return this;
      }

      /** How long the healthy phase lasts; default 10 s. */
      public Builder healthyPhase(Duration d) {
        this.healthyPhase = positive("healthy phase", d);
        return this;
      }

      /** How long the degraded phase lasts ({@code --duration}); default 40 s. */
      public Builder degradedPhase(Duration d) {
        this.degradedPhase = positive("degraded phase", d);
        return this;
      }

      /** How many reports arrive per second; default 2. */
      public Builder reportsPerSecond(double rate) {
        if (!(rate > 0 && rate <= 1000)) {
          throw new IllegalArgumentException(
              "reports per second must be above 0 and at most 1000 but was " + rate);
        }
        this.reportsPerSecond = rate;
        return this;
      }

      public Settings build() {
        return new Settings(this);
      }

      private static Duration positive(String what, Duration d) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
          throw new IllegalArgumentException(what + " must be positive but was " + d);
        }
        if (d.compareTo(Duration.ofHours(1)) > 0) {
          throw new IllegalArgumentException(what + " must be at most 1 hour but was " + d);
        }
        return d;
      }
    }
  }
}
