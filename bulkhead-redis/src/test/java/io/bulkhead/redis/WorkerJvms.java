package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Starts a test's worker main class in a JVM of its own, on the test class path. */
final class WorkerJvms {

  private WorkerJvms() {}

  /** A worker process and the lines it prints (standard output and error), as they arrive. */
  record Started(Process process, BlockingQueue<String> lines) {}

  /** Starts {@code main} with {@code args}; a daemon thread reads its output into {@code lines}. */
  static Started start(Class<?> main, String... args) throws IOException {
    return start(List.of(), main, args);
  }

  /** Starts {@code main} with these JVM options and {@code args}; see {@link #start}. */
  static Started start(List<String> jvmOptions, Class<?> main, String... args) throws IOException {
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java));
    command.addAll(jvmOptions);
    command.addAll(List.of("-cp", testClassPath(), main.getName()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                  lines.add(line);
                }
              } catch (IOException e) {
                // the process ended
              }
            },
            "output of " + main.getSimpleName());
    reader.setDaemon(true);
    reader.start();
    return new Started(p, lines);
  }

  /**
   * The first line starting with {@code prefix}, failing the test if none comes {@code within}; the
   * lines before it (the worker's logs) are echoed for diagnosis.
   */
  static String lineStartingWith(BlockingQueue<String> lines, String prefix, Duration within)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    for (; ; ) {
      String line = lines.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
      assertThat(line).as("a line starting with '" + prefix + "' within " + within).isNotNull();
      if (line.startsWith(prefix)) {
        return line;
      }
      System.out.println("  worker: " + line);
    }
  }

  private static String testClassPath() {
    String surefire = System.getProperty("surefire.test.class.path");
    return surefire != null && !surefire.isEmpty()
        ? surefire
        : System.getProperty("java.class.path");
  }
}
