package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bulkhead.Bulkhead;
import io.bulkhead.Permit;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A person's view of the dashboard, in a real browser: headless Chromium (Debian's {@code chromium})
 * driven by playwright-core from npm opens {@code /dashboard} while the bulkhead-mode experiment runs
 * (80 chats at once, 50 logins a second later, a slow upstream) and reads the cards as they change.
 *
 * <p>The browser script, {@code src/test/js/watch-dashboard.mjs}, records every reading and saves
 * three screenshots under {@code target/dashboard/}: the moment of most load, the first moment a
 * diagnosis badge left HEALTHY, and the end. This test judges the readings.
 *
 * <p>Chromium and the npm package are set up here when missing ({@code apt-get} as root, {@code npm
 * ci}); when that is impossible the test fails with the command to run, it is never skipped.
 */
class DashboardBrowserTest {

  /** Long enough for the llm compartment to sit at its limit most of a 10 s window: SATURATED. */
  private static final Duration UPSTREAM_DELAY = Duration.ofSeconds(12);
  private static final Path OUT = Path.of("target", "dashboard").toAbsolutePath();
  private static final Path JS_WORK = Path.of("target", "dashboard-js").toAbsolutePath();
  private static final Path JS_SOURCES = Path.of("src", "test", "js").toAbsolutePath();
  private static final Pattern FRACTION = Pattern.compile("(\\d+) / (\\d+|∞)");

