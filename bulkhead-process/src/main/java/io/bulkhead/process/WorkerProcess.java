package io.bulkhead.process;

import io.bulkhead.Compartment;
import io.bulkhead.Ticker;
import io.bulkhead.insight.ResourceView;
import io.bulkhead.internal.DaemonThreads;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/*
 * Supervision
 * -----------
 * Algorithm: every change of state happens on one thread, the scheduler's (a single-threaded
 * executor this worker owns, or one the builder was given). start() creates the group and submits
 * launch(). launch() starts the JVM, moves it into the group, publishes it as `current`, goes
 * RUNNING and asks the process's onExit to submit exited(child) to the scheduler. exited() ignores a
 * child that is no longer `current` or a worker that is closing; otherwise it kills what the child
 * left in the group, counts the death, classifies it (the group's OOM count, the output's
 * out-of-heap and launcher lines, the exit value), and either gives up (STOPPED: after maxRestarts
 * restarts in a row, or at once when the JVM said it cannot start) or goes BACKING_OFF and
 * schedules restart() after the backoff (initial, doubled per restart in a row, capped at max). A
 * death after a run of stableAfter (on the ticker) ends the row. close() sets `closing`, kills
 * `current` and its descendants at once, and submits finish(): kill them again, kill every process
 * left in the group until it lists none, reap `current`, remove the group, go STOPPED, remove the
 * shutdown hook. The listener is called on the scheduler thread after each change, so it hears the
 * changes in order and never under a lock (there is none on this path).
 *
 * Invariants: `state`, `current`, `deaths`, `restarts`, `streak`, `lastExit`, `backoff` are written
 * only on the scheduler thread (volatile, for stats() on other threads). At most one process of
 * this worker is alive at a time, except for the instant between a death and its reaping; under a
 * control group, nothing the previous process started outlives its death (exited() kills the group
 * before a restart). Once `closing` is set, no process is started that is not killed, and finish()
 * runs exactly once (`finished`). The group is removed only once it lists no process.
 *
 * Races:
 *   close() on T1 while launch() on the scheduler is starting a process P. launch() publishes
 *      `current` = P, then reads `closing`; close() writes `closing`, then reads `current` (both
 *      volatile). Either close() sees P and kills it, or launch() sees `closing` and kills it; and
 *      finish(), queued behind launch(), reaps P before removing the group.
 *   The child exits while close() runs. Its exited() is queued after or before finish(): after, it
 *      sees `closing` (or `finished`) and does nothing; before, it may go BACKING_OFF and schedule a
 *      restart, whose restart() then finds `closing` and starts nothing. The death is counted or not,
 *      but no process is started and STOPPED is the last state the listener hears.
 *   The restart timer fires while close() runs: restart() runs on the scheduler, before or after
 *      finish(); before, it starts P and the first race applies; after, it sees `closing`.
 *   A process of the group forks while finish() kills: the child is born in the group and the next
 *      reading of cgroup.procs finds it (ControlGroup.killAll). Under JVM ceilings a fork in the
 *      instant between the last look at the descendants and the kill of their parent escapes.
 *   The JVM shuts down (Ctrl-C): the shutdown hook calls close(), which works the same way; the
 *      scheduler's thread still runs while hooks run. A parent killed with SIGKILL runs no hook: the
 *      child should exit when its standard input ends (the tests' worker does); its group stays.
 *   close() is called twice, or from the hook and the application at once: the second caller waits
 *      for the first one's finish() (bounded).
 */

