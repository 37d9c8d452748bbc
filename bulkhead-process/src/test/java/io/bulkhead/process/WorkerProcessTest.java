package io.bulkhead.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Bulkhead;
import io.bulkhead.insight.ResourceView;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Real child JVMs ({@link TestWorker}) under a {@link WorkerProcess}: order is observed through the
 * listener's state changes, never a sleep; the waits below are ceilings for a busy machine, not
 * schedules. After each test no child process and no control group of this JVM is left.
 */
class WorkerProcessTest {

  /** How long a child JVM may take to start or die on a busy two-core machine: a ceiling only. */
  private static final long PATIENCE_SECONDS = 60;

  private static final Path CGROUP_ROOT = Path.of("/sys/fs/cgroup");

  /** Deep enough for the groups made inside this JVM's own (v1: controller/parent.../group). */
  private static final int CGROUP_DEPTH = 6;

  private static final long MIB = 1024 * 1024;

  /** A gibibyte without a newline, through a supervisor whose whole heap is this many MiB. */
  private static final long FLOOD_BYTES = 1L << 30;

  private static final int FLOOD_SUPERVISOR_HEAP_MIB = 64;

  private final BlockingQueue<ProcessStats> changes = new LinkedBlockingQueue<>();
  private final List<WorkerProcess> started = new ArrayList<>();

  @AfterEach
  void nothingLeftBehind() {
    started.forEach(WorkerProcess::close);
    assertThat(childJvms()).as("child processes left running").isEmpty();
    assertThat(ourGroups()).as("control groups left behind").isEmpty();
  }

  @Test
  void aKilledWorkerIsRestartedAfterItsBackoffAndCloseLeavesNothing() throws Exception {
    BlockingQueue<String> ready = new LinkedBlockingQueue<>();
    WorkerProcess w =
        start(
            builder("killed")
                .backoff(Duration.ofMillis(20), Duration.ofMillis(40))
                .output(
                    line -> {
                      if (line.equals(TestWorker.READY)) {
                        ready.add(line);
                      }
                    }));
    assertThat(next().state()).isEqualTo(WorkerProcess.State.STARTING);
    ProcessStats running = next();
    assertThat(running.state()).isEqualTo(WorkerProcess.State.RUNNING);
    assertThat(running.pid()).isPresent();
    assertThat(running.restarts()).isZero();
    long first = running.pid().getAsLong();
    assertThat(groupsOf("killed"))
        .hasSize(
            running.ceilings() == Ceilings.CGROUP_V1
                ? Files.isDirectory(CGROUP_ROOT.resolve("pids")) ? 3 : 2 // cpu, memory, pids
                : running.ceilings() == Ceilings.CGROUP_V2 ? 1 : 0);

    assertThat(ready.poll(PATIENCE_SECONDS, TimeUnit.SECONDS))
        .as("the first said ready")
        .isNotNull();
    ProcessHandle.of(first).orElseThrow().destroyForcibly(); // SIGKILL, as kill -9 sends it
    ProcessStats backingOff = next();
    assertThat(backingOff.state()).isEqualTo(WorkerProcess.State.BACKING_OFF);
    assertThat(backingOff.deaths()).isEqualTo(1);
    assertThat(backingOff.backoff()).isEqualTo(Duration.ofMillis(20));
    Exit exit = backingOff.lastExit().orElseThrow();
    assertThat(exit.cause()).isEqualTo(Exit.Cause.SIGNALLED);
    assertThat(exit.signal()).isEqualTo(9);
    assertThat(exit.description()).isEqualTo("killed by signal 9");

    assertThat(next().state()).isEqualTo(WorkerProcess.State.STARTING);
    ProcessStats again = next();
    assertThat(again.state()).isEqualTo(WorkerProcess.State.RUNNING);
    assertThat(again.restarts()).isEqualTo(1);
    assertThat(again.pid().getAsLong()).isNotEqualTo(first);
    assertThat(ready.poll(PATIENCE_SECONDS, TimeUnit.SECONDS))
        .as("the second said ready")
        .isNotNull();
    assertThat(w.send("hello")).isTrue();

    // The worker's card: the resource behind the compartment of the same name.
    ResourceView view = w.resources();
    assertThat(view.of(Bulkhead.builder("other").limit(1).build())).isEmpty();
    ResourceView.Resource card = view.of(Bulkhead.builder("killed").limit(1).build()).orElseThrow();
    assertThat(card.kind()).isEqualTo("process");
    assertThat(card.figures())
        .containsKeys(
            "cpuUsedMilli",
            "cpuQuotaMilli",
            "memoryUsedMiB",
            "memoryLimitMiB",
            "restarts",
            "throttledPeriods");
    assertThat(card.figures().get("restarts")).isEqualTo(1);
    assertThat(card.figures().get("memoryLimitMiB")).isEqualTo(256);
    assertThat(card.summary()).contains("killed", "RUNNING", "killed by signal 9");

    long second = again.pid().getAsLong();
    w.close();
    assertThat(next().state()).isEqualTo(WorkerProcess.State.STOPPED);
    assertThat(w.state()).isEqualTo(WorkerProcess.State.STOPPED);
    assertThat(ProcessHandle.of(second).map(ProcessHandle::isAlive))
        .isIn(java.util.Optional.empty(), java.util.Optional.of(false));
    assertThat(groupsOf("killed")).isEmpty();
    assertThat(w.send("hello")).isFalse();
    assertThat(changes).isEmpty();
  }

