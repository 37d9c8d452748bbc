package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.PoolConfig;
import io.bulkhead.jdbc.micrometer.DatabasePoolMetrics;
import io.bulkhead.localdb.LocalPostgres;
import io.bulkhead.redis.FleetBulkhead;
import io.bulkhead.redis.RedisCompartments;
import io.bulkhead.redis.micrometer.FleetMetrics;
import io.bulkhead.scenarios.AppSettings;
import io.bulkhead.scenarios.DemoApp;
import io.bulkhead.scenarios.FakeUpstream;
import io.bulkhead.scenarios.LoadGenerator;
import io.bulkhead.scenarios.LoadResult;
import io.bulkhead.scenarios.Mode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The shipped alert rules and Grafana dashboard on a real Prometheus (Debian's {@code prometheus}
 * binary) scraping the demo app every second, with the rules' windows divided by {@value #SPEED}
 * ({@link ScaledRules}; a one-minute rate is four scrapes, {@code for: 5m} is 20 s).
 *
 * <p>The run, on one app in bulkhead mode ({@code server}: the cap /login is behind; {@code llm}:
 * limit 10, 20 waiting for at most 1 s), logins at 20/s throughout:
 *
 * <ol>
 *   <li><b>baseline</b>: chats at 20/s, the upstream answering in 200 ms, until Prometheus has
 *       learnt llm's normal latency;
 *   <li><b>burst</b>: the slow-upstream experiment's load (80 chats at once, 50 logins a second
 *       later) against a 3 s upstream, then the baseline again for as long as {@code for:} plus 5
 *       s: a single spike, which must fire nothing;
 *   <li><b>slow dependency</b>: the upstream slows to 2 s (20 chats/s need 40 slots), until
 *       BulkheadDependencyDegrading fires for llm;
 *   <li><b>demand above the limit</b>: the upstream back at 200 ms, chats at 100/s (need 20 slots),
 *       until BulkheadLimitTooLow and BulkheadSaturated fire for llm;
 *   <li><b>load ended</b>: no more requests, until no alert is pending or firing for llm.
 * </ol>
 *
 * Phases end on what Prometheus says, not on a clock, except the burst's quiet time, which is the
 * rules' own {@code for:}. A polling thread reads {@code /api/v1/alerts} every second for the
 * timeline. A database pool set (the shared PostgreSQL) and a fleet compartment (the shared Redis)
 * join the app's registry, with their meters, so that the dashboard's pool and fleet panels have
 * series; afterwards every panel's query runs over the whole run. The timeline and the query report
 * are written to {@code target/prometheus/}.
 *
 * <p>Tagged {@code prometheus}: not part of {@code mvn verify}; {@code .ci/run} runs it with {@code
 * -Pprometheus} after installing the package.
 */
