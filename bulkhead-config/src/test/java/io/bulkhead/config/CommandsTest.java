package io.bulkhead.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The check and size commands, with their real output. */
class CommandsTest {

  private StringWriter outText = new StringWriter();
  private StringWriter errText = new StringWriter();
  private PrintWriter out = new PrintWriter(outText, true);
  private PrintWriter err = new PrintWriter(errText, true);

  private String out() {
    out.flush();
    return outText.toString();
  }

  private String err() {
    err.flush();
    return errText.toString();
  }

  private void resetErr() {
    errText = new StringWriter();
    err = new PrintWriter(errText, true);
  }

  private void resetOut() {
    outText = new StringWriter();
    out = new PrintWriter(outText, true);
  }

  @Test
  void check_workedExample_printsTheTable_andExitsZero() {
    int code = CheckCommand.run(BulkheadFileTest.EXAMPLE, out, err);
    assertThat(out()).isEqualTo(String.join("\n",
        "../examples/checkout-reports.yml: 2 compartments, 1 budget",
        "",
        "compartment  budget    rate  latency  need  headroom  limit  share",
        "checkout     postgres  40/s  50ms     2     x3        6      60%",
        "reports      postgres  2/s   1.5s     3     x4/3      4      40%",
        "",
        "budget 'postgres': checkout 6 + reports 4 = 10, within its capacity of 10",
        ""));
    assertThat(err()).isEmpty();
    assertThat(code).isEqualTo(CheckCommand.OK);
  }

  @Test
  void check_overSubscribedBudget_printsTheTable_andExitsOne(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("over.yml");
    Files.writeString(file, String.join("\n",
        "budgets: {postgres: 10, llm-api: 50}",
        "compartments:",
        "  checkout: {budget: postgres, criticality: critical, rate: 40/s, latency: 50ms}",
        "  reports: {budget: postgres, criticality: critical, rate: 2/s, latency: 1.5s}",
        "  chat: {budget: llm-api, limit: 20}",
        "  cache: {limit: 8}"));
    int code = CheckCommand.run(file, out, err);
    assertThat(code).isEqualTo(CheckCommand.OVER_SUBSCRIBED);
    assertThat(out()).contains(
        "compartment  budget    rate  latency  need  headroom  limit  share\n"
            + "checkout     postgres  40/s  50ms     2     x3        6      60%\n"
            + "reports      postgres  2/s   1.5s     3     x3        9      90%\n"
            + "chat         llm-api   -     -        -     -         20     40%\n"
            + "cache        -         -     -        -     -         8      -\n")
        .contains("budget 'postgres' is over-subscribed: checkout 6 + reports 9 = 15, more than its"
            + " capacity of 10\n")
        .contains("budget 'llm-api': chat 20 = 20, within its capacity of 50\n");
  }

  @Test
  void check_badFile_printsOneLine_noStackTrace_andExitsTwo(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("typo.yml");
    Files.writeString(file, "compartments:\n  checkout:\n    limt: 6\n");
    int code = CheckCommand.run(file, out, err);
    assertThat(code).isEqualTo(CheckCommand.INVALID);
    assertThat(out()).isEmpty();
    assertThat(err()).isEqualTo(file + ":3: compartments.checkout.limt: unknown key (did you mean 'limit'?)\n");

    resetErr();
    assertThat(CheckCommand.run(dir.resolve("missing.yml"), out, err)).isEqualTo(CheckCommand.INVALID);
    assertThat(err()).isEqualTo(dir.resolve("missing.yml") + ": no such file\n");
  }

