package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.jdbc.demo.LocalPostgres;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code demo db} through the command line: one-line errors, the JSON on stdout, and the figures added
 * to the HTML report (into {@code demo}'s page when there is one, replacing an earlier run's).
 */
class DbCommandTest {

  /** {"shared": D, "split": D}, key for key. */
  private static final String D = "\\{\"checkout\": \\{\"p50_ms\": \\d+\\.\\d, \"p99_ms\": \\d+\\.\\d,"
      + " \"errors\": \\d+, \"per_s\": \\d+\\.\\d\\}, \"reports\": \\{\"ok\": \\d+,"
      + " \"rejected\": \\d+, \"errors\": \\d+\\}\\}";
  private static final String JSON = "\\{\"shared\": " + D + ", \"split\": " + D + "\\}";

  private static void assertOneLineError(CliTest.Run r, int exit, String... fragments) {
    assertThat(r.exit).as(r.err).isEqualTo(exit);
    assertThat(r.out).isEmpty();
    assertThat(r.err.strip()).doesNotContain("\n").doesNotContain("\tat ")
        .doesNotContain("Exception").contains(fragments);
  }

  @Test
  void badOptionsAreOneLineAndExit2() {
    assertOneLineError(CliTest.run("demo", "db", "--degraded", "30x"), 2,
        "bulkhead-demo demo db: Invalid value for option '--degraded'", "'30x'");
    assertOneLineError(CliTest.run("demo", "db", "--duration", "0s"), 2,
        "bulkhead-demo demo db: degraded phase must be positive but was PT0S");
    assertOneLineError(CliTest.run("demo", "db", "--no-such-option"), 2,
        "bulkhead-demo demo db: Unknown option: '--no-such-option'");
  }

  @Test
  void aDatabaseThatCannotBeUsedIsOneLineAndExit1() throws IOException {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    String url = "jdbc:postgresql://127.0.0.1:" + closedPort + "/test";
    assertOneLineError(CliTest.run("demo", "db", "--jdbc-url", url), 1,
        "bulkhead-demo demo db: cannot use the PostgreSQL server at " + url, "refused");
    assertOneLineError(CliTest.run("demo", "db", "--jdbc-url", "jdbc:mysql://127.0.0.1/test"), 1,
        "must be a PostgreSQL JDBC URL");
  }

  @Test
  void printsTheJsonAndAddsTheFiguresToTheReportOnce(@TempDir Path dir) throws Exception {
    Path report = dir.resolve("report.html");
    Files.writeString(report, "<!DOCTYPE html>\n<html><body>\n<h1>demo's own page</h1>\n</body>"
        + "</html>\n", StandardCharsets.UTF_8);
    String[] shortRun = {"demo", "db", "--healthy", "1s", "--duration", "2s", "--degraded", "1.5s",
        "--report", report.toString()};

    CliTest.Run json = CliTest.run(concat(shortRun, "--json"));
    assertThat(json.exit).as(json.err).isZero();
    assertThat(json.out.strip()).matches(JSON);
    String page = Files.readString(report, StandardCharsets.UTF_8);
    assertThat(page).contains("<h1>demo's own page</h1>").contains(DbReport.BEGIN)
        .contains("<svg").containsSubsequence(DbReport.END, "</body>");
    assertNoConnectionLeft(json.err);

    CliTest.Run table = CliTest.run(shortRun);
    assertThat(table.exit).as(table.err).isZero();
    assertThat(table.out).contains("shared pool of 10").contains("split: checkout 6, reports 4")
        .contains("checkout p99").contains("machine: ").contains("added the figures to " + report);
    page = Files.readString(report, StandardCharsets.UTF_8);
    assertThat(page.split(Pattern.quote(DbReport.BEGIN), -1)).as("one section, replaced").hasSize(2);
    assertThat(page).contains("<h1>demo's own page</h1>");
    assertNoConnectionLeft(table.err);
  }

  @Test
  void writesAPageOfItsOwnWhenThereIsNone() {
    String page = DbReport.mergeInto(null, DbReport.BEGIN + "x" + DbReport.END);
    assertThat(page).startsWith("<!DOCTYPE html>").contains("<style>")
        .containsSubsequence(DbReport.BEGIN, "x", DbReport.END, "</body>");
    String replaced = DbReport.mergeInto(page, DbReport.BEGIN + "y" + DbReport.END);
    assertThat(replaced).contains(DbReport.BEGIN + "y" + DbReport.END).doesNotContain("x" + DbReport.END);
  }

  private static String[] concat(String[] a, String b) {
    String[] all = java.util.Arrays.copyOf(a, a.length + 1);
    all[a.length] = b;
    return all;
  }

  /** The runs' connections, named in the progress lines, are all gone from the server. */
  private static void assertNoConnectionLeft(String err) throws Exception {
    Matcher m = Pattern.compile("connections named (demo-db-[0-9a-f]+)-").matcher(err);
    assertThat(m.find()).as(err).isTrue();
    String prefix = m.group(1);
    try (LocalPostgres db = LocalPostgres.findOrStart()) {
      await().atMost(Duration.ofSeconds(20)).until(() -> backends(db, prefix) == 0);
    }
  }

  private static int backends(LocalPostgres db, String prefix) throws Exception {
    try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE ?")) {
      ps.setString(1, prefix + "%");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