  @Test
  void theBackoffDoublesUpToItsMaxAndTheRestartsAreBounded() throws Exception {
    HeldRestarts scheduler = new HeldRestarts();
    try {
      start(
          builder("exits")
              .arguments(List.of("exit", "7"))
              .maxRestarts(3)
              .backoff(Duration.ofMillis(50), Duration.ofMillis(150))
              .scheduler(scheduler));
      List<Duration> backoffs = new ArrayList<>();
      for (int death = 1; death <= 3; death++) {
        ProcessStats s = nextIn(WorkerProcess.State.BACKING_OFF);
        assertThat(s.deaths()).isEqualTo(death);
        assertThat(s.restarts()).isEqualTo(death - 1);
        Exit exit = s.lastExit().orElseThrow();
        assertThat(exit.cause()).isEqualTo(Exit.Cause.EXITED);
        assertThat(exit.code()).isEqualTo(7);
        backoffs.add(s.backoff());
        assertThat(scheduler.heldDelay()).isEqualTo(s.backoff());
        scheduler.release();
      }
      assertThat(backoffs)
          .containsExactly(Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(150));
      ProcessStats gaveUp = nextIn(WorkerProcess.State.STOPPED);
      assertThat(gaveUp.deaths()).isEqualTo(4);
      assertThat(gaveUp.restarts()).isEqualTo(3);
      assertThat(gaveUp.pid()).isEmpty();
    } finally {
      started.forEach(WorkerProcess::close);
      scheduler.shutdownNow();
    }
  }

  @Test
  void aRestartThatComesDueAfterCloseStartsNothing() throws Exception {
    HeldRestarts scheduler = new HeldRestarts();
    try {
      WorkerProcess w = start(builder("closing").scheduler(scheduler));
      long pid = nextIn(WorkerProcess.State.RUNNING).pid().getAsLong();
      ProcessHandle.of(pid).orElseThrow().destroyForcibly();
      nextIn(WorkerProcess.State.BACKING_OFF);
      assertThat(scheduler.heldDelay()).isEqualTo(Duration.ofMillis(100)); // the default initial
      w.close();
      assertThat(next().state()).isEqualTo(WorkerProcess.State.STOPPED);
      scheduler.release(); // the restart timer fires after close
      scheduler.submit(() -> {}).get(PATIENCE_SECONDS, TimeUnit.SECONDS); // it has run
      assertThat(changes).isEmpty();
      assertThat(w.state()).isEqualTo(WorkerProcess.State.STOPPED);
      assertThat(w.stats().restarts()).isZero();
    } finally {
      scheduler.shutdownNow();
    }
  }

