package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Option values written to break the commands (a control character, a huge or negative number):
 * each is a usage error, exit 2, one line naming the option, before anything starts; and nothing
 * the user typed reaches the terminal as a control sequence.
 */
class HostileOptionsTest {

  /**
   * An upstream nobody listens at: if validation let a value through, app would fail with exit 1.
   */
  private static String closedUpstream() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return "http://127.0.0.1:" + s.getLocalPort();
    }
  }

  private static void usageError(CliTest.Run r, String option) {
    assertThat(r.exit()).as(r.err()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err().strip()).doesNotContain("\n").doesNotContain("Exception").contains(option);
  }

  @Test
  void app_aQueueBeyondWhatACompartmentCounts_isAUsageError() throws IOException {
    usageError(
        CliTest.run("app", "--upstream", closedUpstream(), "--llm-max-queue", "20000000"),
        "--llm-max-queue");
  }

  @Test
  void app_aWaitBeyondANanosecondDeadline_isAUsageError() throws IOException {
    usageError(
        CliTest.run("app", "--upstream", closedUpstream(), "--llm-max-wait", "PT999999999H"),
        "--llm-max-wait");
  }

  @Test
  void app_anUpstreamDeadlineBeyondWhatTheClientTakes_isAUsageError() throws IOException {
    usageError(
        CliTest.run("app", "--upstream", closedUpstream(), "--upstream-deadline", "PT48H"),
        "--upstream-deadline");
    usageError(
        CliTest.run(
            "app", "--upstream", closedUpstream(), "--upstream-deadline", "PT2000000000000000H"),
        "--upstream-deadline");
  }

  @Test
  void load_countsBeyondTheBound_areAUsageError() throws IOException {
    usageError(
        CliTest.run(
            "load",
            "--target",
            closedUpstream(),
            "--chats",
            "2000000000",
            "--logins",
            "2000000000"),
        "--chats");
    usageError(
        CliTest.run("load", "--target", closedUpstream(), "--logins", "2000000000"), "--logins");
  }

  @Test
  void load_aWarmUpOutOfRange_isAUsageError() throws IOException {
    usageError(CliTest.run("load", "--target", closedUpstream(), "--warm-up", "21"), "--warm-up");
    usageError(CliTest.run("load", "--target", closedUpstream(), "--warm-up", "-1"), "--warm-up");
  }

  @Test
  void demo_countsAndServerLimitsAtTheEdge_areAUsageErrorOrValid() {
    usageError(
        CliTest.run("demo", "--chats", "2000000000", "--dashboard", "--port", "-1"), "--chats");
    // The biggest server limit is valid: the load's timeout arithmetic must not overflow on it.
    usageError(
        CliTest.run("demo", "--server-limit", "2147483647", "--dashboard", "--port", "-1"),
        "--port");
  }

  @Test
  void partition_callsBeyondTheBound_areAUsageError() {
    usageError(CliTest.run("partition", "--reports", "2000000000"), "--reports");
  }

  @Test
  void controlCharactersInAnOption_areShownEscaped_onOneLine() {
    CliTest.Run r = CliTest.run("app", "--mode", "\u001b[2J\u009b31m\nbulkhead");
    usageError(r, "--mode");
    assertThat(r.err()).doesNotContain("\u001b").doesNotContain("\u009b").contains("\\u001B[2J");
  }

  @Test
  void aHugeOptionValue_isCutShort() {
    CliTest.Run r = CliTest.run("app", "--llm-max-queue", "9".repeat(100_000));
    usageError(r, "--llm-max-queue");
    assertThat(r.err().length()).isLessThan(Main.LONGEST_LINE + 2);
  }

  @Test
  void check_aFileNameWithANewline_staysOnOneLine(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("a\nb\u001b[31m.yml");
    Files.writeString(file, "compartments: {c: {limit: 0}}\n", StandardCharsets.UTF_8);
    CliTest.Run r = CliTest.run("check", file.toString());
    usageError(r, "limit");
    assertThat(r.err()).doesNotContain("\u001b").contains("a\\u000Ab\\u001B[31m.yml:1:");
  }
}
