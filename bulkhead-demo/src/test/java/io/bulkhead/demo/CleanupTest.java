package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Every thread and port the experiment opens is gone when it returns. */
class CleanupTest {

  /**
   * Threads that may outlive the run for a bounded time, by name prefix, and why:
   * <ul>
   *   <li>{@code bulkhead-}: the core's shared timer ({@code bulkhead-timer}), which ends a second
   *       after its last task, and each compartment's own threads ({@code bulkhead-<name>-<n>}), which
   *       start queued calls and reject timed-out ones and end 10 s after their last task.
   *   <li>{@code HttpClient-}: on Java 17 the JDK gives no way to close an HttpClient; its selector
   *       thread ends a few seconds after the client is garbage collected (Java 21+ closes it).
   *   <li>{@code ForkJoinPool.commonPool-worker}: the JVM's shared pool, on which the JDK completes
   *       HttpClient futures; it is not ours to stop, and its workers end after 60 s idle. On a
   *       machine with fewer than three processors the JDK uses a thread per task instead.
   * </ul>
   * Waited for, with a bound; everything else must be gone at once.
   */
  private static final Set<String> ENDS_ON_ITS_OWN =
      Set.of("bulkhead-", "HttpClient-", "ForkJoinPool.commonPool-worker");

  @Test
  void experimentLeavesNoThreadAndNoPortBehind() throws Exception {
    Map<Long, String> before = threads();
    DemoSettings small = new DemoSettings(Duration.ofMillis(600), 20, 10, Duration.ofMillis(200),
        8, 3, 4, Duration.ofMillis(300), Duration.ofSeconds(60));

    ExperimentResult result = new Experiment(small).run(new Experiment.Progress() {});

    assertThat(result.ports()).hasSize(4).doesNotContain(0);
    Map<Long, String> leftover = newThreads(before);
    assertThat(leftover.values())
        .as("threads still running right after the run, other than those that end on their own")
        .allMatch(name -> ENDS_ON_ITS_OWN.stream().anyMatch(name::startsWith));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!newThreads(before).isEmpty() && System.nanoTime() < deadline) {
      System.gc(); // lets a Java 17 HttpClient be collected, which ends its selector thread
      Thread.sleep(200); // NOPMD: polling threads that end on their own timers
    }
    assertThat(newThreads(before)).as("threads left 20 s after the run").isEmpty();
    for (int port : result.ports()) {
      try (ServerSocket again = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        assertThat(again.getLocalPort()).isEqualTo(port);
      } catch (IOException e) {
        throw new AssertionError("port " + port + " is still taken after the run", e);
      }
    }
  }

  private static Map<Long, String> threads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .collect(Collectors.toMap(Thread::getId, Thread::getName, (a, b) -> a, TreeMap::new));
  }

  private static Map<Long, String> newThreads(Map<Long, String> before) {
    Map<Long, String> now = threads();
    now.keySet().removeAll(before.keySet());
    return now;
  }
}