  @Test
  void aChildThatDiesWhileCloseRunsIsNotRestartedAndStoppedIsTheLastWord() throws Exception {
    WorkerProcess w = start(builder("dying").backoff(Duration.ofNanos(1), Duration.ofNanos(1)));
    long pid = nextIn(WorkerProcess.State.RUNNING).pid().getAsLong();
    ProcessHandle.of(pid).orElseThrow().destroyForcibly(); // its death races the close below
    w.close();
    List<ProcessStats> heard = new ArrayList<>();
    changes.drainTo(heard);
    assertThat(heard).isNotEmpty();
    assertThat(heard.get(heard.size() - 1).state()).isEqualTo(WorkerProcess.State.STOPPED);
    assertThat(heard.stream().filter(s -> s.state() == WorkerProcess.State.STOPPED)).hasSize(1);
    assertThat(w.stats().pid()).isEmpty();
    assertThat(groupsOf("dying")).isEmpty();
  }

  @Test
  void theMemoryCeilingEndsAnAllocatingWorkerAndSaysWhichCeilingItWas() throws Exception {
    WorkerProcess w = start(builder("leaks").memoryLimitBytes(64 * MIB).maxRestarts(0));
    ProcessStats running = nextIn(WorkerProcess.State.RUNNING);
    assertThat(w.send(TestWorker.ALLOCATE)).isTrue();
    ProcessStats stopped = nextIn(WorkerProcess.State.STOPPED);
    Exit exit = stopped.lastExit().orElseThrow();
    if (running.ceilings().kernel()) {
      assertThat(exit.cause()).as(exit.description()).isEqualTo(Exit.Cause.KILLED_AT_MEMORY_LIMIT);
      assertThat(exit.signal()).isEqualTo(9);
      assertThat(exit.description()).isEqualTo("killed by the kernel at its 64 MiB memory limit");
    } else {
      assertThat(exit.cause()).as(exit.description()).isEqualTo(Exit.Cause.OUT_OF_HEAP);
    }
    assertThat(stopped.deaths()).isEqualTo(1);
    assertThat(stopped.restarts()).isZero();
  }

  @Test
  void jvmCeilingsAreUsedWhenAskedAndTheHeapIsWhatEndsTheLeak() throws Exception {
    WorkerProcess w =
        start(builder("jvm").kernelCeilings(false).memoryLimitBytes(64 * MIB).maxRestarts(0));
    ProcessStats running = nextIn(WorkerProcess.State.RUNNING);
    assertThat(running.ceilings()).isEqualTo(Ceilings.JVM);
    assertThat(
            ProcessHandle.of(running.pid().getAsLong())
                .orElseThrow()
                .info()
                .arguments()
                .map(List::of)
                .orElseThrow())
        .contains("-Xmx49152k", "-XX:ActiveProcessorCount=1");
    assertThat(groupsOf("jvm")).isEmpty();
    assertThat(w.send(TestWorker.ALLOCATE)).isTrue();
    Exit exit = nextIn(WorkerProcess.State.STOPPED).lastExit().orElseThrow();
    assertThat(exit.cause()).as(exit.description()).isEqualTo(Exit.Cause.OUT_OF_HEAP);
    assertThat(exit.description()).contains("-Xmx");
  }

  @Test
  void aGibibyteWithoutANewlineIsHandedOverInBoundedLinesAndTheSupervisorSurvivesIt()
      throws Exception {
    Map<String, String> r = flood("count");
    assertThat(r.get("ooms")).as("OutOfMemoryErrors in the supervisor").isEqualTo("0");
    assertThat(r.get("exit"))
        .as("the worker's end: its own, after the flood")
        .isEqualTo("EXITED:0");
    assertThat(r.get("deaths")).isEqualTo("1");
    assertThat(r.get("flooded")).as("the line after the flood").isEqualTo("1");
    assertThat(Long.parseLong(r.get("chars"))).isEqualTo(FLOOD_BYTES);
    assertThat(Long.parseLong(r.get("longest"))).isEqualTo(WorkerProcess.MAX_LINE_BYTES);
    assertThat(Long.parseLong(r.get("fragments")))
        .isEqualTo(FLOOD_BYTES / WorkerProcess.MAX_LINE_BYTES);
  }