@Tag("prometheus")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AlertsOnPrometheusTest {

  static final int SPEED = 15;
  private static final Path RULES = Path.of("..", "ops", "prometheus", "bulkhead-rules.yml");
  private static final Path DASHBOARD = Path.of("..", "ops", "grafana", "bulkhead-dashboard.json");
  private static final Path OUT = Path.of("target", "prometheus");
  private static final String APPLICATION = "bulkhead-demo";

  private static final Duration NORMAL = Duration.ofMillis(200);
  private static final Duration SLOW = Duration.ofSeconds(2);
  private static final Duration BURST_DELAY = Duration.ofSeconds(3);
  private static final int CHATS = 20;
  private static final int DEMAND = 100;
  private static final int LOGINS = 20;

  /** The rules' {@code for: 5m}, scaled: how long a condition must hold before it fires. */
  private static final Duration FOR = Duration.ofMinutes(5).dividedBy(SPEED);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<AutoCloseable> open = new ArrayList<>();
  private final ConcurrentLinkedQueue<Poll> polls = new ConcurrentLinkedQueue<>();
  private final Map<String, double[]> phases = new LinkedHashMap<>();
  private final StringBuilder notes = new StringBuilder();
  private PrometheusServer prometheus;
  private Instant started;
  private Instant ended;
  private long t0;
  private boolean resolved;

  /** What {@code /api/v1/alerts} said at {@code t} seconds: "alert compartment" to state. */
  record Poll(double t, Map<String, String> alerts) {}

  /** One alert for one compartment in one state, from the first to the last poll that saw it. */
  record Span(String alert, String state, double from, double to) {}

  @BeforeAll
  @Timeout(value = 10, unit = TimeUnit.MINUTES) // the run takes about three; phases bound their own
  void runTheExperiment() throws Exception {
    Files.createDirectories(OUT);
    String rules = ScaledRules.divide(Files.readString(RULES), SPEED);
    Path scaled = OUT.resolve("bulkhead-rules-x" + SPEED + ".yml");
    Files.writeString(scaled, rules);

    FakeUpstream upstream = FakeUpstream.start(0, NORMAL);
    open.add(upstream);
    DemoApp app = new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri()));
    open.add(app);
    int port = app.start(0);
    startPoolsAndFleet(app);

    warmUpMetrics(app);
    Path dir = Files.createTempDirectory(OUT, "run-"); // its data, kept under target/ to look at
    prometheus =
        PrometheusServer.start(dir, "bulkhead-demo", "127.0.0.1:" + port, APPLICATION, scaled);
    open.add(prometheus);
    started = Instant.now();
    t0 = System.nanoTime();
    ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor();
    open.add(poller::shutdownNow);
    poller.scheduleAtFixedRate(this::poll, 0, 1, TimeUnit.SECONDS);

    PacedRequests chats = new PacedRequests(app.uri().resolve("/chat"), "chat");
    PacedRequests logins = new PacedRequests(app.uri().resolve("/login"), "login");
    open.add(chats);
    open.add(logins);

    phase("baseline");
    logins.rate(LOGINS);
    chats.rate(CHATS);
    awaitPrometheus(
        "llm's normal latency learnt",
        Duration.ofSeconds(120),
        () ->
            seconds() >= 20
                && !prometheus
                    .queryRange(
                        "bulkhead:admitted_latency:normal{name=\"llm\"}",
                        Instant.now().minusSeconds(1),
                        Instant.now(),
                        Duration.ofSeconds(1))
                    .path("data")
                    .path("result")
                    .isEmpty());

    phase("burst");
    chats.rate(0);
    upstream.delay(BURST_DELAY);
    LoadResult burst =
        new LoadGenerator(
                app.uri(),
                LoadGenerator.CHATS,
                LoadGenerator.LOGINS,
                LoadGenerator.LOGINS_AFTER,
                Duration.ofSeconds(30))
            .run();
    notes.append(
        String.format(
            Locale.ROOT,
            "burst: %d chats answered 200, %d refused 503, %d other; %d logins failed%n",
            burst.chatOk(),
            burst.chatRejected(),
            burst.chatOther(),
            burst.loginFailures()));
    upstream.delay(NORMAL);
    chats.rate(CHATS);
    TimeUnit.NANOSECONDS.sleep(FOR.plusSeconds(5).toNanos()); // the rules' own window, no less

    phase("slow dependency");
    upstream.delay(SLOW);
    awaitPrometheus(
        "BulkheadDependencyDegrading firing for llm",
        Duration.ofSeconds(120),
        () -> firingNow("BulkheadDependencyDegrading llm"));
    TimeUnit.SECONDS.sleep(3); // a few more polls of the firing state for the timeline

    phase("demand above the limit");
    upstream.delay(NORMAL);
    chats.rate(DEMAND);
    awaitPrometheus(
        "BulkheadLimitTooLow and BulkheadSaturated firing for llm",
        Duration.ofSeconds(150),
        () -> firingNow("BulkheadLimitTooLow llm") && firingNow("BulkheadSaturated llm"));
    TimeUnit.SECONDS.sleep(3);

    phase("load ended");
    notes.append("chats by status: ").append(chats.statuses()).append('\n');
    notes.append("logins by status: ").append(logins.statuses()).append('\n');
    chats.rate(0);
    logins.rate(0);
    resolved =
        awaitPrometheusQuietly(
            Duration.ofSeconds(120),
            () -> last().alerts().keySet().stream().noneMatch(k -> k.endsWith(" llm")));
    phase("end");
    ended = Instant.now();
    poller.shutdownNow();
    Files.writeString(OUT.resolve("alert-timeline.txt"), timelineText());
    System.out.print(timelineText());
  }

  /**
   * Scrapes {@code /metrics} until one scrape answers within half of Prometheus's one-second
   * timeout: the first scrapes of a fresh JVM run interpreted code, and on a busy machine they took
   * over a second, so that Prometheus saw the target down for the first minute.
   */
  private static void warmUpMetrics(DemoApp app) throws Exception {
    java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
    java.net.http.HttpRequest scrape =
        java.net.http.HttpRequest.newBuilder(app.uri().resolve("/metrics")).build();
    for (int i = 0; i < 200; i++) {
      long start = System.nanoTime();
      client.send(scrape, java.net.http.HttpResponse.BodyHandlers.discarding());
      if (i >= 20 && System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(500)) {
        return;
      }
    }
  }

  /** The pools and the fleet compartment whose meters the dashboard's panels read. */
  private void startPoolsAndFleet(DemoApp app) throws Exception {
    String id = "opscheck-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
    LocalPostgres db = LocalPostgres.findOrStart();
    open.add(db);
    DatabasePools.Builder b =
        DatabasePools.builder(id)
            .jdbcUrl(db.jdbcUrl())
            .capacity(4)
            .registry(app.registry())
            .pool(PoolConfig.builder("checkout").limit(3).build())
            .pool(PoolConfig.builder("reports").limit(1).build());
    db.username().ifPresent(b::username);
    DatabasePools pools = b.open();
    open.add(pools);
    DatabasePoolMetrics poolMeters = DatabasePoolMetrics.of(pools);
    open.add(poolMeters);
    poolMeters.bindTo(app.observability().meters());

    RedisCompartments redis = RedisCompartments.connect("redis://127.0.0.1:6379");
    open.add(redis);
    FleetBulkhead partner =
        app.registry()
            .register(
                redis
                    .builder(id + "-partner")
                    .limit(4)
                    .maxQueue(4)
                    .maxWait(Duration.ofSeconds(1))
                    .maxCallDuration(Duration.ofSeconds(5)) // its calls do nothing
                    .build());
    FleetMetrics fleetMeters = FleetMetrics.of(partner);
    open.add(fleetMeters);
    fleetMeters.bindTo(app.observability().meters());

    ScheduledExecutorService side = Executors.newSingleThreadScheduledExecutor();
    open.add(side::shutdownNow);
    side.scheduleAtFixedRate(
        () -> {
          try (Connection c = pools.pool("checkout").getConnection();
              Statement s = c.createStatement()) {
            s.execute("SELECT 1");
            partner.call(() -> null);
          } catch (Exception e) {
            notes.append("side traffic: ").append(e).append('\n');
          }
        },
        0,
        200,
        TimeUnit.MILLISECONDS);
  }

  @AfterAll
  void stop() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      try {
        open.get(i).close();
      } catch (Exception e) {
        System.err.println("closing " + open.get(i) + ": " + e);
      }
    }
  }

  // --- the alerts ----------------------------------------------------------------------------

  @Test
  void dependencyDegrading_firesForLlm_whileTheUpstreamIsSlow() {
    assertThat(firing("BulkheadDependencyDegrading llm"))
        .as("firing spans of BulkheadDependencyDegrading for llm\n%s", timelineText())
        .isNotEmpty()
        .allSatisfy(s -> assertThat(s.from()).isGreaterThanOrEqualTo(window("slow dependency")[0]));
  }

  @Test
  void limitTooLow_firesForLlm_whileDemandExceedsTheLimitAtNormalLatency() {
    assertThat(firing("BulkheadLimitTooLow llm"))
        .as("firing spans of BulkheadLimitTooLow for llm\n%s", timelineText())
        .isNotEmpty()
        .allSatisfy(
            s -> assertThat(s.from()).isGreaterThanOrEqualTo(window("demand above the limit")[0]));
    // When "limit too low" fires, "dependency degrading" no longer does: one diagnosis at a time.
    Poll first =
        polls.stream()
            .filter(p -> "firing".equals(p.alerts().get("BulkheadLimitTooLow llm")))
            .findFirst()
            .orElseThrow();
    assertThat(first.alerts().get("BulkheadDependencyDegrading llm"))
        .as("dependency degrading when limit too low first fired, at %.0f s", first.t())
        .isNotEqualTo("firing");
  }

  @Test
  void saturation_andTheRejectionRate_fireForLlm_underSustainedLoad() {
    assertThat(firing("BulkheadSaturated llm")).as(timelineText()).isNotEmpty();
    assertThat(firing("BulkheadRejecting llm")).as(timelineText()).isNotEmpty();
  }

  @Test
  void nothingFires_forTheCompartmentLoginIsBehind() {
    assertThat(spans())
        .as("any alert, pending or firing, for server (the cap /login is behind)")
        .noneMatch(s -> s.alert().endsWith(" server"));
  }

  @Test
  void theSlowUpstreamExperimentsBurst_firesNothing() {
    double[] burst = {window("burst")[0], window("slow dependency")[0]};
    assertThat(spans())
        .as("firing between the burst and the slow dependency\n%s", timelineText())
        .noneMatch(s -> s.state().equals("firing") && s.from() < burst[1] && s.to() >= burst[0]);
  }

  @Test
  void everyAlertResolves_whenTheLoadEnds() {
    assertThat(resolved).as("no llm alert left pending or firing\n%s", timelineText()).isTrue();
  }

  // --- the dashboard ---------------------------------------------------------------------------

  /**
   * Every query of the Grafana dashboard, its panels' targets and its variables' queries, runs over
   * the whole run with the variables at "All"; none may be invalid or come back empty.
   */
  @Test
  void everyDashboardQuery_isValid_andReturnsSeries() throws IOException {
    JsonNode dashboard = JSON.readTree(DASHBOARD.toFile());
    Map<String, String> queries = DashboardQueries.of(dashboard);
    StringBuilder report = new StringBuilder();
    List<String> failures = new ArrayList<>();
    int withData = 0;
    for (Map.Entry<String, String> q : queries.entrySet()) {
      String promql = DashboardQueries.substitute(q.getValue(), APPLICATION, "4s");
      JsonNode answer = prometheus.queryRange(promql, started, ended, Duration.ofSeconds(2));
      int series = answer.path("data").path("result").size();
      String status = answer.path("status").asText();
      report.append(
          String.format(
              Locale.ROOT,
              "%-6s %3d series  %s%n       %s%n",
              status,
              series,
              q.getKey(),
              promql.replaceAll("\\s+", " ")));
      if (!status.equals("success")) {
        failures.add(q.getKey() + ": " + answer.path("error").asText());
      } else if (series == 0) {
        failures.add(q.getKey() + ": no series");
      } else {
        withData++;
      }
    }
    report.insert(
        0,
        String.format(
            Locale.ROOT,
            "%d dashboard queries checked, %d returned data%n",
            queries.size(),
            withData));
    Files.writeString(OUT.resolve("dashboard-queries.txt"), report);
    System.out.print(report);
    assertThat(queries).as("queries found in %s", DASHBOARD).hasSizeGreaterThan(10);
    assertThat(failures).as(report.toString()).isEmpty();
  }

  // --- polling and the timeline ----------------------------------------------------------------

  private void poll() {
    try {
      Map<String, String> now = new LinkedHashMap<>();
      for (JsonNode a : prometheus.alerts()) {
        JsonNode l = a.get("labels");
        String who =
            l.has("compartment") ? l.get("compartment").asText() : l.path("budget").asText();
        now.put(l.get("alertname").asText() + " " + who, a.get("state").asText());
      }
      polls.add(new Poll(seconds(), now));
    } catch (RuntimeException e) {
      notes.append(String.format(Locale.ROOT, "poll at %.0f s: %s%n", seconds(), e));
    }
  }

  private double seconds() {
    return (System.nanoTime() - t0) / 1e9;
  }

  private void phase(String name) {
    double now = seconds();
    if (!phases.isEmpty()) {
      double[] previous = phases.get(phases.keySet().stream().reduce((a, b) -> b).orElseThrow());
      previous[1] = now;
    }
    phases.put(name, new double[] {now, Double.NaN});
  }

  private double[] window(String name) {
    return phases.get(name);
  }

  private Poll last() {
    Poll last = null;
    for (Poll p : polls) {
      last = p;
    }
    return last == null ? new Poll(0, Map.of()) : last;
  }

  private boolean firingNow(String key) {
    return "firing".equals(last().alerts().get(key));
  }

  private void awaitPrometheus(
      String what, Duration patience, java.util.function.BooleanSupplier done)
      throws InterruptedException {
    if (!awaitPrometheusQuietly(patience, done)) {
      throw new AssertionError(
          what
              + ": not within "
              + patience.toSeconds()
              + " s; target "
              + prometheus.targetHealth()
              + "\n"
              + timelineText()
              + "\nrules: "
              + prometheus.rules());
    }
  }

  private boolean awaitPrometheusQuietly(Duration patience, java.util.function.BooleanSupplier done)
      throws InterruptedException {
    long deadline = System.nanoTime() + patience.toNanos();
    while (System.nanoTime() < deadline) {
      if (done.getAsBoolean()) {
        return true;
      }
      TimeUnit.MILLISECONDS.sleep(500); // Prometheus gives no signal but its API
    }
    return done.getAsBoolean();
  }

  /** Every alert's spans of one state, in the order they began. */
  List<Span> spans() {
    List<Span> out = new ArrayList<>();
    Map<String, Span> current = new LinkedHashMap<>();
    for (Poll p : polls) {
      for (Map.Entry<String, String> a : p.alerts().entrySet()) {
        Span s = current.get(a.getKey());
        if (s != null && s.state().equals(a.getValue())) {
          current.put(a.getKey(), new Span(s.alert(), s.state(), s.from(), p.t()));
        } else {
          if (s != null) {
            out.add(s);
          }
          current.put(a.getKey(), new Span(a.getKey(), a.getValue(), p.t(), p.t()));
        }
      }
      for (String gone : List.copyOf(current.keySet())) {
        if (!p.alerts().containsKey(gone)) {
          out.add(current.remove(gone));
        }
      }
    }
    out.addAll(current.values());
    out.sort(java.util.Comparator.comparingDouble(Span::from));
    return out;
  }

  private List<Span> firing(String key) {
    return spans().stream()
        .filter(s -> s.alert().equals(key) && s.state().equals("firing"))
        .toList();
  }

  private String timelineText() {
    StringBuilder out = new StringBuilder("phases (s since Prometheus started):\n");
    phases.forEach(
        (name, t) ->
            out.append(String.format(Locale.ROOT, "  %-24s %6.1f - %6.1f%n", name, t[0], t[1])));
    out.append(String.format(Locale.ROOT, "%-48s %-8s %6s %6s%n", "alert", "state", "from", "to"));
    for (Span s : spans()) {
      out.append(
          String.format(
              Locale.ROOT, "%-48s %-8s %6.1f %6.1f%n", s.alert(), s.state(), s.from(), s.to()));
    }
    return out.append(notes).toString();
  }

  /** The PromQL of a Grafana dashboard: every panel target's {@code expr}, every variable query. */
  static final class DashboardQueries {

    private static final Pattern LABEL_VALUES =
        Pattern.compile("^\\s*label_values\\((.*),\\s*[a-zA-Z_]+\\s*\\)\\s*$", Pattern.DOTALL);

    private DashboardQueries() {}

    /** Title to query: "panel title / refId" for targets, "$variable" for variables. */
    static Map<String, String> of(JsonNode dashboard) {
      Map<String, String> out = new LinkedHashMap<>();
      panels(dashboard.path("panels"), out);
      for (JsonNode v : dashboard.path("templating").path("list")) {
        if (v.path("type").asText().equals("query")) {
          String q =
              v.path("query").isObject()
                  ? v.path("query").path("query").asText()
                  : v.path("query").asText();
          Matcher m = LABEL_VALUES.matcher(q);
          out.put("$" + v.path("name").asText(), m.matches() ? m.group(1) : q);
        }
      }
      return out;
    }

    private static void panels(JsonNode panels, Map<String, String> out) {
      for (JsonNode p : panels) {
        for (JsonNode t : p.path("targets")) {
          if (t.hasNonNull("expr")) {
            out.put(
                p.path("title").asText() + " / " + t.path("refId").asText(),
                t.get("expr").asText());
          }
        }
        panels(p.path("panels"), out); // a collapsed row holds its panels
      }
    }

    /** The query as Grafana sends it with every variable at "All". */
    static String substitute(String query, String application, String rateInterval) {
      return query
          .replace("$__rate_interval", rateInterval)
          .replace("${application:regex}", application)
          .replace("$application", application)
          .replace("${compartment:regex}", ".*")
          .replace("$compartment", ".*")
          .replace("$budget", ".*");
    }
  }
}
