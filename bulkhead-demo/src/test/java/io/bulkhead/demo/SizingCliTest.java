package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.demo.CliTest.Run;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code check} and {@code size} as subcommands of the demo jar: the seed 003 worked example. */
class SizingCliTest {

  private static final String EXAMPLE = Path.of("..", "examples", "checkout-reports.yml").toString();

  private static void assertOneLineError(Run r, int exit, String... fragments) {
    assertThat(r.exit).as(r.err).isEqualTo(exit);
    assertThat(r.out).isEmpty();
    assertThat(r.err).endsWith("\n");
    assertThat(r.err.strip()).doesNotContain("\n").doesNotContain("\tat ")
        .doesNotContain("Exception").contains(fragments);
  }

  @Test
  void check_workedExample() {
    Run r = CliTest.run("check", EXAMPLE);
    assertThat(r.exit).as(r.err).isZero();
    assertThat(r.err).isEmpty();
    assertThat(r.out).isEqualTo(String.join("\n",
        EXAMPLE + ": 2 compartments, 1 budget",
        "",
        "compartment  budget    rate  latency  need  headroom  limit  share",
        "checkout     postgres  40/s  50ms     2     x3        6      60%",
        "reports      postgres  2/s   1.5s     3     x4/3      4      40%",
        "",
        "budget 'postgres': checkout 6 + reports 4 = 10, within its capacity of 10",
        ""));
  }

  @Test
  void check_overSubscribed_exitsOne(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("over.yml");
    Files.writeString(file, "budgets: {postgres: 10}\ncompartments:\n"
        + "  checkout: {budget: postgres, limit: 6}\n  reports: {budget: postgres, limit: 6}\n");
    Run r = CliTest.run("check", file.toString());
    assertThat(r.exit).isEqualTo(1);
    assertThat(r.out).contains("budget 'postgres' is over-subscribed: checkout 6 + reports 6 = 12, more"
        + " than its capacity of 10");
  }

  @Test
  void check_badFile_isOneLineNamingFileLineAndKey(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("typo.yml");
    Files.writeString(file, "compartments:\n  checkout:\n    limit: 6\n    queu: 2\n");
    assertOneLineError(CliTest.run("check", file.toString()), 2,
        file + ":4: compartments.checkout.queu: unknown key (did you mean 'queue'?)");
    assertOneLineError(CliTest.run("check", dir.resolve("missing.yml").toString()), 2, "no such file");
    assertOneLineError(CliTest.run("check"), 2, "bulkhead-demo check: Missing required parameter: 'FILE'");
  }

  @Test
  void size_checkout() {
    Run r = CliTest.run("size", "--rate", "40/s", "--latency", "50ms", "--headroom", "3");
    assertThat(r.exit).as(r.err).isZero();
    assertThat(r.out).isEqualTo("need      2 calls in flight (40/s x 50ms)\n"
        + "headroom  x3\n"
        + "limit     6 (2 x 3 = 6)\n");
  }

  @Test
  void size_reports_andTheDegradedWhatIf() {
    Run reports = CliTest.run("size", "--rate", "2/s", "--latency", "1.5s", "--headroom", "4/3");
    assertThat(reports.out).isEqualTo("need      3 calls in flight (2/s x 1.5s)\n"
        + "headroom  x4/3\n"
        + "limit     4 (3 x 4/3 = 4)\n");
    Run degraded = CliTest.run("size", "--rate", "2/s", "--latency", "30s");
    assertThat(degraded.exit).isZero();
    assertThat(degraded.out).startsWith("need      60 calls in flight (2/s x 30s)\n");
  }

  @Test
  void size_badValues_areOneLineUsageErrors() {
    assertOneLineError(CliTest.run("size", "--rate", "40", "--latency", "50ms"), 2,
        "bulkhead-demo size: --rate: expected a rate with a unit, like 40/s, 2400/min or 3/h, but was"
            + " '40' (see bulkhead-demo size --help)");
    assertOneLineError(CliTest.run("size", "--rate", "40/s"), 2,
        "bulkhead-demo size: Missing required option: '--latency=DURATION'");
    assertOneLineError(CliTest.run("size", "--rate", "40/s", "--latency", "50ms", "--headroom", "0.5"), 2,
        "--headroom: headroom must be at least 1");
  }
}
