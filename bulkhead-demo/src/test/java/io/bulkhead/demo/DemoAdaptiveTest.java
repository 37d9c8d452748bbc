package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code demo --adaptive} at a small scale: the bulkhead-mode llm compartment adapts its limit, the
 * JSON result traces it as read from the compartment during the run, and the HTML report draws
 * exactly those points.
 */
class DemoAdaptiveTest {

  private static final Pattern DOT =
      Pattern.compile("<title>llm limit \\(gradient\\): (\\d+) at ([0-9.]+) s</title>");

  @Test
  void theReport_chartsTheLimit_theRunRead(@TempDir Path dir) throws Exception {
    Path html = dir.resolve("r.html");
    Path json = dir.resolve("r.json");
    // 40 chats for 10 slots and 20 places in the queue: the load presses the limit, and every
    // upstream call (300 ms) outlasts the interval (100 ms), so its release asks the controller.
    CliTest.Run r =
        CliTest.run(
            "demo",
            "--adaptive",
            "--adaptive-interval",
            "100ms",
            "--delay",
            "300ms",
            "--chats",
            "40",
            "--logins",
            "4",
            "--logins-after",
            "50ms",
            "--no-warm-up",
            "--report",
            html.toString(),
            "--result",
            json.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains("llm limit (gradient)");

    JsonNode trace = new ObjectMapper().readTree(json.toFile()).path("bulkhead").path("llm_limit");
    System.out.println("llm limit trace: " + trace); // for whoever reads the build log
    assertThat(trace.path("controller").asText()).isEqualTo("gradient");
    assertThat(trace.path("min").asInt()).isEqualTo(1);
    assertThat(trace.path("max").asInt()).isEqualTo(20);
    List<long[]> points = new ArrayList<>();
    trace
        .path("points")
        .forEach(p -> points.add(new long[] {p.get(0).asLong(), p.get(1).asLong()}));
    // It starts at --llm-limit, moved while the load pressed it, and stayed in its range.
    assertThat(points.get(0)).containsExactly(0, 10);
    assertThat(trace.path("changes").asLong()).isPositive();
    assertThat(trace.path("last_move").asText()).isNotEmpty();
    assertThat(points).allMatch(p -> p[1] >= 1 && p[1] <= 20);
    assertThat(points).extracting(p -> p[1]).anyMatch(limit -> limit != 10);
    assertThat(points).isSortedAccordingTo((a, b) -> Long.compare(a[0], b[0]));

    String page = Files.readString(html);
    assertThat(page)
        .contains("The llm compartment's limit over the run")
        .contains("aria-label=\"llm limit\"")
        .contains("<polyline data-series=\"llm limit (gradient)\"");
    // One dot per point of the result, with that point's numbers, in order.
    Matcher dot = DOT.matcher(page);
    List<long[]> drawn = new ArrayList<>();
    while (dot.find()) {
      drawn.add(
          new long[] {
            Math.round(Double.parseDouble(dot.group(2)) * 1000), Long.parseLong(dot.group(1))
          });
    }
    assertThat(drawn).hasSameSizeAs(points);
    for (int i = 0; i < points.size(); i++) {
      assertThat(drawn.get(i)[1]).isEqualTo(points.get(i)[1]);
      assertThat(drawn.get(i)[0])
          .isCloseTo(points.get(i)[0], org.assertj.core.data.Offset.offset(5L));
    }
  }

  @Test
  void badInput_isOneLine_namingTheOptionAndValue() {
    CliTest.Run unknown = CliTest.run("demo", "--adaptive", "vegas");
    assertThat(unknown.exit()).isEqualTo(2);
    assertThat(unknown.out()).isEmpty();
    assertThat(unknown.err().strip())
        .doesNotContain("\n")
        .contains("--adaptive must be gradient or aimd but was 'vegas'");

    CliTest.Run alone = CliTest.run("demo", "--adaptive-interval", "100ms");
    assertThat(alone.exit()).isEqualTo(2);
    assertThat(alone.err().strip())
        .doesNotContain("\n")
        .contains("--adaptive-interval needs --adaptive");

    CliTest.Run zero = CliTest.run("demo", "--adaptive", "aimd", "--adaptive-interval", "0s");
    assertThat(zero.exit()).isEqualTo(2);
    assertThat(zero.err().strip())
        .doesNotContain("\n")
        .contains("--adaptive-interval: adaptive interval must be positive but was 0s");
  }
}
