package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code demo processes} with short phases: the structure of its JSON, the facts that do not depend
 * on how busy the machine is (the separate API survives; the separate worker dies at its memory
 * ceiling and is restarted), and that nothing is left behind — no child process, no control group.
 * Latency figures are not asserted: on a shared two-core machine they are whatever the neighbours
 * make them.
 */
class ProcessesCommandTest {

  private static final String SHORT_BEFORE = "2s";

  /**
   * Short: the runaway lasts until the worker's fate is known (dead and restarted), however long a
   * busy machine makes that, so this is only how long it lasts at least.
   */
  private static final String SHORT_DURING = "6s";

  private static final Path CGROUP_ROOT = Path.of("/sys/fs/cgroup");

  /** Deep enough for the groups made inside this JVM's own (v1: controller/parent.../group). */
  private static final int CGROUP_DEPTH = 6;

  @AfterEach
  void nothingLeftBehind() {
    assertThat(childJvms()).as("child processes left running").isEmpty();
    assertThat(ourGroups()).as("control groups left behind").isEmpty();
  }

  @TempDir Path dir;

  /**
   * A run's bound, not a performance figure: two cases, each a JVM start of up to a minute and a
   * runaway of up to two minutes past --during while its fate is unknown, on the busiest machine.
   */
  private static final int RUN_MINUTES = 8;

