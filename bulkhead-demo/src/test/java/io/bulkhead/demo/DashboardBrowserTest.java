package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bulkhead.Bulkhead;
import io.bulkhead.Permit;
import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.PoolConfig;
import io.bulkhead.jdbc.WorkloadPool;
import io.bulkhead.localdb.LocalPostgres;
import io.bulkhead.scenarios.AppSettings;
import io.bulkhead.scenarios.DemoApp;
import io.bulkhead.scenarios.FakeUpstream;
import io.bulkhead.scenarios.LoadGenerator;
import io.bulkhead.scenarios.LoadResult;
import io.bulkhead.scenarios.Mode;
import io.bulkhead.scenarios.PoolResources;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A person's view of the dashboard, in a real browser: headless Chromium (Debian's {@code
 * chromium}) driven by playwright-core from npm opens {@code /dashboard} while the bulkhead-mode
 * experiment runs (80 chats at once, 50 logins a second later, a slow upstream) and reads the cards
 * as they change.
 *
 * <p>The browser script, {@code src/test/js/watch-dashboard.mjs}, records every reading and saves
 * three screenshots under {@code target/dashboard/}: the moment of most load, the first moment a
 * diagnosis badge left HEALTHY, and the end. This test judges the readings.
 *
 * <p>The test installs nothing. It expects what {@code .ci/run} and the README's set-up prepare:
 * {@code chromium} on the {@code PATH}, and playwright-core installed next to the scripts by {@code
 * npm ci --prefix bulkhead-demo/src/test/js}. When either is missing it fails with one line saying
 * which and how to set it up; it is never skipped.
 */
class DashboardBrowserTest {

  /** Long enough for the llm compartment to sit at its limit most of a 10 s window: SATURATED. */
  private static final Duration UPSTREAM_DELAY = Duration.ofSeconds(12);

  private static final Path OUT = Path.of("target", "dashboard").toAbsolutePath();

  /**
   * The browser scripts, with the node_modules that {@code npm ci --prefix} installs beside them.
   */
  private static final Path JS = Path.of("src", "test", "js").toAbsolutePath();

  private static final Pattern FRACTION = Pattern.compile("(\\d+) / (\\d+|∞)");

  /** The dashboard's Little's-law line with a recommendation: need, limit, current limit. */
  private static final Pattern LITTLE =
      Pattern.compile("need (< 0\\.01|[\\d.]+) → limit (\\d+) \\(now (\\d+)\\)");

