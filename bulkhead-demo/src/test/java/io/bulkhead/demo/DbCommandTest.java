package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bulkhead.localdb.LocalPostgres;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
 * {@code demo db} through the command line: one-line errors, the JSON on stdout, and the figures
 * added to the HTML report (into {@code demo}'s page when there is one, replacing an earlier
 * run's).
 */
class DbCommandTest {

  /** A figure to a tenth: whole ones without a fraction, as the JSON writer writes them. */
  private static final String TENTHS = "\\d+(\\.\\d)?";

  /** {"shared": D, "split": D}, key for key. */
  private static final String D =
      "\\{\"checkout\":\\{\"p50_ms\":"
          + TENTHS
          + ",\"p99_ms\":"
          + TENTHS
          + ",\"errors\":\\d+,\"per_s\":"
          + TENTHS
          + "\\},\"reports\":\\{\"ok\":\\d+,"
          + "\"rejected\":\\d+,\"errors\":\\d+\\}\\}";

  private static final String JSON = "\\{\"shared\":" + D + ",\"split\":" + D + "\\}";

  private static void assertOneLineError(CliTest.Run r, int exit, String... fragments) {
    assertThat(r.exit()).as(r.err()).isEqualTo(exit);
    assertThat(r.out()).isEmpty();
    assertThat(r.err().strip())
        .doesNotContain("\n")
        .doesNotContain("\tat ")
        .doesNotContain("Exception")
        .contains(fragments);
  }

  @Test
  void badOptionsAreOneLineAndExit2() {
    assertOneLineError(
        CliTest.run("demo", "db", "--degraded", "30x"),
        2,
        "bulkhead-demo demo db: Invalid value for option '--degraded'",
        "'30x'");
    assertOneLineError(
        CliTest.run("demo", "db", "--duration", "0s"),
        2,
        "bulkhead-demo demo db: degraded phase must be positive but was PT0S");
    assertOneLineError(
        CliTest.run("demo", "db", "--no-such-option"),
        2,
        "bulkhead-demo demo db: Unknown option: '--no-such-option'");
  }

  @Test
  void aDatabaseThatCannotBeUsedIsOneLineAndExit1() throws IOException {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    String url = "jdbc:postgresql://127.0.0.1:" + closedPort + "/test";
    assertOneLineError(
        CliTest.run("demo", "db", "--jdbc-url", url),
        1,
        "bulkhead-demo demo db: cannot use the PostgreSQL server at " + url,
        "refused");
    assertOneLineError(
        CliTest.run("demo", "db", "--jdbc-url", "jdbc:mysql://127.0.0.1/test"),
        1,
        "must be a PostgreSQL JDBC URL");
  }

  @Test
  void printsTheJsonAndAddsTheFiguresToTheReportOnce(@TempDir Path dir) throws Exception {
    Path report = dir.resolve("report.html");
    Files.writeString(
        report,
        "<!DOCTYPE html>\n<html><body>\n<h1>demo's own page</h1>\n</body>" + "</html>\n",
        StandardCharsets.UTF_8);
    String[] shortRun = {
      "demo",
      "db",
      "--healthy",
      "1s",
      "--duration",
      "2s",
      "--degraded",
      "1.5s",
      "--report",
      report.toString()
    };

    CliTest.Run json = CliTest.run(concat(shortRun, "--json"));
    assertThat(json.exit()).as(json.err()).isZero();
    assertThat(json.out().strip()).matches(JSON);
    String page = Files.readString(report, StandardCharsets.UTF_8);
    assertThat(page)
        .contains("<h1>demo's own page</h1>")
        .contains(DbReport.BEGIN)
        .contains("<svg")
        .containsSubsequence(DbReport.END, "</body>");
    assertNoConnectionLeft(json.err());

    CliTest.Run table = CliTest.run(shortRun);
    assertThat(table.exit()).as(table.err()).isZero();
    assertThat(table.out())
        .contains("shared pool of 10")
        .contains("split: checkout 6, reports 4")
        .contains("checkout p99")
        .contains("machine: ")
        .contains("added the figures to " + report);
    page = Files.readString(report, StandardCharsets.UTF_8);
    assertThat(page.split(Pattern.quote(DbReport.BEGIN), -1))
        .as("one section, replaced")
        .hasSize(2);
    assertThat(page).contains("<h1>demo's own page</h1>");
    assertNoConnectionLeft(table.err());
  }

  /**
   * {@code demo db --dashboard}: while each run lasts, {@code /bulkheads} lists its pools'
   * compartments with their connections and {@code /metrics} their meters; a finished run's
   * compartments disappear and the next run's appear; after both runs the server stays up, empty,
   * until stopped.
   */
  @Test
  void dashboard_servesEachRunsPools_withTheirConnections_thenStaysUpUntilStopped(@TempDir Path dir)
      throws Exception {
    CliTest.CommandThread demo =
        CliTest.CommandThread.start(
            "demo",
            "db",
            "--dashboard",
            "--port",
            "0",
            "--healthy",
            "2s",
            "--duration",
            "4s",
            "--degraded",
            "3s",
            "--report",
            dir.resolve("r.html").toString());
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> DASHBOARD.matcher(demo.err()).find() || demo.isDone());
      Matcher m = DASHBOARD.matcher(demo.err());
      assertThat(m.find()).as(demo.err()).isTrue();
      URI base = URI.create(m.group(1));

      // The shared run: one pool of 10 for both workloads.
      JsonNode shared =
          await()
              .atMost(Duration.ofSeconds(90))
              .pollInterval(Duration.ofMillis(100))
              .until(() -> pool(base, ".shared"), java.util.Objects::nonNull);
      String sharedName = shared.get("name").asText();
      assertThat(shared.get("limit").asInt()).isEqualTo(10);
      assertPoolFigures(shared.get("resource"), 10);
      assertThat(get(base, "/metrics"))
          .containsPattern(
              "bulkhead_pool_connections_open\\{budget=\"[^\"]+\",name=\""
                  + java.util.regex.Pattern.quote(sharedName)
                  + "\"} 10.0")
          .contains("bulkhead_limit{name=\"" + sharedName + "\"} 10.0");

      // The split run: checkout 6 and reports 4; the shared pool has gone.
      JsonNode checkout =
          await()
              .atMost(Duration.ofSeconds(90))
              .pollInterval(Duration.ofMillis(100))
              .until(() -> pool(base, ".checkout"), java.util.Objects::nonNull);
      JsonNode doc = bulkheads(base);
      JsonNode reports = null;
      for (JsonNode c : doc.get("compartments")) {
        assertThat(c.get("name").asText())
            .as("only the split run's compartments")
            .doesNotEndWith(".shared");
        if (c.get("name").asText().endsWith(".reports")) {
          reports = c;
        }
      }
      assertThat(reports).as("%s", doc).isNotNull();
      assertPoolFigures(checkout.get("resource"), 6);
      assertThat(checkout.get("limit").asInt()).isEqualTo(6);
      assertThat(reports.get("limit").asInt()).isEqualTo(4);
      String checkoutName = checkout.get("name").asText();
      assertThat(get(base, "/metrics"))
          .containsPattern(
              "bulkhead_pool_connections_open\\{budget=\"[^\"]+\",name=\""
                  + java.util.regex.Pattern.quote(checkoutName)
                  + "\"} 6.0")
          .doesNotContain("name=\"" + sharedName + "\"");

      await().atMost(Duration.ofSeconds(90)).until(() -> demo.out().contains("stays up at"));
      assertThat(demo.out()).contains("checkout p99", base + "/dashboard", "Ctrl-C");
      assertThat(bulkheads(base).get("compartments"))
          .as("both runs over: no compartment")
          .isEmpty();
      assertThat(get(base, "/metrics"))
          .doesNotContain("bulkhead_pool_")
          .doesNotContain("name=\"demo-db-");
      assertThat(get(base, "/dashboard")).contains("<title>Bulkhead dashboard</title>");
    } finally {
      assertThat(demo.stop()).as(demo.err()).isZero();
    }
    assertNoConnectionLeft(demo.err());
  }

  @Test
  void dashboard_badPort_isOneLine() throws IOException {
    assertOneLineError(
        CliTest.run("demo", "db", "--dashboard", "--port", "70000"),
        2,
        "bulkhead-demo demo db: --port must be a TCP port",
        "70000");
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      // Checked before the database is touched: the line says which port and which option.
      assertOneLineError(
          CliTest.run("demo", "db", "--dashboard", "--port", String.valueOf(port)),
          1,
          "bulkhead-demo demo db: cannot start the dashboard: port "
              + port
              + " on 127.0.0.1 is already in use (--port)");
    }
  }

  private static final Pattern DASHBOARD =
      Pattern.compile("dashboard: (http://127\\.0\\.0\\.1:\\d+)/dashboard");
  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private static String get(URI base, String path) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(path).isEqualTo(200);
    return r.body();
  }

  private static JsonNode bulkheads(URI base) throws Exception {
    return new ObjectMapper().readTree(get(base, "/bulkheads"));
  }

  /** The compartment whose name ends with {@code suffix}, once its pool figures are there. */
  private static JsonNode pool(URI base, String suffix) throws Exception {
    for (JsonNode c : bulkheads(base).get("compartments")) {
      if (c.get("name").asText().endsWith(suffix) && !c.get("resource").isNull()) {
        return c;
      }
    }
    return null;
  }

  /**
   * A fixed pool of {@code size}: all its connections open, each figure in range. (Active and idle
   * are read one after the other while the load runs, so their sum is not checked.)
   */
  private static void assertPoolFigures(JsonNode resource, int size) {
    assertThat(resource.get("kind").asText()).isEqualTo("pool");
    JsonNode f = resource.get("figures");
    assertThat(f.get("total").asInt()).as("%s", resource).isEqualTo(size);
    assertThat(f.get("active").asInt()).as("%s", resource).isBetween(0, size);
    assertThat(f.get("idle").asInt()).as("%s", resource).isBetween(0, size);
    assertThat(f.get("awaiting").asInt()).as("%s", resource).isGreaterThanOrEqualTo(0);
    assertThat(resource.get("summary").asText()).startsWith("HikariCP pool of " + size + ": ");
  }

  @Test
  void writesAPageOfItsOwnWhenThereIsNone() {
    String page = DbReport.mergeInto(null, DbReport.BEGIN + "x" + DbReport.END);
    assertThat(page)
        .startsWith("<!DOCTYPE html>")
        .contains("<style>")
        .containsSubsequence(DbReport.BEGIN, "x", DbReport.END, "</body>");
    String replaced = DbReport.mergeInto(page, DbReport.BEGIN + "y" + DbReport.END);
    assertThat(replaced)
        .contains(DbReport.BEGIN + "y" + DbReport.END)
        .doesNotContain("x" + DbReport.END);
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
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE ?")) {
      ps.setString(1, prefix + "%");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