/**
 * A worker class run in a child JVM with its own CPU and memory ceiling, restarted with backoff
 * when it dies: a bulkhead at the level of processes, for what a compartment cannot contain (a
 * report that spins every core, leaks memory until its JVM dies, or crashes its process).
 *
 * <pre>{@code
 * WorkerProcess reports = WorkerProcess.builder("reports", "com.example.ReportWorker")
 *     .cpus(0.5)                                     // a CFS quota of half a CPU
 *     .memoryLimitBytes(192L << 20)                  // 192 MiB, swap off
 *     .backoff(Duration.ofMillis(100), Duration.ofSeconds(5))
 *     .listener(stats -> log.info("reports: {}", stats.state()))
 *     .start();
 * reports.send("run daily-sales");                   // a line on the worker's standard input
 * insight.snapshot(reports.resources());             // its card: CPU, memory, restarts
 * reports.close();                                   // ends it and all it started
 * }</pre>
 *
 * <p>The ceilings are the kernel's where this process may create a control group (Linux, root, a
 * writable cgroup v1 or v2 hierarchy): CPU quota, memory without swap, a threads cap; otherwise
 * {@code -Xmx} and {@code -XX:ActiveProcessorCount}. {@link ProcessStats#ceilings()} says which.
 * States: {@link State#STARTING}, {@link State#RUNNING}, {@link State#BACKING_OFF} between a death
 * and its restart, {@link State#STOPPED} after {@link #close()}, after {@linkplain
 * Builder#maxRestarts the restarts in a row} or when the JVM cannot start. Each death's cause is an
 * {@link Exit}, with the last lines the process printed. {@link #close()} (or a shutdown hook, when
 * the JVM exits first) ends every process the worker started and removes its group. The package
 * documentation states what is guaranteed on which platform. This class is thread-safe.
 */
public final class WorkerProcess implements AutoCloseable {

  /** Where a worker's supervision is. */
  public enum State {
    /** A process is being started and put into its ceilings. */
    STARTING,
    /** A process runs inside its ceilings. */
    RUNNING,
    /** The process died; another starts after {@link ProcessStats#backoff()}. */
    BACKING_OFF,
    /** Closed, or no more restarts: no process runs and none will start. */
    STOPPED
  }

  /**
   * Hears every change of a worker's state, in order, on the thread that supervises it: keep it
   * quick, and do not call {@link #close()} from it (that would wait for itself; it gives up after
   * a while and cleans up on the calling thread).
   */
  @FunctionalInterface
  public interface Listener {
    /** The worker entered {@code stats.state()}; {@code stats} is read right after the change. */
    void onChange(ProcessStats stats);
  }

  private static final System.Logger LOG = System.getLogger("io.bulkhead.process");
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

  /**
   * The longest line handed to the output consumer, in bytes of UTF-8: a longer one is handed over
   * in pieces, so that the output never takes more than this of the supervisor's heap.
   */
  static final int MAX_LINE_BYTES = 8192;

  /** How much of the output one read takes from the pipe. */
  private static final int READ_BYTES = 16 * 1024;

  /** How long a killed process, or the output it left in its pipe, may take to be gone. */
  private static final Duration EXIT_PATIENCE = Duration.ofSeconds(10);

  /** How long close() waits for the supervising thread before cleaning up on its own. */
  private static final Duration CLOSE_PATIENCE = Duration.ofSeconds(30);

  private static final long MIB = 1024 * 1024;
  private static final double MILLI = 1000;

  /** The least memory a worker JVM can start in. */
  private static final long LEAST_MEMORY_BYTES = 16 * MIB;

  /** The fewest threads a worker JVM can start with (it starts about 20 of its own). */
  private static final int LEAST_THREADS = 32;

  private final String name;
  private final String mainClass;
  private final List<String> arguments;
  private final List<String> jvmOptions;
  private final String classpath;
  private final double cpus;
  private final long memoryLimitBytes;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final int maxRestarts;
  private final Duration stableAfter;
  private final Listener listener;
  private final @Nullable Consumer<String> output;
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private final Ticker ticker;
  private final ControlGroup group;
  private final Thread shutdownHook;

  private final AtomicBoolean closing = new AtomicBoolean();
  private final AtomicBoolean finished = new AtomicBoolean();
  private final CountDownLatch stopped = new CountDownLatch(1);

  /** The CPU time read by the previous stats(), for the CPUs used since. */
  private final AtomicReference<@Nullable CpuReading> lastCpu = new AtomicReference<>();

  private volatile State state = State.STARTING;
  private volatile @Nullable Child current;
  private volatile int deaths;
  private volatile int restarts;

  /** Restarts since the last death of a process that had run stableAfter: what maxRestarts caps. */
  private volatile int streak;

  private volatile @Nullable Exit lastExit;
  private volatile Duration backoff = Duration.ZERO;