  @Test
  void dashboard_showsBothCompartments_andTheirNumbersChange_whileTheBulkheadExperimentRuns()
      throws Exception {
    Browser.requireSetUp();
    Files.createDirectories(OUT);
    for (String png :
        List.of("dashboard-peak.png", "dashboard-saturated.png", "dashboard-end.png")) {
      Files.deleteIfExists(OUT.resolve(png));
    }

    try (FakeUpstream upstream = FakeUpstream.start(0, UPSTREAM_DELAY);
        DemoApp app = new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri()))) {
      app.start(0);
      Process browser =
          Browser.node(
                  "watch-dashboard.mjs", app.uri() + "/dashboard", OUT.toString(), "server,llm")
              .start();
      List<String> browserLog = new ArrayList<>();
      try {
        BufferedReader lines =
            new BufferedReader(
                new InputStreamReader(browser.getInputStream(), StandardCharsets.UTF_8));
        String ready =
            CompletableFuture.supplyAsync(() -> readUntil(lines, "READY", browserLog))
                .get(90, TimeUnit.SECONDS);
        assertThat(ready).as("browser log: %s", browserLog).isEqualTo("READY");

        LoadResult load =
            new LoadGenerator(
                    app.uri(),
                    LoadGenerator.CHATS,
                    LoadGenerator.LOGINS,
                    LoadGenerator.LOGINS_AFTER,
                    UPSTREAM_DELAY.plusSeconds(30))
                .run();
        assertThat(load.samples()).hasSize(LoadGenerator.CHATS + LoadGenerator.LOGINS);

        // Tell the browser script the load is over; it keeps reading until every card is idle.
        Writer stdin = new OutputStreamWriter(browser.getOutputStream(), StandardCharsets.UTF_8);
        stdin.write("load finished\n");
        stdin.flush();
        CompletableFuture<String> done =
            CompletableFuture.supplyAsync(() -> readUntil(lines, "DONE", browserLog));
        done.get(90, TimeUnit.SECONDS);
        assertThat(browser.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(browser.exitValue()).as("browser log: %s", browserLog).isZero();
      } finally {
        browser.destroyForcibly();
      }
    }

    JsonNode observed = new ObjectMapper().readTree(OUT.resolve("observations.json").toFile());
    JsonNode readings = observed.get("readings");
    assertThat(readings.size()).as("readings of the page").isGreaterThan(20);

    Set<String> llmInFlight = new LinkedHashSet<>();
    Set<String> serverInFlight = new LinkedHashSet<>();
    Set<String> llmStates = new LinkedHashSet<>();
    Set<String> llmAdvice = new LinkedHashSet<>();
    Set<String> serverAdvice = new LinkedHashSet<>();
    int llmMaxWaiting = 0;
    double llmMaxRejectRate = 0;
    for (JsonNode r : readings) {
      JsonNode llm = card(r, "llm");
      JsonNode server = card(r, "server");
      assertThat(llm).as("llm card at %s ms", r.get("atMs")).isNotNull();
      assertThat(server).as("server card at %s ms", r.get("atMs")).isNotNull();
      llmInFlight.add(llm.get("inFlight").asText());
      serverInFlight.add(server.get("inFlight").asText());
      llmStates.add(llm.get("state").asText());
      llmAdvice.add(llm.get("advice").asText());
      serverAdvice.add(server.get("advice").asText());
      llmMaxWaiting = Math.max(llmMaxWaiting, numerator(llm.get("waiting").asText()));
      llmMaxRejectRate =
          Math.max(
              llmMaxRejectRate,
              Double.parseDouble(llm.get("rejectionRate").asText().replace("/s", "")));
    }
    assertThat(llmInFlight).as("llm in flight over time").contains("0 / 10", "10 / 10");
    assertThat(serverInFlight)
        .as("server in flight over time: it changes")
        .hasSizeGreaterThan(1)
        .allMatch(s -> s.endsWith(" / 50"));
    assertThat(llmMaxWaiting).as("llm waiting at the height").isEqualTo(20);
    assertThat(llmMaxRejectRate).as("llm rejections per second at the height").isGreaterThan(10);
    assertThat(llmStates).as("llm diagnosis badges seen").contains("HEALTHY", "SATURATED");
    // Little's law on each card: the server's calls (logins, refused chats) finish within the stats
    // window, so it has a recommendation early; the llm's take the upstream's 12 s, longer than the
    // window, so until they finish its latency is unknown, and the line says so.
    assertThat(serverAdvice)
        .as("server's Little's-law line over time")
        .anyMatch(a -> LITTLE.matcher(a).matches() && a.endsWith("(now 50)"));
    assertThat(llmAdvice).as("llm's Little's-law line over time").contains("latency not known yet");

    JsonNode last = readings.get(readings.size() - 1);
    JsonNode llmEnd = card(last, "llm");
    assertThat(llmEnd.get("inFlight").asText()).isEqualTo("0 / 10");
    assertThat(llmEnd.get("totals").asText()).as("every chat counted").isEqualTo("10 adm · 70 rej");
    assertThat(llmEnd.get("p99").asText())
        .as("admitted calls took the upstream's 12 s")
        .matches("1[23]\\.\\d s");
    assertThat(card(last, "server").get("totals").asText())
        .as("the server cap never rejects")
        .endsWith(" · 0 rej");
    // The reading that saw the llm idle saw its 10 calls finish: 80 chats over about 12 s, each
    // admitted one taking 12 s, need about 80; with the default headroom of 3, far above 10.
    Matcher advice = LITTLE.matcher(llmEnd.get("advice").asText());
    assertThat(advice.matches()).as("llm advice at the end: %s", llmEnd.get("advice")).isTrue();
    assertThat(Double.parseDouble(advice.group(1))).as("need").isBetween(40.0, 120.0);
    assertThat(advice.group(3)).isEqualTo("10");

    for (String png :
        List.of("dashboard-peak.png", "dashboard-saturated.png", "dashboard-end.png")) {
      assertThat(Files.size(OUT.resolve(png))).as(png).isGreaterThan(10_000);
    }
  }

  /**
   * The same page with one compartment (shared mode has only the server-wide cap) and with thirty
   * (the bulkhead-mode app, 20 compartments registered for the test, some with calls in flight, and
   * the 8 pools of a real database on PostgreSQL, two with a connection held): every card fits the
   * window, no name, number, badge, pool figure or Little's-law line is clipped, and the compact
   * layout takes over for many. Calls paced through some compartments give them a Little's-law
   * recommendation to show. The screenshots are target/dashboard/dashboard-1.png and
   * dashboard-30.png.
   */
  @Test
  void dashboard_isReadable_withOneCompartment_andWithThirty() throws Exception {
    Browser.requireSetUp();
    Files.createDirectories(OUT);
    URI nowhere = URI.create("http://127.0.0.1:1"); // nothing calls the upstream here
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    ScheduledExecutorService traffic = Executors.newScheduledThreadPool(2);
    try {
      try (DemoApp one = new DemoApp(AppSettings.defaults(Mode.SHARED, nowhere))) {
        one.start(0);
        // 50 logins a second (pacing, not waiting for anything): the server has traffic to size.
        traffic.scheduleAtFixedRate(
            () ->
                http.sendAsync(
                    HttpRequest.newBuilder(one.uri().resolve("/login")).build(),
                    HttpResponse.BodyHandlers.discarding()),
            0,
            20,
            TimeUnit.MILLISECONDS);
        JsonNode layout = layout(one.uri(), "dashboard-1.png", 1280, 720, 1, 1, 0);
        assertThat(layout.get("names").get(0).asText()).isEqualTo("server");
        assertThat(layout.get("inFlight").get(0).asText()).matches("\\d+ / 50");
        assertThat(layout.get("dense").asBoolean()).isFalse();
        assertThat(layout.get("narrowestCard").asDouble()).isGreaterThanOrEqualTo(360);
        assertThat(layout.get("outsideWindow")).isEmpty();
        assertThat(layout.get("clippedTexts")).isEmpty();
        assertThat(layout.get("advice").get(0).asText())
            .as("the Little's-law line")
            .matches(LITTLE.pattern())
            .endsWith("(now 50)");
        assertThat(layout.get("adviceVisible").get(0).asBoolean()).isTrue();
        assertThat(layout.get("resources").get(0).isNull()).as("no pool behind it").isTrue();
      }
      traffic.shutdownNow();
      traffic = Executors.newScheduledThreadPool(2);

      try (LocalPostgres db = LocalPostgres.findOrStart();
          DemoApp many = new DemoApp(AppSettings.defaults(Mode.BULKHEAD, nowhere))) {
        List<Permit> held = new ArrayList<>();
        List<Connection> heldConnections = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
          Bulkhead b =
              many.registry()
                  .register(
                      Bulkhead.builder(String.format(Locale.ROOT, "dependency-%02d", i))
                          .limit(4 + i)
                          .maxQueue(i % 3 == 0 ? 0 : 8)
                          .maxWait(Duration.ofSeconds(1))
                          .build());
          for (int k = 0; k < i % 5; k++) {
            held.add(b.tryAcquire().orElseThrow());
          }
        }
        String database =
            "bhl-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
        DatabasePools.Builder pools =
            DatabasePools.builder(database)
                .jdbcUrl(db.jdbcUrl())
                .capacity(12)
                .registry(many.registry());
        db.username().ifPresent(pools::username);
        for (int i = 0; i < 8; i++) {
          pools.pool(PoolConfig.builder("pool-" + i).limit(1 + i % 2).build());
        }
        PoolResources resources = new PoolResources();
        many.observability().add(resources);
        try (DatabasePools opened = pools.open()) {
          resources.track(opened);
          heldConnections.add(opened.pool("pool-0").getConnection());
          heldConnections.add(opened.pool("pool-1").getConnection());
          Bulkhead paced = many.registry().bulkhead("dependency-01").orElseThrow();
          WorkloadPool queried = opened.pool("pool-3");
          traffic.scheduleAtFixedRate(
              () -> {
                try {
                  paced.call(
                      () -> {
                        LockSupport.parkNanos(
                            TimeUnit.MILLISECONDS.toNanos(2)); // the call's "work"
                        return null;
                      });
                } catch (Exception e) {
                  // a rejection or an interrupt at shutdown: the layout is what is tested here
                }
              },
              0,
              20,
              TimeUnit.MILLISECONDS);
          traffic.scheduleAtFixedRate(
              () -> {
                try (Connection c = queried.getConnection();
                    PreparedStatement ps = c.prepareStatement("SELECT 1")) {
                  ps.execute();
                } catch (Exception e) {
                  // as above
                }
              },
              0,
              50,
              TimeUnit.MILLISECONDS);

          many.start(0);
          JsonNode layout = layout(many.uri(), "dashboard-30.png", 1440, 1000, 30, 2, 8);
          assertThat(layout.get("cards").asInt()).isEqualTo(30);
          assertThat(layout.get("dense").asBoolean()).isTrue();
          assertThat(layout.get("outsideWindow"))
              .as("every card in a 1440 x 1000 window")
              .isEmpty();
          assertThat(layout.get("clippedTexts")).isEmpty();
          assertThat(layout.get("narrowestCard").asDouble()).isGreaterThanOrEqualTo(250);
          assertThat(layout.get("names").get(9).asText()).isEqualTo("dependency-07");
          assertThat(layout.get("inFlight").get(9).asText()).isEqualTo("2 / 11");
          assertThat(layout.get("adviceVisible"))
              .as("a Little's-law line on every card")
              .allMatch(JsonNode::asBoolean);
          assertThat(layout.get("advice").get(3).asText())
              .as("dependency-01, paced")
              .matches(LITTLE.pattern())
              .endsWith("(now 5)");
          int pool0 = 22;
          assertThat(layout.get("names").get(pool0).asText()).isEqualTo(database + ".pool-0");
          JsonNode figures = layout.get("resources").get(pool0).get("figures");
          assertThat(layout.get("resources").get(pool0).get("kind").asText()).isEqualTo("pool");
          assertThat(figures.get("active").asText()).isEqualTo("1");
          assertThat(figures.get("idle").asText()).isEqualTo("0");
          assertThat(figures.get("total").asText()).isEqualTo("1");
          assertThat(figures.get("awaiting").asText()).isEqualTo("0");
          assertThat(layout.get("resources").get(pool0 + 2).get("figures").get("total").asText())
              .as("pool-2, size 1, idle")
              .isEqualTo("1");
          for (int i = 0; i < 22; i++) {
            assertThat(layout.get("resources").get(i).isNull())
                .as("no pool behind card %d", i)
                .isTrue();
          }
        } finally {
          traffic.shutdownNow();
          assertThat(traffic.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
          for (Connection c : heldConnections) {
            c.close();
          }
          held.forEach(Permit::close);
        }
      }
    } finally {
      traffic.shutdownNow();
    }
  }

  /**
   * {@code demo db --dashboard}, short, watched in headless Chromium: the shared run's pool card
   * appears with its connections and they change as reports take them; then the split run's
   * checkout and reports cards replace it, reports fill their 4 connections, and checkout shows its
   * Little's-law line; after both runs the page lists no compartment. Screenshots:
   * target/dashboard/dashboard-db-shared.png, dashboard-db-split.png and dashboard-db-end.png.
   */
  @Test
  @Timeout(value = 6, unit = TimeUnit.MINUTES)
  void demoDbDashboard_showsEachRunsPoolCards_withTheirConnectionsChanging(@TempDir Path dir)
      throws Exception {
    Browser.requireSetUp();
    Files.createDirectories(OUT);
    List<String> pngs =
        List.of("dashboard-db-shared.png", "dashboard-db-split.png", "dashboard-db-end.png");
    for (String png : pngs) {
      Files.deleteIfExists(OUT.resolve(png));
    }
    Files.deleteIfExists(OUT.resolve("observations-db.json"));

    CliTest.CommandThread demo =
        CliTest.CommandThread.start(
            "demo",
            "db",
            "--dashboard",
            "--wait-for-page",
            "150s",
            "--port",
            "0",
            "--healthy",
            "3s",
            "--duration",
            "8s",
            "--degraded",
            "6s",
            "--report",
            dir.resolve("report.html").toString());
    List<String> browserLog = new ArrayList<>();
    try {
      Pattern at = Pattern.compile("dashboard: (http://127\\.0\\.0\\.1:\\d+/dashboard)");
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> at.matcher(demo.err()).find() || demo.isDone());
      Matcher m = at.matcher(demo.err());
      assertThat(m.find()).as(demo.err()).isTrue();
      Process browser = Browser.node("watch-db-dashboard.mjs", m.group(1), OUT.toString()).start();
      try {
        BufferedReader lines =
            new BufferedReader(
                new InputStreamReader(browser.getInputStream(), StandardCharsets.UTF_8));
        String ready =
            CompletableFuture.supplyAsync(() -> readUntil(lines, "READY", browserLog))
                .get(150, TimeUnit.SECONDS);
        assertThat(ready)
            .as("browser log: %s; demo: %s", browserLog, demo.err())
            .isEqualTo("READY");
        await().atMost(Duration.ofSeconds(180)).until(() -> demo.out().contains("stays up at"));
        Writer stdin = new OutputStreamWriter(browser.getOutputStream(), StandardCharsets.UTF_8);
        stdin.write("runs over\n");
        stdin.flush();
        CompletableFuture.supplyAsync(() -> readUntil(lines, "DONE", browserLog))
            .get(90, TimeUnit.SECONDS);
        assertThat(browser.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(browser.exitValue()).as("browser log: %s", browserLog).isZero();
      } finally {
        browser.destroyForcibly();
      }
    } finally {
      assertThat(demo.stop()).as(demo.err()).isZero();
    }

    JsonNode readings =
        new ObjectMapper().readTree(OUT.resolve("observations-db.json").toFile()).get("readings");
    Set<String> sharedActive = new LinkedHashSet<>();
    Set<String> reportsActive = new LinkedHashSet<>();
    Set<String> checkoutActive = new LinkedHashSet<>();
    Set<String> checkoutAdvice = new LinkedHashSet<>();
    int sharedReadings = 0;
    int splitReadings = 0;
    for (JsonNode r : readings) {
      for (JsonNode c : r.get("cards")) {
        JsonNode f = c.get("resource");
        if (f.isNull()) {
          continue; // registered a moment before its pool was announced
        }
        List<String> keys = new ArrayList<>();
        f.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).containsExactly("active", "idle", "total", "awaiting");
        assertThat(f.get("awaiting").asText()).matches("\\d+");
        String name = c.get("name").asText();
        if (name.endsWith(".shared")) {
          sharedReadings++;
          assertThat(f.get("total").asText()).as("shared pool, fixed at 10").isEqualTo("10");
          assertThat(c.get("inFlight").asText()).endsWith(" / 10");
          sharedActive.add(f.get("active").asText());
        } else if (name.endsWith(".checkout")) {
          splitReadings++;
          assertThat(f.get("total").asText()).isEqualTo("6");
          checkoutActive.add(f.get("active").asText());
          checkoutAdvice.add(c.get("advice").asText());
        } else if (name.endsWith(".reports")) {
          assertThat(f.get("total").asText()).isEqualTo("4");
          reportsActive.add(f.get("active").asText());
        } else {
          fail("a card that is not one of the experiment's pools: " + c);
        }
      }
    }
    assertThat(sharedReadings).as("readings of the shared pool's card").isGreaterThan(10);
    assertThat(splitReadings).as("readings of the split run's cards").isGreaterThan(10);
    assertThat(sharedActive)
        .as(
            "shared pool's active connections over time: they change, and the"
                + " degraded reports take all 10")
        .hasSizeGreaterThan(1)
        .contains("10");
    assertThat(reportsActive).as("reports' pool fills its 4").hasSizeGreaterThan(1).contains("4");
    assertThat(checkoutActive)
        .as("checkout's active connections over time")
        .isNotEmpty()
        .allMatch(a -> Integer.parseInt(a) <= 6);
    assertThat(checkoutAdvice)
        .as("checkout's Little's-law line over time")
        .anyMatch(a -> LITTLE.matcher(a).matches() && a.endsWith("(now 6)"));
    JsonNode last = readings.get(readings.size() - 1);
    assertThat(last.get("cards")).as("both runs over: no compartment left").isEmpty();
    for (String png : pngs) {
      assertThat(Files.size(OUT.resolve(png))).as(png).isGreaterThan(10_000);
    }
  }

  private static JsonNode layout(
      URI app, String png, int width, int height, int cards, int advised, int resources)
      throws Exception {
    Process p =
        Browser.node(
                "layout-dashboard.mjs",
                app + "/dashboard",
                OUT.resolve(png).toString(),
                String.valueOf(width),
                String.valueOf(height),
                String.valueOf(cards),
                String.valueOf(advised),
                String.valueOf(resources))
            .start();
    CompletableFuture<String> output =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
              } catch (IOException e) {
                return e.toString();
              }
            });
    if (!p.waitFor(90, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail("layout-dashboard.mjs took more than 90 s: " + output.getNow(""));
    }
    String text = output.get(10, TimeUnit.SECONDS);
    assertThat(p.exitValue()).as(text).isZero();
    String[] lines = text.strip().split("\\R");
    return new ObjectMapper().readTree(lines[lines.length - 1]);
  }

  private static JsonNode card(JsonNode reading, String name) {
    for (JsonNode c : reading.get("cards")) {
      if (c.get("name").asText().equals(name)) {
        return c;
      }
    }
    return null;
  }

  private static int numerator(String fraction) {
    Matcher m = FRACTION.matcher(fraction);
    if (!m.matches()) {
      fail("not a fraction like '3 / 10': '" + fraction + "'");
    }
    return Integer.parseInt(m.group(1));
  }

  private static String readUntil(BufferedReader lines, String prefix, List<String> log) {
    try {
      for (String line; (line = lines.readLine()) != null; ) {
        synchronized (log) {
          log.add(line);
        }
        if (line.startsWith(prefix)) {
          return prefix;
        }
      }
      return "(the browser script ended)";
    } catch (IOException e) {
      return "(cannot read the browser script: " + e + ")";
    }
  }

  /** The browser the set-up prepared, or one line saying what is missing and how to set it up. */
  static final class Browser {
    private static final String SET_UP =
        "set it up as the README says (and .ci/run does): install chromium, and Node.js with npm,"
            + " only where missing, then npm ci --prefix bulkhead-demo/src/test/js";

    private Browser() {}

    /** Fails the test, in one line, unless chromium, node and playwright-core are all there. */
    static void requireSetUp() {
      String missing =
          onPath("chromium") == null
              ? "chromium is not on the PATH"
              : onPath("node") == null
                  ? "node is not on the PATH"
                  : !Files.isDirectory(JS.resolve("node_modules").resolve("playwright-core"))
                      ? "playwright-core is not installed under " + JS.resolve("node_modules")
                      : null;
      if (missing != null) {
        fail("the dashboard browser test needs a browser: " + missing + "; " + SET_UP);
      }
    }

    /**
     * A node process running {@code script} from the scripts' directory, told where chromium is.
     */
    static ProcessBuilder node(String script, String... args) {
      List<String> command = new ArrayList<>(List.of("node", script));
      command.addAll(List.of(args));
      ProcessBuilder pb =
          new ProcessBuilder(command).directory(JS.toFile()).redirectErrorStream(true);
      pb.environment().put("CHROMIUM", onPath("chromium").toString());
      return pb;
    }

    private static Path onPath(String program) {
      String path = System.getenv("PATH");
      if (path == null) {
        return null;
      }
      for (String dir : path.split(java.io.File.pathSeparator)) {
        if (dir.isEmpty()) {
          continue;
        }
        Path candidate = Path.of(dir, program);
        if (Files.isExecutable(candidate) && !Files.isDirectory(candidate)) {
          return candidate;
        }
      }
      return null;
    }
  }
}
