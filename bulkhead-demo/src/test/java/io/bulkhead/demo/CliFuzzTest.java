package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Property-based fuzzing of every command's options: random values, edge numbers and durations,
 * Unicode and control characters, run through {@link Main} in process. The exit code is 0, 1 or 2,
 * and a failure is one printable line. Commands that would run for real are pointed where they fail
 * fast once their options are accepted: app and load at a closed port, upstream at a port in use,
 * demo at an invalid dashboard port (checked after its settings).
 */
class CliFuzzTest {

  private static ServerSocket taken;
  private static int closed;

  @BeforeContainer
  static void ports() throws IOException {
    taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closed = s.getLocalPort();
    }
  }

  @AfterContainer
  static void release() throws IOException {
    taken.close();
  }

  @Provide
  Arbitrary<String> values() {
    return Arbitraries.oneOf(
        Arbitraries.of(
            "0",
            "1",
            "-1",
            "2",
            "7",
            "2147483647",
            "2147483648",
            "-2147483648",
            "9223372036854775807",
            "16777215",
            "16777216",
            "10000",
            "10001",
            "20000000",
            "0s",
            "1ns",
            "PT0S",
            "PT48H",
            "PT24H",
            "PT999999999H",
            "PT2000000000000000H",
            "PT-1S",
            "1.5s",
            "30s",
            "2562047h",
            "9223372036854775807ns",
            "1e308/s",
            "40/s",
            "0/s",
            "4/3",
            "x3",
            "0.5",
            "1/0",
            "shared",
            "bulkhead",
            "",
            " ",
            "\u001b[2J",
            "\u009b31m",
            "a\nb",
            "\u202e",
            "\ud800"),
        Arbitraries.integers().map(String::valueOf),
        Arbitraries.longs().map(String::valueOf),
        Arbitraries.strings().all().ofMaxLength(20),
        Arbitraries.strings().numeric().ofMinLength(1).ofMaxLength(400));
  }

  private static void assertWellBehaved(List<String> args) {
    CliTest.Run r = CliTest.run(args.toArray(new String[0]));
    assertThat(r.exit()).as("%s -> %s", args, r.err()).isBetween(0, 2);
    if (r.exit() != 0) {
      String line = r.err().strip();
      assertThat(line).as("%s", args).isNotEmpty().doesNotContain("\n").doesNotContain("\tat ");
      assertThat(line.length()).isLessThanOrEqualTo(Main.LONGEST_LINE);
      line.codePoints()
          .forEach(
              c -> assertThat(Character.isISOControl(c)).as("U+%04X in %s", c, line).isFalse());
    }
  }

  @Property(tries = 150)
  void app(
      @ForAll("values") String serverLimit,
      @ForAll("values") String llmLimit,
      @ForAll("values") String llmQueue,
      @ForAll("values") String llmWait,
      @ForAll("values") String deadline,
      @ForAll("values") String mode) {
    assertWellBehaved(
        List.of(
            "app",
            "--upstream",
            "http://127.0.0.1:" + closed,
            "--server-limit",
            serverLimit,
            "--llm-limit",
            llmLimit,
            "--llm-max-queue",
            llmQueue,
            "--llm-max-wait",
            llmWait,
            "--upstream-deadline",
            deadline,
            "--mode",
            mode));
  }

  @Property(tries = 100)
  void load(
      @ForAll("values") String chats,
      @ForAll("values") String logins,
      @ForAll("values") String after,
      @ForAll("values") String timeout) {
    assertWellBehaved(
        List.of(
            "load",
            "--target",
            "http://127.0.0.1:" + closed,
            "--chats",
            chats,
            "--logins",
            logins,
            "--logins-after",
            after,
            "--timeout",
            timeout));
  }

  @Property(tries = 100)
  void demo(
      @ForAll("values") String delay,
      @ForAll("values") String chats,
      @ForAll("values") String llmQueue,
      @ForAll("values") String deadline,
      @ForAll("values") String serverLimit) {
    assertWellBehaved(
        List.of(
            "demo",
            "--dashboard",
            "--port",
            "-1",
            "--delay",
            delay,
            "--chats",
            chats,
            "--llm-max-queue",
            llmQueue,
            "--upstream-deadline",
            deadline,
            "--server-limit",
            serverLimit));
  }

  @Property(tries = 60)
  void upstream(@ForAll("values") String delay) {
    assertWellBehaved(
        List.of("upstream", "--port", Integer.toString(taken.getLocalPort()), "--delay", delay));
  }

  @Property(tries = 150)
  void size(
      @ForAll("values") String rate,
      @ForAll("values") String latency,
      @ForAll("values") String headroom,
      @ForAll("values") String limit) {
    List<String> args =
        new ArrayList<>(
            List.of("size", "--rate", rate, "--latency", latency, "--headroom", headroom));
    if (!limit.isEmpty() && Character.isDigit(limit.charAt(0))) {
      args.add("--limit");
      args.add(limit);
    }
    assertWellBehaved(args);
  }

  @Property(tries = 80)
  void partition(
      @ForAll("values") String slots,
      @ForAll("values") String share,
      @ForAll("values") String reports,
      @ForAll("values") String payments) {
    assertWellBehaved(
        List.of(
            "partition",
            "--slots",
            slots,
            "--reports-share",
            share,
            "--reports",
            reports,
            "--payments",
            payments));
  }

  @Property(tries = 40)
  void check(@ForAll("values") String file) {
    assertWellBehaved(List.of("check", file));
  }

  @Property(tries = 40)
  void checkDeploy(@ForAll("values") String deployment) {
    assertWellBehaved(List.of("check", "../examples/checkout-reports.yml", "--deploy", deployment));
  }
}