  @Test
  void aGibibyteWithoutANewlineThatNobodyReadsIsDiscardedWithoutDecoding() throws Exception {
    Map<String, String> r = flood("drop");
    assertThat(r.get("ooms")).as("OutOfMemoryErrors in the supervisor").isEqualTo("0");
    assertThat(r.get("exit")).isEqualTo("EXITED:0");
    // What the supervisor allocated while 1 GiB passed through it: buffers, not the lines.
    assertThat(Long.parseLong(r.get("allocatedMiB"))).isLessThan(FLOOD_SUPERVISOR_HEAP_MIB);
  }

  @Test
  void closeEndsEveryProcessTheWorkerStartedAndRemovesItsGroups() throws Exception {
    closeEndsEverything(builder("spawns").maxThreads(100));
  }

  @Test
  void closeEndsTheWorkersDescendantsUnderJvmCeilingsToo() throws Exception {
    closeEndsEverything(builder("spawns-jvm").kernelCeilings(false));
  }

  private void closeEndsEverything(WorkerProcess.Builder b) throws Exception {
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    WorkerProcess w = start(b.output(lines::add));
    ProcessStats running = nextIn(WorkerProcess.State.RUNNING);
    long pid = running.pid().getAsLong();
    if (running.ceilings() == Ceilings.CGROUP_V1
        && Files.isDirectory(CGROUP_ROOT.resolve("pids"))) {
      Path pids = CGROUP_ROOT.resolve("pids").resolve(ControlGroup.prefix() + w.name());
      assertThat(Files.readString(pids.resolve("pids.max")).trim()).isEqualTo("100");
    }
    assertThat(w.send(TestWorker.SPAWN)).isTrue();
    assertThat(pollFor(lines, TestWorker.SPAWNED)).as("the worker said spawned").isTrue();
    List<ProcessHandle> family = new ArrayList<>();
    ProcessHandle.of(pid).ifPresent(family::add);
    ProcessHandle.of(pid).ifPresent(p -> p.descendants().forEach(family::add));
    List<String> sleeps =
        family.stream()
            .filter(p -> p.info().command().orElse("").endsWith("/sleep"))
            .map(p -> "sleep " + String.join(" ", p.info().arguments().orElse(new String[0])))
            .collect(Collectors.toList());
    assertThat(sleeps).containsExactlyInAnyOrder("sleep 611", "sleep 612", "sleep 613");

    long began = System.nanoTime();
    w.close();
    long closeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
    List<String> left =
        family.stream()
            .filter(WorkerProcessTest::running)
            .map(p -> p.pid() + " " + p.info().commandLine().orElse("?"))
            .collect(Collectors.toList());
    System.out.println(
        "close() of " + w.name() + ": " + closeMillis + " ms, " + left.size() + " processes left");
    assertThat(left).as("processes the worker started, alive after close()").isEmpty();
    assertThat(groupsOf(w.name())).as("its control groups").isEmpty();
  }

  @Test
  void aMissingMainClassDidNotStartSaysWhyAndIsNotRestarted() throws Exception {
    String missing = "io.bulkhead.process.NoSuchWorker";
    start(
        WorkerProcess.builder("missing", missing)
            .jvmOptions(List.of("-XX:TieredStopAtLevel=1", "-Xshare:auto"))
            .maxRestarts(3)
            .listener(changes::add));
    ProcessStats ended = nextAfterRunning();
    assertThat(ended.state()).isEqualTo(WorkerProcess.State.STOPPED);
    Exit exit = ended.lastExit().orElseThrow();
    assertThat(exit.cause()).as(exit.description()).isEqualTo(Exit.Cause.DID_NOT_START);
    assertThat(exit.description()).contains("Could not find or load main class " + missing);
    assertThat(exit.lastLines())
        .anySatisfy(l -> assertThat(l).contains("Could not find or load main class " + missing))
        .anySatisfy(l -> assertThat(l).contains("ClassNotFoundException"));
    assertThat(ended.deaths()).isEqualTo(1);
    assertThat(ended.restarts()).isZero();
  }