  private WorkerProcess(Builder b, ControlGroup group) {
    this.name = b.name;
    this.mainClass = b.mainClass;
    this.arguments = b.arguments;
    this.jvmOptions = b.jvmOptions;
    this.classpath = b.classpath;
    this.cpus = b.cpus;
    this.memoryLimitBytes = b.memoryLimitBytes;
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
    this.maxRestarts = b.maxRestarts;
    this.stableAfter = b.stableAfter;
    this.listener = b.listener;
    this.output = b.output;
    this.ticker = b.ticker;
    this.group = group;
    ScheduledExecutorService given = b.scheduler;
    if (given == null) {
      ScheduledThreadPoolExecutor own =
          new ScheduledThreadPoolExecutor(1, DaemonThreads.named("bulkhead-process-" + b.name));
      own.setExecuteExistingDelayedTasksAfterShutdownPolicy(false); // a pending restart is dropped
      this.scheduler = own;
      this.ownsScheduler = true;
    } else {
      this.scheduler = given;
      this.ownsScheduler = false;
    }
    this.shutdownHook = new Thread(this::close, "bulkhead-process-" + b.name + "-cleanup");
  }

  /**
   * Starts building a worker named {@code name} (letters, digits, {@code . _ -}; it names its
   * control group) that runs {@code mainClass}'s {@code main} in a child JVM.
   */
  public static Builder builder(String name, String mainClass) {
    return new Builder(name, mainClass);
  }

  /** The worker's name. */
  public String name() {
    return name;
  }

  /** Where its supervision is now. */
  public State state() {
    return state;
  }

  /**
   * Its figures now. The CPUs used are those since the previous call (or since the current process
   * started), so a dashboard that calls this once a second sees the last second.
   */
  public ProcessStats stats() {
    Child c = current;
    State s = state;
    boolean live = c != null && c.process.isAlive() && s != State.STOPPED;
    double used = 0;
    OptionalLong pid = OptionalLong.empty();
    OptionalLong memory = OptionalLong.empty();
    if (live) {
      pid = OptionalLong.of(c.process.pid());
      used = cpusUsedSince(c);
      memory = group.kind().kernel() ? group.memoryUsed() : residentBytes(c.process.pid());
    }
    return new ProcessStats(
        name,
        s,
        pid,
        group.kind(),
        cpus,
        used,
        memoryLimitBytes,
        memory,
        group.throttledPeriods(),
        deaths,
        restarts,
        Optional.ofNullable(lastExit),
        s == State.BACKING_OFF ? backoff : Duration.ZERO);
  }

  /**
   * Writes {@code line} and a newline to the current process's standard input; false when none runs
   * or it is gone (the line is then lost: it is not kept for the next process).
   */
  public boolean send(String line) {
    Objects.requireNonNull(line, "line");
    Child c = current;
    return c != null && state == State.RUNNING && c.send(line);
  }

  /**
   * A view for {@link io.bulkhead.insight.Insight#snapshot(ResourceView)} that shows this worker as
   * the resource behind the compartment of the same name (the one that bounds the calls sent to
   * it), of kind {@code "process"}, with figures {@code cpuUsedMilli} and {@code cpuQuotaMilli}
   * (thousandths of a CPU), {@code memoryUsedMiB} and {@code memoryLimitMiB}, {@code restarts} and
   * {@code throttledPeriods}; the dashboard draws them on the compartment's card.
   */
  public ResourceView resources() {
    return (Compartment c) ->
        c.name().equals(name) ? Optional.of(resource(stats())) : Optional.empty();
  }