  @Test
  @Timeout(value = RUN_MINUTES, unit = TimeUnit.MINUTES)
  void theSeparateWorkerDiesAtItsCeilingAndIsRestartedWhileTheApiSurvives() throws IOException {
    Path report = dir.resolve("report.html");
    CliTest.Run r =
        CliTest.run(
            "demo",
            "processes",
            "--before",
            SHORT_BEFORE,
            "--during",
            SHORT_DURING,
            "--json",
            "--report",
            report.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode both = new ObjectMapper().readTree(r.out());
    assertThat(both.fieldNames()).toIterable().containsExactly("inside", "separate");
    for (JsonNode side : both) {
      assertShape(side);
    }
    JsonNode separate = both.get("separate");
    assertThat(separate.get("api_survived").asBoolean()).as(r.err()).isTrue();
    assertWorkerDiedAndCameBack(separate.get("worker"), r.err());
    String ceilings = separate.get("ceilings").asText();
    if (ceilings.equals("cgroup")) {
      // How often the kernel throttled depends on how much CPU the neighbours left (a machine
      // busier
      // than the quota never lets the worker reach it); that the fate says which does not.
      assertThat(separate.get("worker").get("fate").asText())
          .contains(
              separate.get("worker").get("throttled_periods").asLong() > 0
                  ? "throttled to its 0.5 CPU share in "
                  : "never throttled");
    }
    assertThat(both.get("inside").get("ceilings").asText()).isEqualTo(ceilings);
    String page = Files.readString(report);
    assertThat(page)
        .contains(
            ProcessesCommand.BEGIN,
            ProcessesCommand.END,
            "inside: API",
            "separate: API survived",
            "the report goes rogue",
            "<svg");
    assertP99BarsMatchTheJson(page, both);
    // The cards: the API of each case, and the worker beside it when separate.
    assertThat(page)
        .contains(
            "separate: report worker",
            "separate: API",
            "inside: API",
            "memory up to",
            "of 192 MiB",
            "restarts " + separate.get("worker").get("restarts").asInt());
  }

  @Test
  @Timeout(value = RUN_MINUTES, unit = TimeUnit.MINUTES)
  void jvmCeilingsAreUsedWhenAskedAndNamed() throws IOException {
    CliTest.Run r =
        CliTest.run(
            "demo",
            "processes",
            "--before",
            SHORT_BEFORE,
            "--during",
            SHORT_DURING,
            "--jvm-ceilings",
            "--json",
            "--report",
            dir.resolve("report.html").toString());
    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode both = new ObjectMapper().readTree(r.out());
    assertThat(both.get("inside").get("ceilings").asText()).isEqualTo("jvm");
    JsonNode separate = both.get("separate");
    assertThat(separate.get("ceilings").asText()).isEqualTo("jvm");
    assertThat(separate.get("api_survived").asBoolean()).as(r.err()).isTrue();
    assertWorkerDiedAndCameBack(separate.get("worker"), r.err());
    // -XX:ActiveProcessorCount=1: the rogue report saw one processor and spun one thread.
    assertThat(separate.get("worker").get("spinning_threads").asInt()).isEqualTo(1);
    assertThat(separate.get("worker").get("throttled_periods").asLong()).isZero();
  }

  @Test
  void aPhaseTooShortIsAUsageErrorNamingTheOption() {
    CliTest.Run r = CliTest.run("demo", "processes", "--during", "0s");
    assertThat(r.exit()).isEqualTo(Main.USAGE);
    assertThat(r.out()).isEmpty();
    assertThat(r.err().strip()).doesNotContain("\n").contains("--during", "0s");
  }

  /** One bar per case, phase and route; the "during" bars are the p99s the JSON reports. */
  private static void assertP99BarsMatchTheJson(String page, JsonNode both) {
    Matcher bar =
        Pattern.compile(
                "<rect data-case=\"(\\w+)\" data-phase=\"(\\w+)\" "
                    + "data-route=\"(\\w+)\" data-p99-ms=\"([0-9.]+)\"")
            .matcher(page);
    List<String> seen = new ArrayList<>();
    while (bar.find()) {
      seen.add(bar.group(1) + " " + bar.group(2) + " " + bar.group(3));
      if (bar.group(2).equals("during")) {
        double json = both.get(bar.group(1)).get(bar.group(3)).get("p99_ms").asDouble();
        assertThat(Double.parseDouble(bar.group(4)))
            .as(seen.get(seen.size() - 1))
            .isCloseTo(json, within(0.001));
      }
    }
    assertThat(seen)
        .containsExactly(
            "inside before login",
            "inside before checkout",
            "inside during login",
            "inside during checkout",
            "separate before login",
            "separate before checkout",
            "separate during login",
            "separate during checkout");
  }

  private static void assertShape(JsonNode side) {
    assertThat(side.get("login").fieldNames()).toIterable().containsExactly("p50_ms", "p99_ms");
    assertThat(side.get("checkout").fieldNames())
        .toIterable()
        .containsExactly("p50_ms", "p99_ms", "errors");
    assertThat(side.get("login").get("p50_ms").isNumber()).isTrue();
    assertThat(side.get("checkout").get("p99_ms").isNumber()).isTrue();
    assertThat(side.get("checkout").get("errors").isInt()).isTrue();
    assertThat(side.get("api_survived").isBoolean()).isTrue();
    assertThat(side.get("ceilings").asText()).isIn("cgroup", "jvm");
    assertThat(side.get("worker").get("fate").asText()).isNotBlank();
  }

  private static void assertWorkerDiedAndCameBack(JsonNode worker, String log) {
    assertThat(worker.get("deaths").asInt()).as(log).isPositive();
    assertThat(worker.get("restarts").asInt()).as(log).isEqualTo(worker.get("deaths").asInt());
    assertThat(worker.get("fate").asText()).contains("restarted alone");
  }

  /** This JVM's descendants that are child JVMs of the experiment. */
  private static List<String> childJvms() {
    return ProcessHandle.current()
        .descendants()
        .filter(ProcessHandle::isAlive)
        .map(p -> p.pid() + " " + p.info().commandLine().orElse("?"))
        .filter(line -> line.contains("io.bulkhead.scenarios.ProcessChild"))
        .collect(Collectors.toList());
  }

  /** Control groups named after this JVM, anywhere in the hierarchy it may have made them in. */
  private static List<Path> ourGroups() {
    if (!Files.isDirectory(CGROUP_ROOT)) {
      return List.of();
    }
    String prefix = "bulkhead-" + ProcessHandle.current().pid() + "-";
    try (Stream<Path> walk = Files.walk(CGROUP_ROOT, CGROUP_DEPTH)) {
      return walk.filter(Files::isDirectory)
          .filter(p -> p.getFileName() != null && p.getFileName().toString().startsWith(prefix))
          .collect(Collectors.toList());
    } catch (IOException | UncheckedIOException unreadable) {
      throw new AssertionError("cannot read " + CGROUP_ROOT + ": " + unreadable);
    }
  }
}