  @Test
  void aDeathAfterAStablePeriodStartsTheBackoffAndTheRestartsAfresh() throws Exception {
    HeldRestarts scheduler = new HeldRestarts();
    AtomicLong now = new AtomicLong();
    Duration stable = Duration.ofMinutes(10);
    try {
      WorkerProcess w =
          start(
              builder("stable")
                  .maxRestarts(2)
                  .backoff(Duration.ofMillis(50), Duration.ofMillis(400))
                  .stableAfter(stable)
                  .ticker(now::get)
                  .scheduler(scheduler));
      List<Duration> backoffs = new ArrayList<>();
      // Four runs: quick, stable (ten minutes on the ticker), quick, quick.
      for (int run = 0; run < 4; run++) {
        nextIn(WorkerProcess.State.RUNNING);
        if (run == 1) {
          now.addAndGet(stable.toNanos());
        }
        assertThat(w.send("exit 7")).isTrue();
        ProcessStats s = nextAfterRunning();
        if (s.state() == WorkerProcess.State.STOPPED) {
          backoffs.add(null);
          break;
        }
        assertThat(s.state()).isEqualTo(WorkerProcess.State.BACKING_OFF);
        backoffs.add(s.backoff());
        assertThat(scheduler.heldDelay()).isEqualTo(s.backoff());
        scheduler.release();
      }
      // The stable run's death counts as a first one again: 50 ms, and two more restarts.
      assertThat(backoffs)
          .containsExactly(
              Duration.ofMillis(50), Duration.ofMillis(50), Duration.ofMillis(100), null);
      assertThat(w.stats().restarts()).isEqualTo(3);
      assertThat(w.stats().deaths()).isEqualTo(4);
    } finally {
      started.forEach(WorkerProcess::close);
      scheduler.shutdownNow();
    }
  }

  @Test
  void badSettingsAreOneLineNamingTheSetting() {
    assertThatThrownBy(() -> WorkerProcess.builder("../etc", "X"))
        .hasMessage(
            "name must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter"
                + " or digit, but was '../etc'");
    assertThatThrownBy(() -> builder("x").cpus(0))
        .hasMessage("cpus must be at least 0.01 but was 0.0");
    assertThatThrownBy(() -> builder("x").memoryLimitBytes(1024))
        .hasMessage("memoryLimitBytes must be at least 16777216 (16 MiB) but was 1024");
    assertThatThrownBy(() -> builder("x").backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .hasMessage("backoff max must be at least initial (PT2S) but was PT1S");
    assertThatThrownBy(() -> builder("x").maxRestarts(-1))
        .hasMessage("maxRestarts must be 0 or more but was -1");
    assertThatThrownBy(() -> builder("x").maxThreads(31))
        .hasMessage("maxThreads must be at least 32 but was 31");
    assertThatThrownBy(() -> builder("x").stableAfter(Duration.ZERO))
        .hasMessage("stableAfter must be positive but was PT0S");
  }

  /** The first change after the current process ran: its death's BACKING_OFF or STOPPED. */
  private ProcessStats nextAfterRunning() throws InterruptedException {
    for (ProcessStats s = next(); ; s = next()) {
      if (s.state() == WorkerProcess.State.BACKING_OFF
          || s.state() == WorkerProcess.State.STOPPED) {
        return s;
      }
    }
  }

  /**
   * Whether {@code p} still runs: alive and not a zombie (a killed process whose new parent, pid 1
   * here, has not collected its exit status yet: it runs nothing and holds nothing).
   */
  private static boolean running(ProcessHandle p) {
    if (!p.isAlive()) {
      return false;
    }
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"));
      return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
    } catch (IOException gone) {
      return false;
    }
  }

  private static boolean pollFor(BlockingQueue<String> lines, String wanted)
      throws InterruptedException {
    for (String l = lines.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        l != null;
        l = lines.poll(PATIENCE_SECONDS, TimeUnit.SECONDS)) {
      if (l.equals(wanted)) {
        return true;
      }
    }
    return false;
  }

