package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.config.BulkheadFile;
import io.bulkhead.demo.CliTest.Run;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code check} and {@code size}, the sizing commands of the demo jar, with their real output: the
 * worked example of the checkout-vs-reports outage, over-subscribed budgets, and bad input.
 */
class SizingCliTest {

  private static final String EXAMPLE =
      Path.of("..", "examples", "checkout-reports.yml").toString();

  private static void assertOneLineError(Run r, int exit, String... fragments) {
    assertThat(r.exit()).as(r.err()).isEqualTo(exit);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).endsWith("\n");
    assertThat(r.err().strip())
        .doesNotContain("\n")
        .doesNotContain("\tat ")
        .doesNotContain("Exception")
        .contains(fragments);
  }

  @Test
  void check_workedExample_printsTheTable_andExitsZero() {
    Run r = CliTest.run("check", EXAMPLE);
    assertThat(r.exit()).as(r.err()).isEqualTo(CheckCommand.OK);
    assertThat(r.err()).isEmpty();
    assertThat(r.out())
        .isEqualTo(
            String.join(
                "\n",
                EXAMPLE + ": 2 compartments, 1 budget",
                "",
                "compartment  budget    rate  latency  need  headroom  limit  share",
                "checkout     postgres  40/s  50ms     2     x3        6      60%",
                "reports      postgres  2/s   1.5s     3     x4/3      4      40%",
                "",
                "budget 'postgres': checkout 6 + reports 4 = 10, within its capacity of 10",
                ""));
  }

  /** Found by CliFuzzTest: a long file name made check's error line wider than any other. */
  @Test
  void check_aMissingFileWithALongName_isOneLineNoWiderThanTheOthers() {
    Run r = CliTest.run("check", "9".repeat(450));
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err().lines())
        .hasSize(1)
        .allSatisfy(line -> assertThat(line.length()).isLessThanOrEqualTo(Main.LONGEST_LINE));
  }

  @Test
  void check_overSubscribedBudget_printsTheTable_andExitsOne(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("over.yml");
    Files.writeString(
        file,
        String.join(
            "\n",
            "budgets: {postgres: 10, llm-api: 50}",
            "compartments:",
            "  checkout: {budget: postgres, criticality: critical, rate: 40/s, latency: 50ms}",
            "  reports: {budget: postgres, criticality: critical, rate: 2/s, latency: 1.5s}",
            "  chat: {budget: llm-api, limit: 20}",
            "  cache: {limit: 8}"));
    Run r = CliTest.run("check", file.toString());
    assertThat(r.exit()).isEqualTo(CheckCommand.OVER_SUBSCRIBED);
    assertThat(r.err()).isEmpty();
    assertThat(r.out())
        .contains(
            "compartment  budget    rate  latency  need  headroom  limit  share\n"
                + "checkout     postgres  40/s  50ms     2     x3        6      60%\n"
                + "reports      postgres  2/s   1.5s     3     x3        9      90%\n"
                + "chat         llm-api   -     -        -     -         20     40%\n"
                + "cache        -         -     -        -     -         8      -\n")
        .contains(
            "budget 'postgres' is over-subscribed: checkout 6 + reports 9 = 15, more than its"
                + " capacity of 10\n")
        .contains("budget 'llm-api': chat 20 = 20, within its capacity of 50\n");
  }

  @Test
  void check_badFile_isOneLineNamingFileLineAndKey_andExitsTwo(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("typo.yml");
    Files.writeString(file, "compartments:\n  checkout:\n    limit: 6\n    max-queu: 2\n");
    Run typo = CliTest.run("check", file.toString());
    assertOneLineError(typo, CheckCommand.INVALID, "unknown key");
    assertThat(typo.err())
        .isEqualTo(
            file + ":4: compartments.checkout.max-queu: unknown key (did you mean 'max-queue'?)\n");
    Run missing = CliTest.run("check", dir.resolve("missing.yml").toString());
    assertOneLineError(missing, CheckCommand.INVALID, "no such file");
    assertThat(missing.err()).isEqualTo(dir.resolve("missing.yml") + ": no such file\n");
    assertOneLineError(
        CliTest.run("check"), 2, "bulkhead-demo check: Missing required parameter: 'FILE'");
  }

  @Test
  void check_listsWorkerPoolsInTheTable() {
    String text =
        CheckCommand.render(
            BulkheadFile.parse(
                String.join(
                    "\n",
                    "budgets: {postgres: 10}",
                    "compartments:",
                    "  checkout: {budget: postgres, criticality: critical, rate: 40/s, latency: 50ms}",
                    "worker-pools:",
                    "  exports: {budget: postgres, limit: 2, max-queue: 50, max-wait: 1s}"),
                "f.yml"));
    assertThat(text)
        .isEqualTo(
            String.join(
                "\n",
                "f.yml: 1 compartment, 1 worker pool, 1 budget",
                "",
                "compartment        budget    rate  latency  need  headroom  limit  share",
                "checkout           postgres  40/s  50ms     2     x3        6      60%",
                "exports (workers)  postgres  -     -        -     -         2      20%",
                "",
                "budget 'postgres': checkout 6 + exports 2 = 8, within its capacity of 10",
                ""));
  }

  @Test
  void check_givenLimits_showTheirEffectiveHeadroom() {
    String text =
        CheckCommand.render(
            BulkheadFile.parse(
                String.join(
                    "\n", "compartments:", "  reports: {rate: 2/s, latency: 1.5s, limit: 4}"),
                "f.yml"));
    assertThat(text)
        .isEqualTo(
            String.join(
                "\n",
                "f.yml: 1 compartment, 0 budgets",
                "",
                "compartment  budget  rate  latency  need  headroom  limit  share",
                "reports      -       2/s   1.5s     3     (x1.33)   4      -",
                "(xN): the limit is given in the file; N = limit / need",
                ""));
  }

  @Test
  void size_checkout() {
    Run r = CliTest.run("size", "--rate", "40/s", "--latency", "50ms", "--headroom", "3");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out())
        .isEqualTo(
            "need      2 calls in flight (40/s x 50ms)\n"
                + "headroom  x3\n"
                + "limit     6 (2 x 3 = 6)\n");
  }

  @Test
  void size_reports_aThirdAbove_asAFraction_andWhy134IsNotTheSame() {
    Run fraction = CliTest.run("size", "--rate", "2/s", "--latency", "1.5s", "--headroom", "4/3");
    assertThat(fraction.out())
        .isEqualTo(
            "need      3 calls in flight (2/s x 1.5s)\n"
                + "headroom  x4/3\n"
                + "limit     4 (3 x 4/3 = 4)\n");
    Run decimal = CliTest.run("size", "--rate", "2/s", "--latency", "1.5s", "--headroom", "1.34");
    assertThat(decimal.out())
        .isEqualTo(
            "need      3 calls in flight (2/s x 1.5s)\n"
                + "headroom  x1.34\n"
                + "limit     5 (3 x 1.34 = 4.02, rounded up)\n");
  }

  @Test
  void size_whatIf_reportsDegradeTo30s_writtenEitherWay() {
    String expected =
        "need      60 calls in flight (2/s x 30s)\n"
            + "limit     180 if critical (x3), 80 if optional (x4/3)\n"
            + "with limit 4: at most 4 of the 60 calls it needs are in flight; about 7% of calls are"
            + " admitted and 93% rejected at once, and other compartments keep their slots\n";
    Run shortForm = CliTest.run("size", "--rate", "2/s", "--latency", "30s", "--limit", "4");
    assertThat(shortForm.exit()).as(shortForm.err()).isZero();
    assertThat(shortForm.out()).isEqualTo(expected);
    Run iso = CliTest.run("size", "--rate", "2/s", "--latency", "PT30S", "--limit", "4");
    assertThat(iso.out()).isEqualTo(expected);
  }

  @Test
  void size_otherUnits_andALimitWithRoom() {
    Run r =
        CliTest.run(
            "size", "--rate", "2400/min", "--latency", "50ms", "--headroom", "3", "--limit", "6");
    assertThat(r.out())
        .isEqualTo(
            "need      2 calls in flight (40/s x 50ms)\n"
                + "headroom  x3\n"
                + "limit     6 (2 x 3 = 6)\n"
                + "with limit 6: room for the need of 2 (x3)\n");
  }

  @Test
  void size_badValues_areOneLineUsageErrors_namingTheOption() {
    assertOneLineError(
        CliTest.run("size", "--rate", "40", "--latency", "50ms"),
        2,
        "bulkhead-demo size: Invalid value for option '--rate': expected a rate with a unit, like 40/s,"
            + " 2400/min or 3/h, but was '40' (see bulkhead-demo size --help)");
    assertOneLineError(
        CliTest.run("size", "--rate", "40/s"),
        2,
        "bulkhead-demo size: Missing required option: '--latency=DURATION'");
    assertOneLineError(
        CliTest.run("size", "--rate", "40/s", "--latency", "soon"),
        2,
        "Invalid value for option '--latency': expected a duration with a unit, like 250ms, 1.5s, 5m,"
            + " 1h or PT30S, but was 'soon'");
    assertOneLineError(
        CliTest.run("size", "--rate", "40/s", "--latency", "50ms", "--headroom", "0.5"),
        2,
        "Invalid value for option '--headroom': headroom must be at least 1 (1 = exactly the need) but"
            + " was '0.5'");
    assertOneLineError(
        CliTest.run("size", "--rate", "0/s", "--latency", "50ms"),
        2,
        "bulkhead-demo size: --rate/--latency: callsPerSecond must be a finite number above zero but"
            + " was 0.0");
    assertOneLineError(
        CliTest.run("size", "--rate", "1000000/s", "--latency", "1000s"),
        2,
        "bulkhead-demo size: --rate/--latency: limit for need 1.0E9 x headroom 3.0",
        "more than a compartment can hold");
    assertOneLineError(
        CliTest.run("size", "--rate", "40/s", "--latency", "50ms", "--limit", "0"),
        2,
        "bulkhead-demo size: --limit: must be at least 1 but was 0");
    assertOneLineError(
        CliTest.run("size", "--rate", "40/s", "--latency", "2562048h"),
        2,
        "Invalid value for option '--latency': '2562048h' is too long");
  }
}