  @Test
  void check_listsWorkerPoolsInTheTable() {
    String text = CheckCommand.render(BulkheadFile.parse(String.join("\n",
        "budgets: {postgres: 10}",
        "compartments:",
        "  checkout: {budget: postgres, criticality: critical, rate: 40/s, latency: 50ms}",
        "workers:",
        "  exports: {budget: postgres, workers: 2, queue: 50}"), "f.yml"));
    assertThat(text).isEqualTo(String.join("\n",
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
    String text = CheckCommand.render(BulkheadFile.parse(String.join("\n",
        "compartments:",
        "  reports: {rate: 2/s, latency: 1.5s, limit: 4}"), "f.yml"));
    assertThat(text).isEqualTo(String.join("\n",
        "f.yml: 1 compartment, 0 budgets",
        "",
        "compartment  budget  rate  latency  need  headroom  limit  share",
        "reports      -       2/s   1.5s     3     (x1.33)   4      -",
        "(xN): the limit is given in the file; N = limit / need",
        ""));
  }

  @Test
  void size_checkout() {
    assertThat(SizeCommand.run("40/s", "50ms", "3", null, out, err)).isZero();
    assertThat(out()).isEqualTo("need      2 calls in flight (40/s x 50ms)\n"
        + "headroom  x3\n"
        + "limit     6 (2 x 3 = 6)\n");
  }

  @Test
  void size_reports_aThirdAbove_asAFraction_andWhy134IsNotTheSame() {
    assertThat(SizeCommand.run("2/s", "1.5s", "4/3", null, out, err)).isZero();
    assertThat(out()).isEqualTo("need      3 calls in flight (2/s x 1.5s)\n"
        + "headroom  x4/3\n"
        + "limit     4 (3 x 4/3 = 4)\n");
    resetOut();
    assertThat(SizeCommand.run("2/s", "1.5s", "1.34", null, out, err)).isZero();
    assertThat(out()).isEqualTo("need      3 calls in flight (2/s x 1.5s)\n"
        + "headroom  x1.34\n"
        + "limit     5 (3 x 1.34 = 4.02, rounded up)\n");
  }

  @Test
  void size_whatIf_reportsDegradeTo30s() {
    assertThat(SizeCommand.run("2/s", "30s", null, "4", out, err)).isZero();
    assertThat(out()).isEqualTo("need      60 calls in flight (2/s x 30s)\n"
        + "limit     180 if critical (x3), 80 if optional (x4/3)\n"
        + "with limit 4: at most 4 of the 60 calls it needs are in flight; about 7% of calls are"
        + " admitted and 93% rejected at once, and other compartments keep their slots\n");
  }

  @Test
  void size_otherUnits_andALimitWithRoom() {
    assertThat(SizeCommand.run("2400/min", "50ms", "3", "6", out, err)).isZero();
    assertThat(out()).isEqualTo("need      2 calls in flight (40/s x 50ms)\n"
        + "headroom  x3\n"
        + "limit     6 (2 x 3 = 6)\n"
        + "with limit 6: room for the need of 2 (x3)\n");
  }

  @Test
  void size_badInput_namesTheOption_inOneLine() {
    assertThat(SizeCommand.run("40", "50ms", "3", null, out, err)).isEqualTo(SizeCommand.INVALID);
    assertThat(err()).isEqualTo("size: --rate: expected a rate with a unit, like 40/s, 2400/min or 3/h,"
        + " but was '40'\n");
    resetErr();
    assertThat(SizeCommand.run("40/s", "soon", null, null, out, err)).isEqualTo(SizeCommand.INVALID);
    assertThat(err()).isEqualTo("size: --latency: expected a duration with a unit, like 50ms, 1.5s or 2m,"
        + " but was 'soon'\n");
    resetErr();
    assertThat(SizeCommand.run("40/s", "50ms", "0.5", null, out, err)).isEqualTo(SizeCommand.INVALID);
    assertThat(err()).isEqualTo("size: --headroom: headroom must be at least 1 (1 = exactly the need) but"
        + " was '0.5'\n");
    resetErr();
    assertThat(SizeCommand.run("0/s", "50ms", null, null, out, err)).isEqualTo(SizeCommand.INVALID);
    assertThat(err()).isEqualTo("size: --rate/--latency: callsPerSecond must be a finite number above"
        + " zero but was 0.0\n");
    resetErr();
    assertThat(SizeCommand.run("1000000/s", "1000s", null, null, out, err)).isEqualTo(SizeCommand.INVALID);
    assertThat(err()).startsWith("size: --rate/--latency: limit for need 1.0E9 x headroom 3.0")
        .endsWith("more than a compartment can hold\n");
    resetErr();
    assertThat(SizeCommand.run("40/s", "50ms", null, "0", out, err)).isEqualTo(SizeCommand.INVALID);
    assertThat(err()).isEqualTo("size: --limit: must be at least 1 but was 0\n");
    assertThat(out()).isEmpty();
  }
}
