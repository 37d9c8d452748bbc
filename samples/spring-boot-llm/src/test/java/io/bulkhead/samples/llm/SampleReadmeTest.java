package io.bulkhead.samples.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sample's README run as a newcomer runs it: its shell blocks, verbatim, in a copy of the
 * repository's files (what {@code git ls-files} lists, as a fresh clone has them), each
 * long-running one as a process of its own: build, the demo's upstream, the sample with {@code
 * spring-boot:run}, the load, the endpoints while it runs; then the sample again with {@code java
 * -jar}. The only thing added to the copy is the Maven local repository this build uses ({@code
 * .mvn/maven.config}), so the copy's build downloads nothing the outer build has not. Prints every
 * command's output.
 */
class SampleReadmeTest {

  private static final Path ROOT = Path.of("").toAbsolutePath().getParent().getParent();
  private static final Duration BUILD = Duration.ofMinutes(20);
  private static final Duration START = Duration.ofMinutes(5);
  private static final int SAMPLE_PORT = 8080;
  private static final int UPSTREAM_PORT = 4001;

  private final List<Process> started = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();

  @AfterEach
  void stopEverything() {
    started.forEach(SampleReadmeTest::stop);
  }

  @Test
  @Timeout(value = 40, unit = TimeUnit.MINUTES)
  void theReadmesStepsWorkFromAFreshCopyAsWritten(@TempDir Path copy) throws Exception {
    List<List<String>> blocks = shellBlocks(ROOT.resolve("samples/spring-boot-llm/README.md"));
    assertThat(blocks)
        .as("README: build, upstream, spring-boot:run, java -jar, load, endpoints")
        .hasSize(6);
    String build = only(blocks.get(0));
    String upstream = only(blocks.get(1));
    String run = only(blocks.get(2));
    String jar = only(blocks.get(3));
    String load = only(blocks.get(4));
    List<String> look = blocks.get(5);
    assertThat(run).contains("spring-boot:run");
    assertThat(jar).startsWith("java -jar");
    assertThat(look).hasSize(4).allSatisfy(line -> assertThat(line).startsWith("curl"));
    for (int port : new int[] {SAMPLE_PORT, UPSTREAM_PORT}) {
      assertThat(free(port)).as("port %d, which the README's steps use, is free", port).isTrue();
    }

    copyRepository(copy);

    Process building = start(copy, build, "build");
    assertThat(building.waitFor(BUILD.toMinutes(), TimeUnit.MINUTES)).as("build finished").isTrue();
    assertThat(building.exitValue()).as(output(copy, "build")).isZero();

    start(copy, upstream, "upstream");
    await().atMost(START).until(() -> output(copy, "upstream").contains("upstream listening on"));
    System.out.println("$ " + upstream + "\n" + output(copy, "upstream"));

    Process sample = start(copy, run, "spring-boot-run");
    awaitHealthy();

    Process loading = start(copy, load, "load");
    // The ten admitted chats wait 30 s on the upstream: the refusals come at once, and the
    // diagnosis calls the compartment saturated after about ten seconds at its limit.
    await()
        .atMost(START)
        .until(() -> get("/actuator/compartmentevents/llm").contains("\"recorded\":70"));
    await()
        .atMost(Duration.ofSeconds(25))
        .until(() -> get("/actuator/health").contains("SATURATED"));
    List<String> seen = new ArrayList<>();
    for (String line : look) {
      String out = shell(copy, line);
      System.out.println("$ " + line + "\n" + out);
      seen.add(out);
    }
    assertThat(seen.get(0))
        .contains("\"bulkheads\":{\"details\":{\"llm\":{\"state\":\"SATURATED\"")
        .endsWith("\"status\":\"UP\"}");
    assertThat(seen.get(1)).contains("\"inFlight\":10", "\"rejected\":70");
    assertThat(seen.get(2)).contains("\"recorded\":70", "\"reason\":\"queue_full\"");
    assertThat(seen.get(3)).contains("bulkhead_in_flight{name=\"llm\"} 10.0");

    assertThat(loading.waitFor(START.toMinutes(), TimeUnit.MINUTES)).as("load finished").isTrue();
    String report = output(copy, "load");
    System.out.println("$ " + load + "\n" + report);
    assertThat(loading.exitValue()).isZero();
    assertThat(report).contains("chat 200 / 503 / other  10 / 70 / 0");

    stop(sample);
    await().atMost(START).until(() -> free(SAMPLE_PORT));

    start(copy, jar, "java-jar");
    awaitHealthy();
    String health = shell(copy, look.get(0));
    System.out.println("$ " + jar + " ... then\n$ " + look.get(0) + "\n" + health);
    assertThat(health).contains("\"bulkheads\"").endsWith("\"status\":\"UP\"}");
  }

