package io.bulkhead.scenarios;

import io.bulkhead.internal.Durations;
import io.bulkhead.process.Exit;
import io.bulkhead.process.ProcessStats;
import io.bulkhead.process.WorkerProcess;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The runaway report, contained or not: a checkout API ({@code /login}, {@code /checkout}) and a
 * report worker; midway one report goes rogue — it spins one thread per available processor and
 * allocates without freeing. The same run happens twice:
 *
 * <ul>
 *   <li><b>inside</b>: the worker runs in the API's JVM, one process with the two's ceilings added
 *       up ({@value #API_CPUS} + {@value #WORKER_CPUS} CPUs, 256 + 192 MiB);
 *   <li><b>separate</b>: the worker is its own JVM with its own ceiling ({@value #WORKER_CPUS} CPU,
 *       192 MiB) and the API keeps its own ({@value #API_CPUS} CPU, 256 MiB); a worker that dies is
 *       restarted alone.
 * </ul>
 *
 * <p>Both cases run in child JVMs started from this JVM's classpath, so that this process survives
 * to report what happened. The ceilings are the kernel's when this process may create control
 * groups, the JVM's otherwise: each child is a {@link WorkerProcess} (the API one that is not
 * restarted, so that its death shows). Load: {@value #CALLS_PER_SECOND} logins and as many
 * checkouts per second, due on the clock, after a warm-up the figures leave out; a call's latency
 * counts from when it was due. A call is an error when it is not answered 200 within {@link
 * #CALL_TIMEOUT}, and its latency then counts as that timeout at least.
 *
 * <p>Nothing is left behind: every child process is killed and every group removed when a run ends,
 * fails, or this JVM is stopped (a shutdown hook), and a child whose parent vanished exits when its
 * standard input closes.
 */
public final class ProcessIsolation {

  static final double API_CPUS = 1.0;
  static final double WORKER_CPUS = 0.5;
  private static final long MIB = 1024 * 1024;
  static final long API_MEMORY = 256 * MIB;
  static final long WORKER_MEMORY = 192 * MIB;
  static final int CALLS_PER_SECOND = 20;
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);

  /**
   * Calls of each route sent one after the other before the measured load: a fresh JVM interprets
   * its first few hundred requests, which would put the JIT's warm-up into the "before" p99.
   */
  private static final int WARM_UP_CALLS = 500;

  /** How long a child JVM may take to say it is ready; a busy machine starts a JVM slowly. */
  private static final Duration READY_PATIENCE = Duration.ofSeconds(60);

  /** How long a dead child may take to be reported so. */
  private static final Duration EXIT_PATIENCE = Duration.ofSeconds(10);

  /** A worker that keeps dying is not restarted forever. */
  private static final int MOST_RESTARTS = 10;

  /** The first restart waits this long, each next one twice as long, up to the most. */
  private static final Duration FIRST_BACKOFF = Duration.ofMillis(200);

  private static final Duration MOST_BACKOFF = Duration.ofSeconds(2);

  /**
   * How much longer than {@code --during} the runaway may last while its process's fate is not yet
   * known: the leak's death takes a fraction of a CPU second, but a JVM on a busy machine may wait
   * many seconds for it (each collection runnable, not running).
   */
  private static final Duration FATE_PATIENCE = Duration.ofMinutes(2);

  /** How often the processes' cards are read during the runaway. */
  private static final Duration CARD_PERIOD = Duration.ofSeconds(1);

  private static final int KEPT_OUTPUT_LINES = 20;
  private static final Duration LONGEST_PHASE = Duration.ofHours(1);

  private ProcessIsolation() {}

  /**
   * What to run.
   *
   * @param before how long the load runs before the report goes rogue
   * @param during how long it runs after, at least: the runaway goes on until its process's fate is
   *     known (it died, and when separate was restarted, or its leak reached its cap), for at most
   *     {@link #FATE_PATIENCE} more
   * @param allowCgroup false to use the JVM's ceilings even where control groups are at hand
   */
  public record Settings(Duration before, Duration during, boolean allowCgroup) {
    public Settings {
      check("--before", before);
      check("--during", during);
    }

    private static void check(String option, Duration d) {
      if (d.compareTo(Duration.ofSeconds(1)) < 0 || d.compareTo(LONGEST_PHASE) > 0) {
        throw new CliException(
            option
                + " must be from 1 s to "
                + Durations.format(LONGEST_PHASE)
                + " but was "
                + Durations.format(d));
      }
    }
  }

  /** The API's figures over one phase; latencies include failed calls. */
  public record Phase(Latency login, int loginErrors, Latency checkout, int checkoutErrors) {}

  /**
   * What happened to the report worker.
   *
   * @param deaths how many times its process died (separate) or 0 (inside)
   * @param restarts how many times it was restarted
   * @param throttledPeriods CFS periods its group was throttled in (0 without a group)
   * @param spinningThreads how many threads the rogue report spun
   * @param fate one sentence for the table
   */
  public record Worker(
      int deaths, int restarts, long throttledPeriods, int spinningThreads, String fate) {}

  /**
   * One checkout call, for a chart.
   *
   * @param due when it was due, from the start of the load
   * @param latency from when it was due to its answer (a failure counts as the call timeout at
   *     least)
   * @param ok whether it was answered 200
   */
  public record CheckoutCall(Duration due, Duration latency, boolean ok) {}

  /**
   * One case.
   *
   * @param name "inside" or "separate"
   * @param ceilings "cgroup" or "jvm"
   * @param ceilingsDetail what they were, e.g. "cgroup v1: API 1.0 CPU 256 MiB, worker 0.5 CPU ..."
   * @param apiSurvived whether the API process was still running at the end of the runaway
   * @param runawayAt when the report went rogue, from the start of the load
   * @param checkoutCalls every checkout call, in the order they were due
   * @param cards the processes of the case (the API, and the worker when separate)
   */
  public record Side(
      String name,
      Phase before,
      Phase during,
      boolean apiSurvived,
      String ceilings,
      String ceilingsDetail,
      Worker worker,
      Duration runawayAt,
      List<CheckoutCall> checkoutCalls,
      List<ProcessCard> cards) {
    public Side {
      checkoutCalls = List.copyOf(checkoutCalls);
      cards = List.copyOf(cards);
    }
  }

  /** Both cases. */
  public record Result(Side inside, Side separate) {}

  /**
   * One child process as its card shows it at the end of the runaway: its ceilings and what it used
   * of them while the report ran away.
   *
   * @param name "API" or "report worker"
   * @param ceilings what held it, e.g. "cgroup v1 (cpu.cfs_quota_us, ...)"
   * @param cpus the CPUs it was granted
   * @param cpusUsed the CPUs it used on average during the runaway (0 when nothing was sampled)
   * @param memoryLimitBytes its memory limit
   * @param memoryPeakBytes the most it was seen to hold during the runaway (0 when unreadable)
   * @param restarts how many times it was restarted
   * @param state its supervision's state at the end ("RUNNING", "STOPPED", ...)
   * @param lastExit how its latest process ended, or "" when none did
   */
  public record ProcessCard(
      String name,
      String ceilings,
      double cpus,
      double cpusUsed,
      long memoryLimitBytes,
      long memoryPeakBytes,
      int restarts,
      String state,
      String lastExit) {}

  /** Runs both cases, inside first; {@code log} hears what happens as it happens. */
  public static Result run(Settings settings, Consumer<String> log) {
    return new Result(runCase(settings, false, log), runCase(settings, true, log));
  }

  private static Side runCase(Settings settings, boolean separate, Consumer<String> log) {
    String name = separate ? "separate" : "inside";
    Child apiSide = new Child(name, "API", false, log);
    Child workerSide = separate ? new Child(name, "worker", true, log) : null;
    try (WorkerProcess api =
            apiSide.start(
                separate ? ProcessChild.API : ProcessChild.API_WITH_WORKER,
                separate ? API_CPUS : API_CPUS + WORKER_CPUS,
                separate ? API_MEMORY : API_MEMORY + WORKER_MEMORY,
                settings);
        WorkerProcess worker =
            workerSide == null
                ? null
                : workerSide.start(ProcessChild.WORKER, WORKER_CPUS, WORKER_MEMORY, settings)) {
      return measure(settings, name, api, apiSide, worker, workerSide, log);
    }
  }

  private static Side measure(
      Settings settings,
      String name,
      WorkerProcess api,
      Child apiSide,
      WorkerProcess worker,
      Child workerSide,
      Consumer<String> log) {
    ProcessStats apiAtStart = api.stats();
    String detail = detail(apiAtStart, worker == null ? null : worker.stats());
    log.accept(name + ": " + detail);
    URI uri = URI.create("http://127.0.0.1:" + apiSide.awaitReady() + "/");
    if (workerSide != null) {
      workerSide.awaitReady();
    }
    log.accept(
        name
            + ": API at "
            + uri
            + ", load for "
            + Durations.format(settings.before())
            + ", then the runaway report for "
            + Durations.format(settings.during()));

    PacedLoad load = new PacedLoad(uri, CALLS_PER_SECOND, CALL_TIMEOUT);
    load.warmUp(WARM_UP_CALLS);
    load.begin();
    sleep(settings.before());
    long rogueSent = System.nanoTime();
    long rogueAt = rogueSent - load.start();
    Child rogueSide = workerSide != null ? workerSide : apiSide;
    if (!(worker != null ? worker : api).send(ProcessChild.ROGUE)) {
      throw new CliException(
          "the "
              + rogueSide.role
              + " JVM was not running when its report was to go rogue: "
              + rogueSide.lastLines);
    }
    log.accept(name + ": the report went rogue");
    CardReadings apiCard = new CardReadings(api);
    CardReadings workerCard = worker == null ? null : new CardReadings(worker);
    long end = rogueSent + settings.during().toNanos();
    for (long left; (left = end - System.nanoTime()) > 0; ) {
      sleep(Duration.ofNanos(Math.min(left, CARD_PERIOD.toNanos())));
      apiCard.read();
      if (workerCard != null) {
        workerCard.read();
      }
    }
    // The runaway ends when its fate is known, not at a time a busy machine may not keep.
    if (!rogueSide.settled()) {
      log.accept(
          name
              + ": the "
              + rogueSide.role
              + "'s fate is not known yet; the runaway goes on, for at most "
              + Durations.format(FATE_PATIENCE)
              + " more");
      long deadline = System.nanoTime() + FATE_PATIENCE.toNanos();
      for (long left = FATE_PATIENCE.toNanos();
          left > 0 && !rogueSide.awaitSettled(Math.min(left, CARD_PERIOD.toNanos()));
          left = deadline - System.nanoTime()) {
        apiCard.read();
        if (workerCard != null) {
          workerCard.read();
        }
      }
    }
    log.accept(
        name
            + ": the runaway lasted "
            + seconds(System.nanoTime() - rogueSent)
            + (rogueSide.settled()
                ? ""
                : "; the "
                    + rogueSide.role
                    + "'s fate is still unknown, its last lines: "
                    + rogueSide.lastLines));
    boolean apiSurvived = api.stats().pid().isPresent();
    List<PacedLoad.Call> calls;
    try {
      calls = load.stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("the run was interrupted");
    }
    Worker outcome =
        worker != null
            ? separateOutcome(worker, workerSide, rogueSent)
            : insideOutcome(api, apiSide, apiSurvived, rogueSent);
    List<ProcessCard> cards = new ArrayList<>();
    cards.add(apiCard.card("API"));
    if (workerCard != null) {
      cards.add(workerCard.card("report worker"));
    }
    log.accept(
        name + ": API " + (apiSurvived ? "survived" : "died") + "; worker " + outcome.fate());
    List<CheckoutCall> checkouts = new ArrayList<>();
    for (PacedLoad.Call c : calls) {
      if (c.checkout()) {
        checkouts.add(
            new CheckoutCall(Duration.ofNanos(c.dueNanos()), Duration.ofNanos(counted(c)), c.ok()));
      }
    }
    checkouts.sort(Comparator.comparing(CheckoutCall::due));
    return new Side(
        name,
        phase(calls, 0, rogueAt),
        phase(calls, rogueAt, Long.MAX_VALUE),
        apiSurvived,
        apiAtStart.ceilings().kernel() ? "cgroup" : "jvm",
        detail,
        outcome,
        Duration.ofNanos(rogueAt),
        checkouts,
        cards);
  }

  private static Worker insideOutcome(
      WorkerProcess api, Child apiSide, boolean apiSurvived, long rogueSent) {
    String fate;
    int deaths = 0;
    if (apiSurvived) {
      fate = "ran its runaway in the API's JVM, which is still up" + apiSide.fateSeen(rogueSent);
    } else {
      // Not restarted: STOPPED comes once its death, and all it printed, has been taken in.
      apiSide.awaitStopped();
      deaths = 1;
      fate =
          "took the API down with it: "
              + api.stats().lastExit().map(Exit::description).orElse("ended without an exit status")
              + apiSide.fateSeen(rogueSent);
    }
    ProcessStats s = api.stats();
    if (s.ceilings().kernel() && s.throttledPeriods() > 0) {
      fate +=
          "; the API and the worker were throttled together in "
              + s.throttledPeriods()
              + " CPU periods";
    }
    return new Worker(deaths, 0, s.throttledPeriods(), apiSide.spinning.get(), fate);
  }

  private static Worker separateOutcome(WorkerProcess worker, Child workerSide, long rogueSent) {
    ProcessStats s = worker.stats();
    List<String> parts = new ArrayList<>();
    Exit first = workerSide.firstExit.get();
    if (s.deaths() == 0 || first == null) {
      parts.add("kept running" + workerSide.fateSeen(rogueSent));
    } else {
      parts.add(
          first.description()
              + workerSide.fateSeen(rogueSent)
              + (s.deaths() > 1 ? " (" + s.deaths() + " times)" : "")
              + ", restarted alone");
    }
    if (s.ceilings().kernel() && s.throttledPeriods() > 0) {
      parts.add(
          "throttled to its "
              + s.cpus()
              + " CPU share in "
              + s.throttledPeriods()
              + " CPU periods");
    } else if (s.ceilings().kernel()) {
      // A machine busier than the quota: the spinning threads never got their share to exceed.
      parts.add("never throttled: the machine left it less than its " + s.cpus() + " CPU share");
    } else {
      parts.add("spun " + workerSide.spinning.get() + " thread(s) (-XX:ActiveProcessorCount)");
    }
    return new Worker(
        s.deaths(),
        s.restarts(),
        s.throttledPeriods(),
        workerSide.spinning.get(),
        String.join("; ", parts));
  }

  private static String detail(ProcessStats api, ProcessStats worker) {
    String ceilings = "API " + describe(api);
    if (worker != null) {
      ceilings += ", worker " + describe(worker);
    } else {
      ceilings += " (with the worker inside)";
    }
    return api.ceilings().description() + ": " + ceilings;
  }

  private static String describe(ProcessStats s) {
    return String.format(Locale.ROOT, "%.1f CPU %d MiB", s.cpus(), s.memoryLimitBytes() / MIB);
  }

  private static Phase phase(List<PacedLoad.Call> calls, long from, long to) {
    List<Long> login = new ArrayList<>();
    List<Long> checkout = new ArrayList<>();
    int loginErrors = 0;
    int checkoutErrors = 0;
    for (PacedLoad.Call c : calls) {
      if (c.dueNanos() < from || c.dueNanos() >= to) {
        continue;
      }
      (c.checkout() ? checkout : login).add(counted(c));
      if (!c.ok()) {
        if (c.checkout()) {
          checkoutErrors++;
        } else {
          loginErrors++;
        }
      }
    }
    return new Phase(
        Latency.ofNanos(login.stream().mapToLong(Long::longValue).toArray()),
        loginErrors,
        Latency.ofNanos(checkout.stream().mapToLong(Long::longValue).toArray()),
        checkoutErrors);
  }

  /**
   * A call's latency as the figures count it: a failed call counts as the call timeout at least
   * (its user got no answer, however fast the refusal came; a dead API must not look fast).
   */
  private static long counted(PacedLoad.Call c) {
    return c.ok() ? c.latencyNanos() : Math.max(c.latencyNanos(), CALL_TIMEOUT.toNanos());
  }

  /** {@code nanos} in seconds to the millisecond, e.g. "9.123s". */
  private static String seconds(long nanos) {
    return Durations.format(Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(nanos)));
  }

  private static void sleep(Duration d) {
    long end = System.nanoTime() + d.toNanos();
    for (long left; (left = end - System.nanoTime()) > 0; ) {
      LockSupport.parkNanos(left); // the phase lasts this long: a schedule, not an event
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new CliException("the run was interrupted");
      }
    }
  }

  /**
   * What the run reads of one process's card during the runaway, on the run's thread only: the mean
   * of the CPUs used per reading and the most memory seen.
   */
  private static final class CardReadings {
    private final WorkerProcess process;
    private double cpusUsedSum;
    private int readings;
    private long memoryPeak;

    CardReadings(WorkerProcess process) {
      this.process = process;
      process.stats(); // starts the CPU window here: the first reading covers the runaway only
    }

    void read() {
      ProcessStats s = process.stats();
      if (s.pid().isPresent()) {
        cpusUsedSum += s.cpusUsed();
        readings++;
      }
      memoryPeak = Math.max(memoryPeak, s.memoryUsedBytes().orElse(0));
    }

    ProcessCard card(String name) {
      ProcessStats s = process.stats();
      return new ProcessCard(
          name,
          s.ceilings().description(),
          s.cpus(),
          readings == 0 ? 0 : cpusUsedSum / readings,
          s.memoryLimitBytes(),
          memoryPeak,
          s.restarts(),
          s.state().name(),
          s.lastExit().map(Exit::description).orElse(""));
    }
  }

  /**
   * One child of a case: what its output says (the API's port once ready, how many threads the
   * rogue report spun, that its leak reached its cap, its last lines for an error message) and what
   * its listener hears (its first death and when it was heard, a restart, that it stopped). It is
   * settled once its fate is known: its leak held its cap, it stopped, or it was restarted after
   * dying. Output lines arrive on the process's reader thread, state changes on its supervisor's;
   * the run's thread reads them: a completed future, atomics, a latch, and the last lines under
   * their lock.
   */
  private static final class Child {
    private final String caseName;
    final String role;
    private final boolean restarted;
    private final Consumer<String> log;
    private final CompletableFuture<Integer> ready = new CompletableFuture<>();
    final AtomicInteger spinning = new AtomicInteger();
    final AtomicReference<Exit> firstExit = new AtomicReference<>();

    /** System.nanoTime() when its first death was heard; 0 until then. */
    private final AtomicLong firstExitHeard = new AtomicLong();

    /** The bytes its leak held at its cap, alive; 0 until it said so. */
    private final AtomicLong leakHeld = new AtomicLong();

    private final CountDownLatch stopped = new CountDownLatch(1);
    private final CountDownLatch settled = new CountDownLatch(1);
    private final LastLines lastLines = new LastLines(KEPT_OUTPUT_LINES);

    Child(String caseName, String role, boolean restarted, Consumer<String> log) {
      this.caseName = caseName;
      this.role = role;
      this.restarted = restarted;
      this.log = log;
    }

    WorkerProcess start(String childRole, double cpus, long memoryBytes, Settings settings) {
      // The leak would reach twice the process's memory ceiling halfway through the runaway: the
      // ceiling is crossed early enough that a slow, throttled, collecting JVM still gets there.
      long leakCap = 2 * memoryBytes;
      long leakPerSecond =
          Math.max(1, leakCap * 1000 / Math.max(1, settings.during().toMillis() / 2));
      return WorkerProcess.builder(
              role.toLowerCase(Locale.ROOT) + "-" + caseName, ProcessChild.class.getName())
          .arguments(List.of(childRole, Long.toString(leakPerSecond), Long.toString(leakCap)))
          .jvmOptions(List.of("-XX:+UseSerialGC"))
          .cpus(cpus)
          .memoryLimitBytes(memoryBytes)
          .kernelCeilings(settings.allowCgroup())
          .maxRestarts(restarted ? MOST_RESTARTS : 0)
          .backoff(FIRST_BACKOFF, MOST_BACKOFF)
          .output(this::line)
          .listener(this::changed)
          .start();
    }

    private void line(String line) {
      if (line.startsWith(ProcessChild.READY)) {
        try {
          ready.complete(Integer.parseInt(line.substring(ProcessChild.READY.length()).trim()));
        } catch (NumberFormatException e) {
          ready.completeExceptionally(e);
        }
      } else if (line.startsWith(ProcessChild.ROGUE_STARTED)) {
        try {
          int n = Integer.parseInt(line.substring(ProcessChild.ROGUE_STARTED.length()).trim());
          spinning.accumulateAndGet(n, Math::max);
          log.accept(caseName + ": the " + role + "'s rogue report spins " + n + " thread(s)");
        } catch (NumberFormatException e) {
          // Not the line it looked like: counted as no spinning threads.
        }
      } else if (line.startsWith(ProcessChild.LEAK_HELD)) {
        try {
          leakHeld.set(Long.parseLong(line.substring(ProcessChild.LEAK_HELD.length()).trim()));
          settled.countDown();
        } catch (NumberFormatException e) {
          // Not the line it looked like: the runaway's end is still to come.
        }
      }
      lastLines.add(line);
    }

    private void changed(ProcessStats s) {
      s.lastExit()
          .ifPresent(
              e -> {
                if (firstExit.compareAndSet(null, e)) {
                  firstExitHeard.set(System.nanoTime());
                }
              });
      switch (s.state()) {
        case BACKING_OFF ->
            log.accept(
                caseName
                    + ": "
                    + role
                    + " "
                    + s.lastExit().map(Exit::description).orElse("died")
                    + "; restarting it alone in "
                    + Durations.format(s.backoff()));
        case STOPPED -> {
          stopped.countDown();
          settled.countDown();
          ready.completeExceptionally(new IllegalStateException("stopped"));
        }
        case STARTING, RUNNING -> {
          if (s.restarts() > 0) {
            settled.countDown(); // died and was restarted: that is its fate
          }
        }
        default -> {}
      }
    }

    /** The port it printed when ready (0 for the worker). */
    int awaitReady() {
      try {
        return ready.get(READY_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CliException("interrupted while the " + role + " JVM started");
      } catch (ExecutionException | TimeoutException e) {
        throw new CliException(
            "the "
                + role
                + " JVM did not start within "
                + Durations.format(READY_PATIENCE)
                + ": "
                + lastLines);
      }
    }

    boolean settled() {
      return settled.getCount() == 0;
    }

    /** Whether its fate became known within {@code nanos}. */
    boolean awaitSettled(long nanos) {
      try {
        return settled.await(nanos, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CliException("the run was interrupted");
      }
    }

    /**
     * When its fate was seen, from {@code rogueSent}, for the log and the table: ", 9.1s after the
     * report went rogue" for its death or its leak at its cap; "" when neither was seen.
     */
    String fateSeen(long rogueSent) {
      long died = firstExitHeard.get();
      if (died != 0) {
        return ", " + seconds(died - rogueSent) + " after the report went rogue";
      }
      long held = leakHeld.get();
      if (held != 0) {
        return ", its leak holding " + held / MIB + " MiB";
      }
      return "";
    }

    void awaitStopped() {
      try {
        stopped.await(EXIT_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