  /** Runs {@link FloodSupervisor} in a JVM of its own with a small heap and returns its figures. */
  private static Map<String, String> flood(String mode) throws Exception {
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx" + FLOOD_SUPERVISOR_HEAP_MIB + "m",
            "-XX:+UseSerialGC",
            "-cp",
            System.getProperty("java.class.path"),
            FloodSupervisor.class.getName(),
            Long.toString(FLOOD_BYTES),
            mode,
            Long.toString(PATIENCE_SECONDS));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    List<String> out = new ArrayList<>();
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        out.add(line.length() > 500 ? line.substring(0, 500) + "..." : line);
      }
    }
    assertThat(p.waitFor(PATIENCE_SECONDS, TimeUnit.SECONDS)).isTrue();
    String result =
        out.stream()
            .filter(l -> l.startsWith(FloodSupervisor.RESULT + " "))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no figures from the supervisor: " + out));
    System.out.println("flood (" + mode + "): " + result);
    Map<String, String> figures = new LinkedHashMap<>();
    for (String kv : result.substring(FloodSupervisor.RESULT.length() + 1).split(" ")) {
      String[] parts = kv.split("=", 2);
      figures.put(parts[0], parts[1]);
    }
    return figures;
  }

  private WorkerProcess.Builder builder(String name) {
    return WorkerProcess.builder(name, TestWorker.class.getName())
        .cpus(1)
        .jvmOptions(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"))
        .listener(changes::add);
  }

  private WorkerProcess start(WorkerProcess.Builder b) {
    WorkerProcess w = b.start();
    started.add(w);
    return w;
  }

  private ProcessStats next() throws InterruptedException {
    ProcessStats s = changes.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
    assertThat(s).as("a change of state within " + PATIENCE_SECONDS + " s").isNotNull();
    return s;
  }

  /** Skips changes up to the next one into {@code state}. */
  private ProcessStats nextIn(WorkerProcess.State state) throws InterruptedException {
    for (ProcessStats s = next(); ; s = next()) {
      if (s.state() == state) {
        return s;
      }
    }
  }

  /**
   * A scheduler that holds the restart timers (tasks scheduled with a delay) until the test
   * releases them, and runs everything else at once: the test decides when the backoff is over.
   */
  private static final class HeldRestarts extends ScheduledThreadPoolExecutor {
    private final BlockingQueue<Runnable> held = new LinkedBlockingQueue<>();
    private final BlockingQueue<Duration> delays = new LinkedBlockingQueue<>();

    HeldRestarts() {
      super(1);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      if (delay <= 0) {
        return super.schedule(command, delay, unit);
      }
      delays.add(Duration.ofNanos(unit.toNanos(delay)));
      held.add(command);
      return super.schedule(() -> {}, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    protected <V> RunnableScheduledFuture<V> decorateTask(
        Runnable r, RunnableScheduledFuture<V> task) {
      return task;
    }

    Duration heldDelay() throws InterruptedException {
      Duration d = delays.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
      assertThat(d).as("a restart was scheduled").isNotNull();
      return d;
    }

    void release() throws InterruptedException {
      Runnable r = held.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
      assertThat(r).as("a held restart").isNotNull();
      super.schedule(r, 0, TimeUnit.NANOSECONDS);
    }
  }

  /** This JVM's descendants that run the test worker. */
  private static List<String> childJvms() {
    return ProcessHandle.current()
        .descendants()
        .filter(ProcessHandle::isAlive)
        .map(p -> p.pid() + " " + p.info().commandLine().orElse("?"))
        .filter(line -> line.contains(TestWorker.class.getName()))
        .collect(Collectors.toList());
  }

  private static List<Path> groupsOf(String worker) {
    String name = ControlGroup.prefix() + worker;
    return ourGroups().stream().filter(p -> p.getFileName().toString().equals(name)).toList();
  }

  /** Control groups named after this JVM, anywhere in the hierarchy it may have made them in. */
  private static List<Path> ourGroups() {
    if (!Files.isDirectory(CGROUP_ROOT)) {
      return List.of();
    }
    String prefix = ControlGroup.prefix();
    try (Stream<Path> walk = Files.walk(CGROUP_ROOT, CGROUP_DEPTH)) {
      return walk.filter(Files::isDirectory)
          .filter(p -> p.getFileName() != null && p.getFileName().toString().startsWith(prefix))
          .collect(Collectors.toList());
    } catch (IOException | UncheckedIOException unreadable) {
      throw new AssertionError("cannot read " + CGROUP_ROOT + ": " + unreadable);
    }
  }
}
