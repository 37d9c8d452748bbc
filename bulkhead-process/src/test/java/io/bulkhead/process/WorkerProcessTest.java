package io.bulkhead.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Bulkhead;
import io.bulkhead.insight.ResourceView;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
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
                ? 2
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