  /** The figures of {@link #resources()} for {@code s}. */
  static ResourceView.Resource resource(ProcessStats s) {
    Map<String, Long> figures = new LinkedHashMap<>();
    figures.put("cpuUsedMilli", Math.round(s.cpusUsed() * MILLI));
    figures.put("cpuQuotaMilli", Math.round(s.cpus() * MILLI));
    figures.put("memoryUsedMiB", s.memoryUsedBytes().orElse(0) / MIB);
    figures.put("memoryLimitMiB", s.memoryLimitBytes() / MIB);
    figures.put("restarts", (long) s.restarts());
    figures.put("throttledPeriods", s.throttledPeriods());
    String memory =
        s.memoryUsedBytes().isPresent()
            ? s.memoryUsedBytes().getAsLong() / MIB + " of " + s.memoryLimitBytes() / MIB + " MiB"
            : "? of " + s.memoryLimitBytes() / MIB + " MiB";
    String summary =
        String.format(
            Locale.ROOT,
            "process %s%s, %s under %s: %.2f of %.2f CPU, %s, " + "restarted %d times%s",
            s.name(),
            s.pid().isPresent() ? " (pid " + s.pid().getAsLong() + ")" : "",
            s.state(),
            s.ceilings().description(),
            s.cpusUsed(),
            s.cpus(),
            memory,
            s.restarts(),
            s.lastExit().map(e -> "; last " + e.description()).orElse(""));
    return new ResourceView.Resource("process", figures, summary);
  }

