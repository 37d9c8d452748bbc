package io.bulkhead.scenarios;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
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
 *       192 MiB) and the API keeps its own ({@value #API_CPUS} CPU, 256 MiB); a worker that dies
 *       is restarted alone.
 * </ul>
 *
 * <p>Both cases run in child JVMs started from this JVM's classpath, so that this process survives
 * to report what happened. The ceilings are the kernel's when this process may create control
 * groups (see {@link Ceilings}), the JVM's otherwise. Load: {@value #CALLS_PER_SECOND} logins and
 * as many checkouts per second, due on the clock, after a warm-up the figures leave out; a call's
 * latency counts from when it was due. A call is an error when it is not answered 200 within
 * {@link #CALL_TIMEOUT}, and its latency then counts as that timeout at least.
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
  /** How long a killed child may take to be gone. */
  private static final Duration EXIT_PATIENCE = Duration.ofSeconds(10);
  /** A worker that keeps dying is not restarted forever. */
  private static final int MOST_RESTARTS = 10;
  private static final Duration RESTART_BACKOFF = Duration.ofMillis(200);
  /** The exit code of a JVM that stopped at its heap ceiling with -XX:+ExitOnOutOfMemoryError. */
  private static final int OUT_OF_HEAP = 3;
  /** The exit code Java reports for a process killed by SIGKILL (128 + 9). */
  private static final int KILLED = 137;
  private static final int KEPT_OUTPUT_LINES = 20;
  private static final Duration LONGEST_PHASE = Duration.ofHours(1);

  private ProcessIsolation() {}

  /**
   * What to run.
   *
   * @param before how long the load runs before the report goes rogue
   * @param during how long it runs after
   * @param allowCgroup false to use the JVM's ceilings even where control groups are at hand
   */
  public record Settings(Duration before, Duration during, boolean allowCgroup) {
    public Settings {
      check("--before", before);
      check("--during", during);
    }

    private static void check(String option, Duration d) {
      if (d.compareTo(Duration.ofSeconds(1)) < 0 || d.compareTo(LONGEST_PHASE) > 0) {
        throw new CliException(option + " must be from 1 s to " + Durations.format(LONGEST_PHASE)
            + " but was " + Durations.format(d));
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
  public record Worker(int deaths, int restarts, long throttledPeriods, int spinningThreads,
      String fate) {}

  /**
   * One checkout call, for a chart.
   *
   * @param due when it was due, from the start of the load
   * @param latency from when it was due to its answer (a failure counts as the call timeout at least)
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
   */
  public record Side(String name, Phase before, Phase during, boolean apiSurvived, String ceilings,
      String ceilingsDetail, Worker worker, Duration runawayAt, List<CheckoutCall> checkoutCalls) {
    public Side {
      checkoutCalls = List.copyOf(checkoutCalls);
    }
  }

  /** Both cases. */
  public record Result(Side inside, Side separate) {}

  /** Runs both cases, inside first; {@code log} hears what happens as it happens. */
  public static Result run(Settings settings, Consumer<String> log) {
    return new Result(runCase(settings, false, log), runCase(settings, true, log));
  }

  private static Side runCase(Settings settings, boolean separate, Consumer<String> log) {
    String name = separate ? "separate" : "inside";
    Leftovers leftovers = new Leftovers();
    Thread hook = new Thread(leftovers::close, "process-isolation-cleanup");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      return measure(settings, separate, name, leftovers, log);
    } finally {
      leftovers.close();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // The hook runs (or ran) anyway; close is idempotent.
      }
    }
  }

  private static Side measure(Settings settings, boolean separate, String name,
      Leftovers leftovers, Consumer<String> log) {
    Ceilings.Group apiGroup = leftovers.group(Ceilings.create("api-" + name,
        separate ? API_CPUS : API_CPUS + WORKER_CPUS,
        separate ? API_MEMORY : API_MEMORY + WORKER_MEMORY, settings.allowCgroup()));
    Ceilings.Group workerGroup = separate
        ? leftovers.group(Ceilings.create("worker", WORKER_CPUS, WORKER_MEMORY,
            settings.allowCgroup()))
        : null;
    String detail = detail(apiGroup, workerGroup);
    log.accept(name + ": " + detail);

    Child api = Child.start(separate ? ProcessChild.API : ProcessChild.API_WITH_WORKER, apiGroup,
        settings.during(), leftovers);
    URI uri = URI.create("http://127.0.0.1:" + api.port() + "/");
    Supervisor supervisor = separate
        ? new Supervisor(Child.start(ProcessChild.WORKER, workerGroup, settings.during(), leftovers),
            workerGroup, settings.during(), leftovers, log)
        : null;
    if (supervisor != null) {
      supervisor.start();
    }
    log.accept(name + ": API at " + uri + ", load for " + Durations.format(settings.before())
        + ", then the runaway report for " + Durations.format(settings.during()));

    PacedLoad load = new PacedLoad(uri, CALLS_PER_SECOND, CALL_TIMEOUT);
    load.warmUp(WARM_UP_CALLS);
    load.begin();
    sleep(settings.before());
    long rogueAt = System.nanoTime() - load.start();
    Child rogueHost = supervisor != null ? supervisor.current() : api;
    rogueHost.send(ProcessChild.ROGUE);
    log.accept(name + ": the report went rogue");
    sleep(settings.during());
    boolean apiSurvived = api.process.isAlive();
    List<PacedLoad.Call> calls;
    try {
      calls = load.stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("the run was interrupted");
    }
    Worker worker;
    if (supervisor != null) {
      supervisor.stop();
      worker = supervisor.outcome();
    } else {
      worker = insideOutcome(api, apiGroup, apiSurvived);
    }
    log.accept(name + ": API " + (apiSurvived ? "survived" : "died") + "; worker " + worker.fate());
    List<CheckoutCall> checkouts = new ArrayList<>();
    for (PacedLoad.Call c : calls) {
      if (c.checkout()) {
        checkouts.add(new CheckoutCall(Duration.ofNanos(c.dueNanos()),
            Duration.ofNanos(counted(c)), c.ok()));
      }
    }
    checkouts.sort(java.util.Comparator.comparing(CheckoutCall::due));
    return new Side(name, phase(calls, 0, rogueAt), phase(calls, rogueAt, Long.MAX_VALUE),
        apiSurvived, apiGroup.kind().label(), detail, worker, Duration.ofNanos(rogueAt), checkouts);
  }

  private static Worker insideOutcome(Child api, Ceilings.Group group, boolean apiSurvived) {
    if (!apiSurvived) {
      api.awaitOutput();
    }
    int spinning = api.spinningThreads();
    String fate;
    if (apiSurvived) {
      fate = "ran its runaway in the API's JVM, which is still up";
    } else {
      fate = "took the API down with it: " + death(api.exitCode(), group);
    }
    long throttled = group.throttledPeriods();
    if (group.kind() == Ceilings.Kind.CGROUP && throttled > 0) {
      fate += "; the API and the worker were throttled together in " + throttled + " CPU periods";
    }
    return new Worker(apiSurvived ? 0 : 1, 0, throttled, spinning, fate);
  }

  private static String death(int exitCode, Ceilings.Group group) {
    if (exitCode == KILLED && group.kind() == Ceilings.Kind.CGROUP) {
      return "killed by the kernel at its " + group.memoryBytes() / MIB + " MiB memory limit";
    }
    if (exitCode == OUT_OF_HEAP) {
      return "out of heap at -Xmx, exited (-XX:+ExitOnOutOfMemoryError)";
    }
    return "exited with code " + exitCode;
  }

  private static String detail(Ceilings.Group api, Ceilings.Group worker) {
    String how = api.kind() == Ceilings.Kind.JVM ? "JVM options (-Xmx, -XX:ActiveProcessorCount)"
        : api.v2() ? "cgroup v2 (cpu.max, memory.max, memory.swap.max 0)"
        : "cgroup v1 (cpu.cfs_quota_us, memory.limit_in_bytes, swap off)";
    String ceilings = "API " + describe(api);
    if (worker != null) {
      ceilings += ", worker " + describe(worker);
    } else {
      ceilings += " (with the worker inside)";
    }
    return how + ": " + ceilings;
  }

  private static String describe(Ceilings.Group g) {
    return String.format(Locale.ROOT, "%.1f CPU %d MiB", g.cpus(), g.memoryBytes() / MIB);
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
    return new Phase(Latency.ofNanos(login.stream().mapToLong(Long::longValue).toArray()),
        loginErrors, Latency.ofNanos(checkout.stream().mapToLong(Long::longValue).toArray()),
        checkoutErrors);
  }

  /**
   * A call's latency as the figures count it: a failed call counts as the call timeout at least (its
   * user got no answer, however fast the refusal came; a dead API must not look fast).
   */
  private static long counted(PacedLoad.Call c) {
    return c.ok() ? c.latencyNanos() : Math.max(c.latencyNanos(), CALL_TIMEOUT.toNanos());
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
   * Restarts the worker process alone each time it dies, up to {@link #MOST_RESTARTS}.
   *
   * <p>Its thread is the only one that replaces {@code current}; the run's thread reads it
   * (volatile) to send the rogue command, and may find a worker that is dying: the command then
   * goes nowhere, which the worker's fate shows (no death, no throttling).
   */
  private static final class Supervisor {
    private final Ceilings.Group group;
    private final Duration during;
    private final Leftovers leftovers;
    private final Consumer<String> log;
    /** Added to by the supervisor's thread, read by the run's: a copy-on-write list. */
    private final List<Integer> exitCodes = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile Child current;
    private volatile boolean stopping;
    private volatile int spinning;

    Supervisor(Child first, Ceilings.Group group, Duration during, Leftovers leftovers,
        Consumer<String> log) {
      this.current = first;
      this.group = group;
      this.during = during;
      this.leftovers = leftovers;
      this.log = log;
      this.thread = new Thread(this::watch, "worker-supervisor");
      this.thread.setDaemon(true);
    }

    void start() {
      thread.start();
    }

    Child current() {
      return current;
    }

    private void watch() {
      try {
        while (!stopping && exitCodes.size() < MOST_RESTARTS) {
          Child c = current;
          int code = c.process.waitFor();
          c.awaitOutput();
          spinning = Math.max(spinning, c.spinningThreads());
          if (stopping || leftovers.closed()) {
            return;
          }
          exitCodes.add(code);
          log.accept("separate: worker " + death(code, group) + "; restarting it alone");
          LockSupport.parkNanos(RESTART_BACKOFF.toNanos()); // backoff before a restart
          current = Child.start(ProcessChild.WORKER, group, during, leftovers);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException closedMeanwhile) {
        log.accept("separate: worker not restarted: " + closedMeanwhile.getMessage());
      }
    }

    void stop() {
      stopping = true;
      spinning = Math.max(spinning, current.spinningThreads());
      thread.interrupt();
      try {
        thread.join(EXIT_PATIENCE.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    /** Read after {@link #stop}: the supervisor's thread has ended (or given up) by then. */
    Worker outcome() {
      List<Integer> codes = List.copyOf(exitCodes);
      long throttled = group.throttledPeriods();
      List<String> parts = new ArrayList<>();
      if (codes.isEmpty()) {
        parts.add("kept running");
      } else {
        parts.add(death(codes.get(0), group) + (codes.size() > 1 ? " (" + codes.size()
            + " times)" : "") + ", restarted alone");
      }
      if (group.kind() == Ceilings.Kind.CGROUP) {
        parts.add("throttled to its " + group.cpus() + " CPU share in " + throttled
            + " CPU periods");
      } else {
        parts.add("spun " + spinning + " thread(s) (-XX:ActiveProcessorCount)");
      }
      return new Worker(codes.size(), codes.size(), throttled, spinning, String.join("; ", parts));
    }
  }

  /**
   * The children and groups of one case, removed together. Registration and {@link #close} hold
   * one lock, so that a process is either registered before the close (and then killed by it) or
   * refused after it: a restart racing with Ctrl-C cannot leave a process behind.
   */
  static final class Leftovers {
    private final ReentrantLock lock = new ReentrantLock();
    private final List<Child> children = new ArrayList<>();
    private final List<Ceilings.Group> groups = new ArrayList<>();
    private volatile boolean closed;

    boolean closed() {
      return closed;
    }

    Ceilings.Group group(Ceilings.Group g) {
      lock.lock();
      try {
        groups.add(g);
        if (closed) {
          g.remove();
          throw new CliException("the run is over");
        }
        return g;
      } finally {
        lock.unlock();
      }
    }

    /** Starts {@code builder}'s process unless closed, and registers it before anyone else sees it. */
    Process start(ProcessBuilder builder) throws IOException {
      lock.lock();
      try {
        if (closed) {
          throw new CliException("the run is over");
        }
        return builder.start();
      } finally {
        lock.unlock();
      }
    }

    void add(Child child) {
      lock.lock();
      try {
        children.add(child);
        if (closed) {
          child.process.destroyForcibly();
        }
      } finally {
        lock.unlock();
      }
    }

    /** Kills every child, waits for it to be gone (bounded), removes every group. Idempotent. */
    void close() {
      List<Child> toKill;
      List<Ceilings.Group> toRemove;
      lock.lock();
      try {
        closed = true;
        toKill = List.copyOf(children);
        toRemove = List.copyOf(groups);
      } finally {
        lock.unlock();
      }
      for (Child c : toKill) {
        c.process.destroyForcibly();
      }
      for (Child c : toKill) {
        try {
          c.process.onExit().get(EXIT_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
          System.getLogger("io.bulkhead.scenarios").log(System.Logger.Level.WARNING,
              "child " + c.process.pid() + " did not end: " + e);
        }
      }
      for (Ceilings.Group g : toRemove) {
        if (!g.remove()) {
          System.getLogger("io.bulkhead.scenarios").log(System.Logger.Level.WARNING,
              "could not remove control group " + g.dirs());
        }
      }
    }
  }

  /**
   * A child JVM, its standard input for commands, and a thread that reads what it prints. The reader
   * thread is the only writer of {@code ready} (completed once), {@code spinningThreads} (volatile)
   * and the kept lines (under their lock); the run's thread only reads them, after {@link
   * #awaitOutput} when it needs everything a dead process printed.
   */
  private static final class Child {
    final Process process;
    private final Writer commands;
    private final CompletableFuture<Integer> ready = new CompletableFuture<>();
    private final Deque<String> lastLines = new ArrayDeque<>();
    private final ReentrantLock linesLock = new ReentrantLock();
    private volatile int spinningThreads;
    private final Thread reader;

    private Child(Process process, String role) {
      this.process = process;
      this.commands = new java.io.OutputStreamWriter(process.getOutputStream(),
          StandardCharsets.UTF_8);
      this.reader = new Thread(this::read, role + "-output");
      this.reader.setDaemon(true);
    }

    static Child start(String role, Ceilings.Group group, Duration during, Leftovers leftovers) {
      // The leak would reach twice the process's memory ceiling halfway through the runaway: the
      // ceiling is crossed early enough that a slow, throttled, collecting JVM still gets there.
      long leakCap = 2 * group.memoryBytes();
      long leakPerSecond = Math.max(1, leakCap * 1000 / Math.max(1, during.toMillis() / 2));
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.addAll(group.jvmOptions());
      command.add("-XX:+UseSerialGC");
      command.add("-XX:+ExitOnOutOfMemoryError");
      command.add("-cp");
      command.add(System.getProperty("java.class.path"));
      command.add(ProcessChild.class.getName());
      command.add(role);
      command.add(Long.toString(leakPerSecond));
      command.add(Long.toString(leakCap));
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      Child child;
      try {
        child = new Child(leftovers.start(builder), role);
      } catch (IOException e) {
        throw new CliException("cannot start a " + role + " JVM: " + e.getMessage(), e);
      }
      leftovers.add(child);
      try {
        group.enter(child.process.pid());
      } catch (IOException e) {
        throw new CliException("cannot move the " + role + " process into its control group "
            + group.dirs() + ": " + e.getMessage(), e);
      }
      child.reader.start();
      try {
        child.ready.get(READY_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CliException("interrupted while the " + role + " JVM started");
      } catch (ExecutionException | TimeoutException e) {
        throw new CliException("the " + role + " JVM did not start within "
            + Durations.format(READY_PATIENCE) + ": " + child.lastLines());
      }
      return child;
    }

    /**
     * Waits (bounded) until everything the process printed has been read: once it has ended, its
     * last lines (how many threads its rogue report spun) may still be in the pipe.
     */
    void awaitOutput() {
      try {
        reader.join(EXIT_PATIENCE.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    int port() {
      return ready.join();
    }

    int spinningThreads() {
      return spinningThreads;
    }

    int exitCode() {
      try {
        return process.onExit().get(EXIT_PATIENCE.toMillis(), TimeUnit.MILLISECONDS).exitValue();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return -1;
      } catch (ExecutionException | TimeoutException e) {
        return -1;
      }
    }

    void send(String command) {
      try {
        commands.write(command + "\n");
        commands.flush();
      } catch (IOException gone) {
        // The process has died: the command has nobody to reach, and its death is what the run reports.
      }
    }

    private void read() {
      try (BufferedReader in = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          if (line.startsWith(ProcessChild.READY)) {
            ready.complete(Integer.parseInt(line.substring(ProcessChild.READY.length()).trim()));
          } else if (line.startsWith(ProcessChild.ROGUE_STARTED)) {
            spinningThreads = Integer.parseInt(
                line.substring(ProcessChild.ROGUE_STARTED.length()).trim());
          }
          keep(line);
        }
      } catch (IOException | UncheckedIOException | NumberFormatException e) {
        keep(e.toString());
      }
      ready.completeExceptionally(new IOException("the process ended"));
    }

    private void keep(String line) {
      linesLock.lock();
      try {
        lastLines.addLast(line);
        if (lastLines.size() > KEPT_OUTPUT_LINES) {
          lastLines.removeFirst();
        }
      } finally {
        linesLock.unlock();
      }
    }

    private String lastLines() {
      linesLock.lock();
      try {
        return lastLines.isEmpty() ? "(no output)" : String.join(" | ", lastLines);
      } finally {
        linesLock.unlock();
      }
    }
  }
}