  /** The lines of each {@code shell} block, comments and blank lines left out. */
  private static List<List<String>> shellBlocks(Path readme) throws IOException {
    List<List<String>> blocks = new ArrayList<>();
    List<String> current = null;
    for (String line : Files.readAllLines(readme)) {
      if (current == null && line.strip().equals("```shell")) {
        current = new ArrayList<>();
      } else if (current != null && line.strip().equals("```")) {
        blocks.add(current);
        current = null;
      } else if (current != null && !line.isBlank() && !line.strip().startsWith("#")) {
        current.add(line.strip());
      }
    }
    return blocks;
  }

  private static String only(List<String> block) {
    assertThat(block).hasSize(1);
    return block.get(0);
  }

  /** The files a fresh clone has (tracked, plus new ones not ignored), as they are now. */
  private static void copyRepository(Path copy) throws Exception {
    Process git =
        new ProcessBuilder("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
            .directory(ROOT.toFile())
            .redirectErrorStream(true)
            .start();
    String listed = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(git.waitFor()).as(listed).isZero();
    for (String file : listed.split("\0")) {
      Path source = ROOT.resolve(file);
      if (!file.isEmpty() && Files.isRegularFile(source)) {
        Path target = copy.resolve(file);
        Files.createDirectories(target.getParent());
        Files.copy(source, target);
      }
    }
    String repository = System.getProperty("maven.repo.local");
    if (repository != null && !repository.isBlank()) {
      Files.createDirectories(copy.resolve(".mvn"));
      Files.writeString(copy.resolve(".mvn/maven.config"), "-Dmaven.repo.local=" + repository);
    }
  }

  private Process start(Path copy, String command, String name) throws IOException {
    Process process =
        new ProcessBuilder("bash", "-c", command)
            .directory(copy.toFile())
            .redirectErrorStream(true)
            .redirectOutput(copy.resolve(name + ".out").toFile())
            .start();
    started.add(process);
    return process;
  }

  private static String shell(Path copy, String command) throws Exception {
    Process process =
        new ProcessBuilder("bash", "-c", command)
            .directory(copy.toFile())
            .redirectErrorStream(true)
            .start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(1, TimeUnit.MINUTES)).isTrue();
    return out.strip();
  }

  private static String output(Path copy, String name) {
    try {
      Path file = copy.resolve(name + ".out");
      return Files.exists(file) ? Files.readString(file) : "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void awaitHealthy() {
    await()
        .atMost(START)
        .ignoreExceptions()
        .until(() -> get("/actuator/health").endsWith("\"status\":\"UP\"}"));
  }

  private String get(String path) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + SAMPLE_PORT + path))
            .timeout(Duration.ofSeconds(30))
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString()).body();
  }

  private static boolean free(int port) {
    try (ServerSocket socket = new ServerSocket(port)) {
      return true;
    } catch (IOException taken) {
      return false;
    }
  }

  /** Stops a process and what it started (Maven's forked application, say). */
  private static void stop(Process process) {
    process.descendants().forEach(ProcessHandle::destroy);
    process.destroy();
    try {
      if (!process.waitFor(1, TimeUnit.MINUTES)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