  /**
   * Kills the current process, waits for it to be gone, removes the control group and goes {@link
   * State#STOPPED}; a restart that was due is dropped. Idempotent; a second caller waits for the
   * first (bounded).
   */
  @Override
  public void close() {
    if (!closing.compareAndSet(false, true)) {
      awaitStopped();
      return;
    }
    Child c = current; // see the comment at the top: launch() or this kills a process just started
    if (c != null) {
      c.destroyAll();
    }
    try {
      scheduler.submit(this::finish).get(CLOSE_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException | ExecutionException | TimeoutException e) {
      finish(); // the supervising thread is gone or stuck: clean up here
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      finish();
    }
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
  }

  private void awaitStopped() {
    try {
      if (!stopped.await(CLOSE_PATIENCE.toMillis(), TimeUnit.MILLISECONDS)) {
        LOG.log(
            System.Logger.Level.WARNING,
            "worker " + name + " did not stop within " + CLOSE_PATIENCE);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---- on the scheduler's thread ------------------------------------------------------------

  private void begin() {
    try {
      Runtime.getRuntime().addShutdownHook(shutdownHook);
    } catch (IllegalStateException shuttingDown) {
      group.remove();
      throw new IllegalStateException("worker " + name + " not started: the JVM is shutting down");
    }
    try {
      scheduler.execute(this::launch);
    } catch (RejectedExecutionException e) {
      close();
      throw new IllegalStateException("scheduler of worker " + name + " accepts no task", e);
    }
  }

  private void launch() {
    if (closing.get()) {
      return;
    }
    transition(State.STARTING);
    Child c;
    try {
      c = Child.start(command(), name, output);
    } catch (IOException e) {
      died(
          new Exit(Exit.Cause.DID_NOT_START, -1, "did not start: " + e.getMessage(), List.of()),
          false);
      return;
    }
    current = c;
    if (closing.get()) {
      c.destroyAll(); // close() may have read `current` before this write
      return;
    }
    try {
      group.enter(c.process.pid());
    } catch (IOException e) {
      c.destroyAll();
      awaitExit(c);
      died(
          new Exit(
              Exit.Cause.DID_NOT_START,
              -1,
              "could not enter its control group " + group.dirs() + ": " + e.getMessage(),
              List.of()),
          false);
      return;
    }
    c.oomKillsAtStart = group.oomKills();
    c.readCpu(ticker);
    c.runningSince = ticker.read();
    c.startReading();
    transition(State.RUNNING);
    c.process
        .onExit()
        .thenRun(
            () -> {
              try {
                scheduler.execute(() -> exited(c));
              } catch (RejectedExecutionException closed) {
                // The worker was closed and its scheduler shut down: finish() reaped this process.
              }
            });
  }

  private void exited(Child c) {
    if (c != current || closing.get()) {
      return;
    }
    awaitExit(c);
    c.awaitOutput();
    // What this incarnation started and left behind dies with it (the next one starts afresh).
    List<Long> left = group.killAll();
    if (!left.isEmpty()) {
      LOG.log(System.Logger.Level.WARNING, "worker " + name + ": processes " + left + " survive");
    }
    boolean stable = ticker.read() - c.runningSince - stableAfter.toNanos() >= 0;
    died(classify(c), stable);
  }

  private Exit classify(Child c) {
    int code = c.process.exitValue();
    List<String> last = c.lines.lastLines();
    if (group.oomKills() > c.oomKillsAtStart && code > Exit.SIGNAL_BASE) {
      return new Exit(
          Exit.Cause.KILLED_AT_MEMORY_LIMIT,
          code,
          "killed by the kernel at its " + memoryLimitBytes / MIB + " MiB memory limit",
          last);
    }
    if (c.lines.outOfHeap()) {
      return new Exit(
          Exit.Cause.OUT_OF_HEAP,
          code,
          "out of heap at -Xmx, exited (-XX:+ExitOnOutOfMemoryError)",
          last);
    }
    if (c.lines.launcherFailed() && code == 1) {
      return new Exit(
          Exit.Cause.DID_NOT_START, code, "did not start: " + launcherError(last), last);
    }
    if (code > Exit.SIGNAL_BASE) {
      return new Exit(
          Exit.Cause.SIGNALLED, code, "killed by signal " + (code - Exit.SIGNAL_BASE), last);
    }
    return new Exit(Exit.Cause.EXITED, code, "exited with code " + code, last);
  }

  /** The launcher's error line among {@code lines}, and the cause it gives on the next one. */
  private static String launcherError(List<String> lines) {
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (OutputLines.LAUNCHER_ERRORS.stream().anyMatch(line::startsWith)) {
        String error = line.substring("Error: ".length());
        return i + 1 < lines.size() && lines.get(i + 1).startsWith("Caused by: ")
            ? error + " (" + lines.get(i + 1) + ")"
            : error;
      }
    }
    return "the JVM could not start its main class"; // the line scrolled out of the tail
  }

  /**
   * Counts a death and restarts after the backoff, or gives up: after {@code maxRestarts} restarts
   * in a row, or at once when the JVM said it cannot start (another try would fail the same way). A
   * death after a {@code stable} run starts the count and the backoff afresh.
   */
  private void died(Exit exit, boolean stable) {
    deaths++;
    lastExit = exit;
    if (closing.get()) {
      return;
    }
    if (stable) {
      streak = 0;
    }
    // The JVM itself said it cannot start (code 1); -1 is a start that failed here, which may pass.
    boolean hopeless = exit.cause() == Exit.Cause.DID_NOT_START && exit.code() >= 0;
    if (hopeless || streak >= maxRestarts) {
      LOG.log(
          System.Logger.Level.WARNING,
          "worker "
              + name
              + " "
              + exit.description()
              + (hopeless
                  ? "; not restarted: another try would fail the same way"
                  : "; not restarted after " + streak + " restarts in a row")
              + (exit.lastLines().isEmpty()
                  ? ""
                  : "; its last lines:\n  " + String.join("\n  ", exit.lastLines())));
      transition(State.STOPPED);
      return;
    }
    backoff = backoffBefore(streak + 1);
    transition(State.BACKING_OFF);
    try {
      scheduler.schedule(this::restart, backoff.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException closed) {
      // close() shut the scheduler down meanwhile: no restart is wanted.
    }
  }

  private void restart() {
    if (closing.get()) {
      return;
    }
    restarts++;
    streak++;
    launch();
  }

  /**
   * The wait before restart {@code n} (1 for the first): initial, doubled each time, at most max.
   */
  Duration backoffBefore(int n) {
    Duration d = initialBackoff;
    for (int i = 1; i < n && d.compareTo(maxBackoff) < 0; i++) {
      d = d.multipliedBy(2);
    }
    return d.compareTo(maxBackoff) > 0 ? maxBackoff : d;
  }

  /**
   * Kills the current process and everything it started, reaps it, removes the group, goes STOPPED.
   * Runs once.
   */
  private void finish() {
    if (!finished.compareAndSet(false, true)) {
      return;
    }
    try {
      Child c = current;
      if (c != null) {
        c.destroyAll();
      }
      boolean removed = group.remove(); // kills whatever is left in it first
      if (c != null) {
        awaitExit(c);
        c.closeInput();
      }
      if (!removed) {
        LOG.log(System.Logger.Level.WARNING, "could not remove control group " + group.dirs());
      }
      if (state != State.STOPPED) {
        transition(State.STOPPED);
      }
      try {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException shuttingDown) {
        // This is the hook running, or the JVM is on its way out: nothing to unregister.
      }
    } finally {
      stopped.countDown();
    }
  }

  private void transition(State next) {
    state = next;
    try {
      listener.onChange(stats());
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "listener of worker " + name + " failed", e);
    }
  }

  private static void awaitExit(Child c) {
    try {
      c.process.onExit().get(EXIT_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      LOG.log(System.Logger.Level.WARNING, "process " + c.process.pid() + " did not end: " + e);
    }
  }

  private List<String> command() {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(group.jvmOptions());
    command.add("-XX:+ExitOnOutOfMemoryError");
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(classpath);
    command.add(mainClass);
    command.addAll(arguments);
    return command;
  }

  private double cpusUsedSince(Child c) {
    CpuReading now = c.readCpu(ticker);
    CpuReading before = lastCpu.getAndSet(now);
    if (before == null || before.pid() != now.pid()) {
      before = c.firstCpu;
    }
    long wall = now.atNanos() - before.atNanos();
    return wall <= 0 ? 0 : Math.max(0, now.cpuNanos() - before.cpuNanos()) / (double) wall;
  }

  /** The resident set of process {@code pid} from {@code /proc}; empty where there is none. */
  private static OptionalLong residentBytes(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("VmRSS:")) {
          String[] parts = line.trim().split("\\s+");
          return OptionalLong.of(Long.parseLong(parts[1]) * 1024); // the kernel says kB
        }
      }
    } catch (IOException | RuntimeException gone) {
      return OptionalLong.empty();
    }
    return OptionalLong.empty();
  }

  @Override
  public String toString() {
    return "WorkerProcess[" + name + ", " + state + "]";
  }

  private record CpuReading(long pid, long atNanos, long cpuNanos) {}

  /**
   * One process of the worker: its standard input (writes under `inputLock`, from any thread), and
   * a thread of its own that reads its output into `lines` (which hands each line to the output
   * consumer and notes what the supervisor needs of it, read after awaitOutput()).
   */
  private static final class Child {
    final Process process;
    final OutputLines lines;
    private final Writer input;
    private final ReentrantLock inputLock = new ReentrantLock();
    private final Thread reader;

    /** The group's OOM kills when this process started: written before onExit is watched. */
    volatile long oomKillsAtStart;

    /** The ticker's reading when it went RUNNING: written before onExit is watched. */
    volatile long runningSince;

    volatile CpuReading firstCpu = new CpuReading(-1, 0, 0);

    private Child(Process process, String name, @Nullable Consumer<String> output) {
      this.process = process;
      this.lines =
          new OutputLines(
              MAX_LINE_BYTES,
              output,
              e -> LOG.log(System.Logger.Level.WARNING, "output consumer failed", e));
      this.input = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
      this.reader =
          DaemonThreads.named("bulkhead-process-" + name + "-output").newThread(this::read);
    }

    static Child start(List<String> command, String name, @Nullable Consumer<String> output)
        throws IOException {
      return new Child(new ProcessBuilder(command).redirectErrorStream(true).start(), name, output);
    }

    /**
     * Kills the process and the processes it started. The descendants go first: once the process is
     * dead they are re-parented and no longer found through it. A round kills those found that were
     * not yet killed, until a round finds none, so a fork during one round is found by the next;
     * one made between the last round and the process's own kill escapes (under JVM ceilings only:
     * a control group holds them all, see ControlGroup.killAll).
     */
    void destroyAll() {
      Set<Long> killed = new HashSet<>();
      boolean found = true;
      while (found) {
        found = false;
        for (ProcessHandle p : (Iterable<ProcessHandle>) process.descendants()::iterator) {
          if (killed.add(p.pid())) {
            p.destroyForcibly();
            found = true;
          }
        }
      }
      process.destroyForcibly();
    }

    void startReading() {
      reader.start();
    }

    CpuReading readCpu(Ticker ticker) {
      long cpu = process.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
      CpuReading r = new CpuReading(process.pid(), ticker.read(), cpu);
      if (firstCpu.pid() < 0) {
        firstCpu = r;
      }
      return r;
    }

    boolean send(String line) {
      inputLock.lock();
      try {
        input.write(line);
        input.write('\n');
        input.flush();
        return true;
      } catch (IOException gone) {
        return false;
      } finally {
        inputLock.unlock();
      }
    }

    void closeInput() {
      inputLock.lock();
      try {
        input.close();
      } catch (IOException gone) {
        // Its process is dead: nothing to flush.
      } finally {
        inputLock.unlock();
      }
    }

    /** Waits (bounded) until everything the dead process printed has been read. */
    void awaitOutput() {
      if (reader.getState() == Thread.State.NEW) {
        return;
      }
      try {
        reader.join(EXIT_PATIENCE.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private void read() {
      byte[] buffer = new byte[READ_BYTES];
      try (InputStream in = process.getInputStream()) {
        for (int n; (n = in.read(buffer)) >= 0; ) {
          lines.accept(buffer, 0, n);
        }
      } catch (IOException gone) {
        // The pipe broke with the process: what it printed until then was handed over.
      } finally {
        lines.end();
      }
    }
  }

  /**
   * Settings of a {@link WorkerProcess}; {@link #start()} copies them, so a builder may be reused.
   * Defaults: 1 CPU, 256 MiB, kernel ceilings where possible, backoff from 100 ms doubling to 5 s,
   * 10 restarts, this JVM's classpath.
   */
  public static final class Builder {
    private final String name;
    private final String mainClass;
    private List<String> arguments = List.of();
    private List<String> jvmOptions = List.of();
    private String classpath = System.getProperty("java.class.path", "");
    private double cpus = 1;
    private long memoryLimitBytes = 256 * MIB;
    private boolean kernelCeilings = true;
    private Duration initialBackoff = Duration.ofMillis(100);
    private Duration maxBackoff = Duration.ofSeconds(5);
    private int maxRestarts = 10;
    private Duration stableAfter = Duration.ofMinutes(10);
    private int maxThreads = 1024;
    private Listener listener = stats -> {};
    private @Nullable Consumer<String> output;
    private @Nullable ScheduledExecutorService scheduler;
    private Ticker ticker = Ticker.system();

    private Builder(String name, String mainClass) {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(mainClass, "mainClass");
      if (!NAME.matcher(name).matches()) {
        throw new IllegalArgumentException(
            "name must be 1 to 64 letters, digits, '.', '_' or '-',"
                + " starting with a letter or digit, but was '"
                + name
                + "'");
      }
      if (mainClass.isBlank()) {
        throw new IllegalArgumentException("mainClass must name a class but was blank");
      }
      this.name = name;
      this.mainClass = mainClass;
    }

    /** The arguments of the worker's {@code main}. */
    public Builder arguments(List<String> arguments) {
      this.arguments = List.copyOf(arguments);
      return this;
    }

    /** More options for the child JVM ({@code -XX:+UseSerialGC}, say), after the ceilings' own. */
    public Builder jvmOptions(List<String> jvmOptions) {
      this.jvmOptions = List.copyOf(jvmOptions);
      return this;
    }

    /** The child's classpath; default this JVM's ({@code java.class.path}). */
    public Builder classpath(String classpath) {
      this.classpath = Objects.requireNonNull(classpath, "classpath");
      return this;
    }

    /** The CPUs granted, from 0.01: a CFS quota under cgroup ceilings. */
    public Builder cpus(double cpus) {
      if (!(cpus >= 0.01) || Double.isInfinite(cpus)) {
        throw new IllegalArgumentException("cpus must be at least 0.01 but was " + cpus);
      }
      this.cpus = cpus;
      return this;
    }

    /** The memory limit, from 16 MiB: without swap under cgroup ceilings. */
    public Builder memoryLimitBytes(long bytes) {
      if (bytes < LEAST_MEMORY_BYTES) {
        throw new IllegalArgumentException(
            "memoryLimitBytes must be at least "
                + LEAST_MEMORY_BYTES
                + " (16 MiB) but was "
                + bytes);
      }
      this.memoryLimitBytes = bytes;
      return this;
    }

    /** False to use JVM options as ceilings even where a control group could be created. */
    public Builder kernelCeilings(boolean wanted) {
      this.kernelCeilings = wanted;
      return this;
    }

    /** The wait before the first restart, doubled before each next one up to {@code max}. */
    public Builder backoff(Duration initial, Duration max) {
      Objects.requireNonNull(initial, "initial");
      Objects.requireNonNull(max, "max");
      if (initial.isNegative() || initial.isZero()) {
        throw new IllegalArgumentException("backoff initial must be positive but was " + initial);
      }
      if (max.compareTo(initial) < 0) {
        throw new IllegalArgumentException(
            "backoff max must be at least initial (" + initial + ") but was " + max);
      }
      this.initialBackoff = initial;
      this.maxBackoff = max;
      return this;
    }

    /**
     * The most threads of the worker's processes together, from 32: the control group's {@code
     * pids.max} (a process counts its threads), so that a worker that spawns without end is refused
     * more rather than take the machine. Not enforced under JVM ceilings. Default 1,024.
     */
    public Builder maxThreads(int maxThreads) {
      if (maxThreads < LEAST_THREADS) {
        throw new IllegalArgumentException(
            "maxThreads must be at least " + LEAST_THREADS + " but was " + maxThreads);
      }
      this.maxThreads = maxThreads;
      return this;
    }

    /**
     * How many times in a row a dying worker is restarted before it stays {@link State#STOPPED}; 0:
     * never. A process that ran {@linkplain #stableAfter stably} before it died starts the count
     * (and the backoff) afresh. A worker whose JVM says it cannot start (a missing main class, a
     * bad JVM option) is not restarted: {@link Exit.Cause#DID_NOT_START}.
     */
    public Builder maxRestarts(int maxRestarts) {
      if (maxRestarts < 0) {
        throw new IllegalArgumentException("maxRestarts must be 0 or more but was " + maxRestarts);
      }
      this.maxRestarts = maxRestarts;
      return this;
    }

    /**
     * How long a process must have run for its death to count as a first one again: the backoff
     * starts at its initial wait and {@link #maxRestarts} counts from zero (as Docker and
     * Kubernetes reset theirs). Measured with the {@link #ticker}. Default 10 minutes.
     */
    public Builder stableAfter(Duration stableAfter) {
      Objects.requireNonNull(stableAfter, "stableAfter");
      if (stableAfter.isNegative() || stableAfter.isZero()) {
        throw new IllegalArgumentException("stableAfter must be positive but was " + stableAfter);
      }
      this.stableAfter = stableAfter;
      return this;
    }

    /** Hears every change of state, in order (see {@link Listener}). */
    public Builder listener(Listener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Hears every line the worker prints (standard output and error), on a thread per process; keep
     * it quick and thread-safe. A line longer than 8 KiB of UTF-8 comes in pieces of at most that
     * (a worker that prints without newlines cannot take the supervisor's heap). Default: the lines
     * are dropped, without being decoded; {@link Exit#lastLines()} keeps the last ones either way.
     */
    public Builder output(Consumer<String> output) {
      this.output = Objects.requireNonNull(output, "output");
      return this;
    }

    /**
     * The thread to supervise on and to time the backoff with; default a daemon thread of the
     * worker's own, stopped by {@link #close()}. One given here must run one task at a time (a
     * single thread, as {@link java.util.concurrent.Executors#newSingleThreadScheduledExecutor()}
     * makes): the supervision relies on it. It is not shut down by the worker.
     */
    public Builder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * The clock that CPU use and {@link #stableAfter} are measured with; default {@link
     * Ticker#system()}.
     */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * Creates the worker's ceilings and starts its first process (asynchronously: the worker is
     * {@link State#STARTING} on return). Close it when done.
     */
    public WorkerProcess start() {
      ControlGroup group =
          ControlGroup.create(
              name, new ControlGroup.Limits(cpus, memoryLimitBytes, maxThreads), kernelCeilings);
      WorkerProcess w = new WorkerProcess(this, group);
      w.begin();
      return w;
    }
  }
}