  @Test
  void dashboard_showsBothCompartments_andTheirNumbersChange_whileTheBulkheadExperimentRuns()
      throws Exception {
    BrowserSetup.chromium();
    BrowserSetup.npmCi(JS_SOURCES, JS_WORK);
    Files.createDirectories(OUT);
    for (String png : List.of("dashboard-peak.png", "dashboard-saturated.png", "dashboard-end.png")) {
      Files.deleteIfExists(OUT.resolve(png));
    }

    try (FakeUpstream upstream = FakeUpstream.start(0, UPSTREAM_DELAY);
        DemoApp app = new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri()))) {
      app.start(0);
      Process browser = new ProcessBuilder("node", "watch-dashboard.mjs",
          app.uri() + "/dashboard", OUT.toString(), "server,llm")
          .directory(JS_WORK.toFile())
          .redirectErrorStream(true)
          .start();
      List<String> browserLog = new ArrayList<>();
      try {
        BufferedReader lines = new BufferedReader(
            new InputStreamReader(browser.getInputStream(), StandardCharsets.UTF_8));
        String ready = CompletableFuture.supplyAsync(() -> readUntil(lines, "READY", browserLog))
            .get(90, TimeUnit.SECONDS);
        assertThat(ready).as("browser log: %s", browserLog).isEqualTo("READY");

        LoadResult load = new LoadGenerator(app.uri(), LoadGenerator.CHATS, LoadGenerator.LOGINS,
            LoadGenerator.LOGINS_AFTER, UPSTREAM_DELAY.plusSeconds(30)).run();
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
      llmMaxWaiting = Math.max(llmMaxWaiting, numerator(llm.get("waiting").asText()));
      llmMaxRejectRate = Math.max(llmMaxRejectRate,
          Double.parseDouble(llm.get("rejectionRate").asText().replace("/s", "")));
    }
    assertThat(llmInFlight).as("llm in flight over time").contains("0 / 10", "10 / 10");
    assertThat(serverInFlight).as("server in flight over time: it changes").hasSizeGreaterThan(1)
        .allMatch(s -> s.endsWith(" / 50"));
    assertThat(llmMaxWaiting).as("llm waiting at the height").isEqualTo(20);
    assertThat(llmMaxRejectRate).as("llm rejections per second at the height").isGreaterThan(10);
    assertThat(llmStates).as("llm diagnosis badges seen").contains("HEALTHY", "SATURATED");

    JsonNode last = readings.get(readings.size() - 1);
    JsonNode llmEnd = card(last, "llm");
    assertThat(llmEnd.get("inFlight").asText()).isEqualTo("0 / 10");
    assertThat(llmEnd.get("totals").asText()).as("every chat counted")
        .isEqualTo("10 adm · 70 rej");
    assertThat(llmEnd.get("p99").asText()).as("admitted calls took the upstream's 12 s")
        .matches("1[23]\\.\\d s");
    assertThat(card(last, "server").get("totals").asText()).as("the server cap never rejects")
        .endsWith(" · 0 rej");

    for (String png : List.of("dashboard-peak.png", "dashboard-saturated.png", "dashboard-end.png")) {
      assertThat(Files.size(OUT.resolve(png))).as(png).isGreaterThan(10_000);
    }
  }

  /**
   * The same page with one compartment (shared mode has only the server-wide cap) and with thirty
   * (the bulkhead-mode app plus 28 registered for the test, some with calls in flight): every card
   * fits the window, no name, number or badge is clipped, and the compact layout takes over for many.
   * The screenshots are target/dashboard/dashboard-1.png and dashboard-30.png.
   */
  @Test
  void dashboard_isReadable_withOneCompartment_andWithThirty() throws Exception {
    BrowserSetup.chromium();
    BrowserSetup.npmCi(JS_SOURCES, JS_WORK);
    Files.createDirectories(OUT);
    URI nowhere = URI.create("http://127.0.0.1:1"); // nothing calls the upstream here

    try (DemoApp one = new DemoApp(AppSettings.defaults(Mode.SHARED, nowhere))) {
      one.start(0);
      JsonNode layout = layout(one.uri(), "dashboard-1.png", 1280, 720, 1);
      assertThat(layout.get("names").get(0).asText()).isEqualTo("server");
      assertThat(layout.get("inFlight").get(0).asText()).isEqualTo("0 / 50");
      assertThat(layout.get("dense").asBoolean()).isFalse();
      assertThat(layout.get("narrowestCard").asDouble()).isGreaterThanOrEqualTo(360);
      assertThat(layout.get("outsideWindow")).isEmpty();
      assertThat(layout.get("clippedTexts")).isEmpty();
    }

    try (DemoApp many = new DemoApp(AppSettings.defaults(Mode.BULKHEAD, nowhere))) {
      List<Permit> held = new ArrayList<>();
      for (int i = 0; i < 28; i++) {
        Bulkhead b = many.registry().register(
            Bulkhead.builder(String.format(Locale.ROOT, "dependency-%02d", i)).limit(4 + i)
                .maxQueue(i % 3 == 0 ? 0 : 8).maxWait(Duration.ofSeconds(1)).build());
        for (int k = 0; k < i % 5; k++) {
          held.add(b.tryAcquire().orElseThrow());
        }
      }
      try {
        many.start(0);
        JsonNode layout = layout(many.uri(), "dashboard-30.png", 1440, 1000, 30);
        assertThat(layout.get("cards").asInt()).isEqualTo(30);
        assertThat(layout.get("dense").asBoolean()).isTrue();
        assertThat(layout.get("outsideWindow")).as("every card in a 1440 x 1000 window").isEmpty();
        assertThat(layout.get("clippedTexts")).isEmpty();
        assertThat(layout.get("narrowestCard").asDouble()).isGreaterThanOrEqualTo(250);
        assertThat(layout.get("names").get(9).asText()).isEqualTo("dependency-07");
        assertThat(layout.get("inFlight").get(9).asText()).isEqualTo("2 / 11");
      } finally {
        held.forEach(Permit::close);
      }
    }
  }

  private static JsonNode layout(URI app, String png, int width, int height, int cards)
      throws Exception {
    Process p = new ProcessBuilder("node", "layout-dashboard.mjs", app + "/dashboard",
        OUT.resolve(png).toString(), String.valueOf(width), String.valueOf(height),
        String.valueOf(cards))
        .directory(JS_WORK.toFile())
        .redirectErrorStream(true)
        .start();
    CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
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

  /** Installs what the browser test needs, or fails saying how to. */
  static final class BrowserSetup {
    static final Path CHROMIUM = Path.of("/usr/bin/chromium");

    private BrowserSetup() {}

    static void chromium() throws IOException, InterruptedException {
      if (Files.isExecutable(CHROMIUM)) {
        return;
      }
      if (isRoot()) {
        run(Duration.ofMinutes(10), "apt-get", "update", "-qq");
        run(Duration.ofMinutes(10), "apt-get", "install", "-y", "-qq", "chromium");
      }
      if (!Files.isExecutable(CHROMIUM)) {
        fail("the dashboard browser test needs Debian's chromium at " + CHROMIUM
            + " and could not install it; run as root: apt-get update && apt-get install -y chromium");
      }
    }

    /** Copies package.json, its lock and the script to {@code work} and runs npm ci there once. */
    static void npmCi(Path sources, Path work) throws IOException, InterruptedException {
      Files.createDirectories(work);
      for (String f : List.of("package.json", "package-lock.json", "watch-dashboard.mjs",
          "layout-dashboard.mjs")) {
        Files.copy(sources.resolve(f), work.resolve(f), StandardCopyOption.REPLACE_EXISTING);
      }
      if (Files.isDirectory(work.resolve("node_modules").resolve("playwright-core"))) {
        return;
      }
      try {
        run(work, Duration.ofMinutes(5), "npm", "ci", "--no-audit", "--no-fund");
      } catch (IOException e) {
        fail("the dashboard browser test needs node and npm (apt-get install -y nodejs npm): " + e);
      }
    }

    private static boolean isRoot() {
      return "root".equals(System.getProperty("user.name"));
    }

    private static void run(Duration limit, String... command)
        throws IOException, InterruptedException {
      run(null, limit, command);
    }

    private static void run(Path dir, Duration limit, String... command)
        throws IOException, InterruptedException {
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
      if (dir != null) {
        pb.directory(dir.toFile());
      }
      pb.environment().put("DEBIAN_FRONTEND", "noninteractive");
      Process p = pb.start();
      CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> drain(p.getInputStream()));
      if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        fail(String.join(" ", command) + " took longer than " + limit);
      }
      if (p.exitValue() != 0) {
        fail(String.join(" ", command) + " failed with exit " + p.exitValue() + ": "
            + output.join());
      }
    }

    private static String drain(InputStream in) {
      try {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        return e.toString();
      }
    }
  }
}
