package io.bulkhead.scenarios;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Every thread and port the experiment opens is gone when it returns. */
class CleanupTest {

  /**
   * Threads that may outlive the run, by name prefix, and what the test waits for instead of them:
   *
   * <ul>
   *   <li>{@code bulkhead-}: the core's shared timer ({@code bulkhead-timer}), which ends a second
   *       after its last task, and each compartment's own threads ({@code bulkhead-<name>-<n>}),
   *       which end 10 s after their last task; joined.
   *   <li>{@code HttpClient-}: on Java 17 the JDK gives no way to close an HttpClient; its selector
   *       thread ends once the client is garbage collected (Java 21+ closes it); joined, collecting
   *       garbage while it runs.
   *   <li>{@code ForkJoinPool.commonPool-worker}: the JVM's shared pool, on which the JDK completes
   *       HttpClient futures. It is not ours to stop and its workers idle for 60 s before they end,
   *       so the test does not wait for them: it waits for the pool to be quiescent, that is for no
   *       task of the run to be left in it.
   * </ul>
   *
   * Everything else must be gone as soon as the run returns.
   */
  private static final String LIBRARY_THREADS = "bulkhead-";

  private static final String HTTP_CLIENT = "HttpClient-";
  private static final String COMMON_POOL = "ForkJoinPool.commonPool-worker";
  private static final Set<String> ENDS_ON_ITS_OWN =
      Set.of(LIBRARY_THREADS, HTTP_CLIENT, COMMON_POOL);

  /**
   * A bound on each wait, so that a thread that never ends fails the test instead of hanging it.
   */
  private static final long BOUND_SECONDS = 60;

  /** How long one join waits before the next garbage collection. */
  private static final long JOIN_SLICE_MILLIS = 200;

  @Test
  void experimentLeavesNoThreadAndNoPortBehind() throws Exception {
    Set<Thread> before = threads();
    DemoSettings small =
        new DemoSettings(
            Duration.ofMillis(600),
            20,
            10,
            Duration.ofMillis(200),
            8,
            3,
            4,
            Duration.ofMillis(300),
            Duration.ofSeconds(60));

    ExperimentResult result = new Experiment(small).run(new Experiment.Progress() {});

    assertThat(result.ports()).hasSize(4).doesNotContain(0);
    Set<Thread> leftover = newThreads(before);
    assertThat(leftover)
        .extracting(Thread::getName)
        .as("threads still running right after the run, other than those that end on their own")
        .allMatch(name -> ENDS_ON_ITS_OWN.stream().anyMatch(name::startsWith));

    assertThat(ForkJoinPool.commonPool().awaitQuiescence(BOUND_SECONDS, TimeUnit.SECONDS))
        .as("no task of the run left in the common pool")
        .isTrue();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
    for (Thread t : leftover) {
      if (t.getName().startsWith(COMMON_POOL)) {
        continue;
      }
      while (t.isAlive() && System.nanoTime() < deadline) {
        System.gc(); // lets a Java 17 HttpClient be collected, which ends its selector thread
        t.join(JOIN_SLICE_MILLIS);
      }
      assertThat(t.isAlive())
          .as("%s still running %d s after the run", t.getName(), BOUND_SECONDS)
          .isFalse();
    }
    for (int port : result.ports()) {
      try (ServerSocket again = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        assertThat(again.getLocalPort()).isEqualTo(port);
      } catch (IOException e) {
        throw new AssertionError("port " + port + " is still taken after the run", e);
      }
    }
  }

  private static Set<Thread> threads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .collect(Collectors.toSet());
  }

  private static Set<Thread> newThreads(Set<Thread> before) {
    Set<Thread> now = threads();
    now.removeAll(before);
    return now;
  }
}
