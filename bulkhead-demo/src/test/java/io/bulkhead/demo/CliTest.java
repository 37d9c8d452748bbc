package io.bulkhead.demo;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bulkhead.scenarios.AppSettings;
import io.bulkhead.scenarios.DemoApp;
import io.bulkhead.scenarios.FakeUpstream;
import io.bulkhead.scenarios.LoadGenerator;
import io.bulkhead.scenarios.Mode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The command line: bad input gets one line and a non-zero exit; good input does what it says. */
class CliTest {

  /** What one run of the command line printed, and its exit code. */
  record Run(int exit, String out, String err) {}

  static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        Main.run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Exactly one line on stderr, nothing on stdout, no stack trace. */
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

  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"demo", "upstream", "app", "load", "partition"})
  void unknownOption_isOneLine_exit2(String command) {
    assertOneLineError(
        run(command, "--no-such-option"),
        2,
        "bulkhead-demo " + command + ": Unknown option: '--no-such-option'");
  }

  @Test
  void unknownCommand_isOneLine_exit2() {
    assertOneLineError(run("dmeo"), 2, "Unmatched argument", "'dmeo'");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "htp:/x",
        "http://127.0.0.1",
        "127.0.0.1:4001",
        "http://127.0.0.1:4001/x",
        "http://[::1",
        "http://10.0.0.1:4001",
        "http://example.com:80"
      })
  void malformedOrNonLoopbackUpstream_isOneLine_exit2(String url) {
    assertOneLineError(run("app", "--upstream", url), 2, "--upstream", "'" + url + "'");
  }

  @Test
  void malformedTarget_isOneLine_exit2() {
    assertOneLineError(run("load", "--target", "http//127.0.0.1:3000"), 2, "--target");
  }

  @Test
  void badDurationModeOrNumber_isOneLine_exit2() {
    assertOneLineError(run("upstream", "--delay", "soon"), 2, "--delay", "'soon'");
    assertOneLineError(
        run("app", "--mode", "isolated"), 2, "--mode", "'isolated'", "shared or bulkhead");
    assertOneLineError(run("demo", "--llm-limit", "0"), 2, "--llm-limit must be at least 1");
    assertOneLineError(
        run("demo", "--delay", "90s", "--upstream-deadline", "60s"),
        2,
        "--upstream-deadline (1m) must be longer than --delay (1m30s)");
    assertOneLineError(run("app", "--port", "70000"), 2, "--port", "70000");
    assertOneLineError(run("partition", "--reports-share", "7"), 2, "--reports-share");
  }

  @Test
  void everyDurationOption_readsTheFilesGrammar_shortFormAndIso8601_withOneBound() {
    assertOneLineError(
        run("demo", "--delay", "1h", "--upstream-deadline", "PT30M"),
        2,
        "--upstream-deadline (30m) must be longer than --delay (1h)");
    assertOneLineError(
        run("demo", "--delay", "PT1.5S", "--upstream-deadline", "1.5s"),
        2,
        "--upstream-deadline (1.5s) must be longer than --delay (1.5s)");
    assertOneLineError(
        run("upstream", "--delay", "2562048h"),
        2,
        "Invalid value for option '--delay': '2562048h' is too long: a duration must fit in");
    assertOneLineError(
        run("load", "--logins-after", "PT-1S"),
        2,
        "Invalid value for option '--logins-after': must not be negative but was 'PT-1S'");
  }

  @Test
  void loadWarmUp_warmsTheClientInItsOwnProcess_andSendsTheTargetOnlyTheBurst() throws Exception {
    try (FakeUpstream target = FakeUpstream.start(0, Duration.ZERO)) {
      Run r =
          run(
              "load",
              "--target",
              target.uri().toString(),
              "--chats",
              "3",
              "--logins",
              "2",
              "--logins-after",
              "0s",
              "--warm-up",
              "1",
              "--json");

      assertThat(r.exit()).as(r.err()).isZero();
      assertThat(r.err()).contains("load generator warmed up: 1 bursts (");
      JsonNode doc = new ObjectMapper().readTree(r.out()); // stdout is the result alone
      assertThat(doc.path("chat").path("200").asInt()).isEqualTo(3);
      assertThat(target.requests()).isEqualTo(5); // the warm-up went to its own throwaway app
    }
  }

  @Test
  void portInUse_isOneLine_exit1() throws Exception {
    try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        FakeUpstream upstream = FakeUpstream.start(0, Duration.ofMillis(10))) {
      String port = Integer.toString(held.getLocalPort());

      assertOneLineError(
          run("upstream", "--port", port),
          1,
          "port " + port + " on 127.0.0.1 is already in use (--port)");
      assertOneLineError(
          run("app", "--port", port, "--upstream", upstream.uri().toString(), "--no-warm-up"),
          1,
          "port " + port + " on 127.0.0.1 is already in use (--port)");
    }
  }

  @Test
  void app_startsWhileTheUpstreamIsDown_answers502Fast_andRecoversWhenItComesBack()
      throws Exception {
    int downPort = closedPort();
    String down = "http://127.0.0.1:" + downPort;
    CommandThread app =
        CommandThread.start(
            "app", "--port", "0", "--mode", "bulkhead", "--upstream", down, "--no-warm-up");
    URI appUri = app.awaitUri();
    try {
      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpRequest chat = HttpRequest.newBuilder(appUri.resolve("/chat")).build();
      HttpResponse<String> login =
          client.send(
              HttpRequest.newBuilder(appUri.resolve("/login")).build(),
              HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> refused = client.send(chat, HttpResponse.BodyHandlers.ofString());

      assertThat(login.statusCode()).isEqualTo(200);
      assertThat(refused.statusCode()).isEqualTo(502);
      assertThat(refused.body())
          .isEqualTo("the upstream refused the connection: it is down or restarting\n");
      assertThat(app.err()).contains("warning: the upstream at " + down + " does not answer");
      try (FakeUpstream upstream = FakeUpstream.start(downPort, Duration.ofMillis(10))) {
        HttpResponse<String> back = client.send(chat, HttpResponse.BodyHandlers.ofString());

        assertThat(back.statusCode()).isEqualTo(200);
        assertThat(back.body()).isEqualTo(FakeUpstream.ANSWER);
      }
    } finally {
      assertThat(app.stop()).isZero();
    }
  }

  @Test
  void app_warmUp_runsBeforeListening_andLeavesTheAppsCompartmentsAndItsUpstreamUntouched()
      throws Exception {
    try (FakeUpstream upstream = FakeUpstream.start(0, Duration.ofMillis(10))) {
      CommandThread app =
          CommandThread.start(
              "app",
              "--port",
              "0",
              "--mode",
              "bulkhead",
              "--upstream",
              upstream.uri().toString(),
              "--warm-up",
              "1");
      // The warm-up's bursts and the compiler's settling come first; the bound is a hang's only.
      URI appUri = app.awaitUri(120);
      try {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<String> chat =
            client.send(
                HttpRequest.newBuilder(appUri.resolve("/chat")).build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> metrics =
            client.send(
                HttpRequest.newBuilder(appUri.resolve("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(app.out())
            .containsPattern(
                "warmed up: 1 bursts \\(130 requests\\) to a throwaway copy of the app in bulkhead"
                    + " mode in [0-9.hmµ]+s \\(compiler settled: ")
            .contains("listening on");
        assertThat(app.out().indexOf("warmed up")).isLessThan(app.out().indexOf("listening on"));
        assertThat(chat.statusCode()).isEqualTo(200);
        // The warm-up's 80 chats went to its own upstream, its 50 rejections to its own
        // compartment.
        assertThat(upstream.requests()).isEqualTo(1);
        assertThat(metrics.body())
            .contains(
                "bulkhead_admitted_total{name=\"llm\"} 1.0",
                "bulkhead_rejected_total{name=\"llm\",reason=\"queue_full\"} 0.0");
      } finally {
        assertThat(app.stop()).isZero();
      }
    }
  }

  /** What the warm-up says it did: its rounds, its requests, the mode. */
  private static final Pattern WARMED =
      Pattern.compile(
          "warmed up: (\\d+) bursts \\((\\d+) requests\\) to a throwaway copy of the app in"
              + " (shared|bulkhead) mode in [0-9.hmµ]+s");

  @Test
  void app_byDefault_servesItsWarmUpBursts_beforeItListens() throws Exception {
    try (FakeUpstream upstream = FakeUpstream.start(0, Duration.ofMillis(10))) {
      CommandThread app =
          CommandThread.start(
              "app", "--port", "0", "--mode", "bulkhead", "--upstream", upstream.uri().toString());
      // Three bursts and the compiler's settling come first; the bound is a hang's only.
      app.awaitUri(180);
      try {
        String out = app.out();
        Matcher warmed = WARMED.matcher(out);
        assertThat(warmed.find()).as(out).isTrue();
        int rounds = Integer.parseInt(warmed.group(1));
        // Three asked for by default; a machine too slow for them in the bound serves fewer.
        assertThat(rounds).isBetween(1, 3);
        assertThat(Integer.parseInt(warmed.group(2)))
            .as("every burst's chats and logins were sent")
            .isEqualTo(rounds * (LoadGenerator.CHATS + LoadGenerator.LOGINS));
        assertThat(warmed.group(3)).isEqualTo("bulkhead");
        // The app prints the line once the bursts are done and opens its port after it.
        assertThat(warmed.start()).isLessThan(out.indexOf("listening on"));
      } finally {
        assertThat(app.stop()).isZero();
      }
    }
  }

  @Test
  void app_noWarmUp_listensWithoutOne() throws Exception {
    try (FakeUpstream upstream = FakeUpstream.start(0, Duration.ofMillis(10))) {
      for (String[] off : List.of(new String[] {"--no-warm-up"}, new String[] {"--warm-up", "0"})) {
        List<String> args =
            new ArrayList<>(
                List.of(
                    "app",
                    "--port",
                    "0",
                    "--mode",
                    "bulkhead",
                    "--upstream",
                    upstream.uri().toString()));
        args.addAll(List.of(off));
        CommandThread app = CommandThread.start(args.toArray(new String[0]));
        app.awaitUri(60);
        try {
          assertThat(app.out())
              .as(String.join(" ", off))
              .contains("listening on")
              .doesNotContain("warmed up");
        } finally {
          assertThat(app.stop()).isZero();
        }
      }
    }
  }

  @Test
  void demo_byDefault_warmsBothModes_beforeEitherListens(@TempDir Path dir) throws Exception {
    CommandThread demo =
        CommandThread.start(
            "demo",
            "--dashboard",
            "--port",
            "0",
            "--delay",
            "200ms",
            "--chats",
            "4",
            "--logins",
            "2",
            "--logins-after",
            "50ms",
            "--report",
            dir.resolve("r.html").toString(),
            "--result",
            dir.resolve("r.json").toString());
    try {
      await().atMost(300, SECONDS).until(() -> demo.out().contains("stays up at") || demo.isDone());
      String err = demo.err();
      Matcher warmed = WARMED.matcher(err);
      assertThat(warmed.find()).as(err).isTrue();
      assertThat(warmed.group(3)).isEqualTo("shared");
      int sharedEnd = warmed.end();
      assertThat(warmed.find()).as(err).isTrue();
      assertThat(warmed.group(3)).isEqualTo("bulkhead");
      assertThat(warmed.end()).isGreaterThan(sharedEnd);
      // The experiment prints where each mode's app listens once it does: after both warm-ups.
      assertThat(err.indexOf("shared mode: app at")).isGreaterThan(warmed.end());
    } finally {
      assertThat(demo.stop()).isZero();
    }
  }

  @Test
  void app_collectsItsStartUpGarbage_beforeItListens() throws Exception {
    // A full collection is what System.gc() runs under the collectors a test JVM may have; nothing
    // else in these tests asks for one.
    long before = fullCollections();
    try (FakeUpstream upstream = FakeUpstream.start(0, Duration.ofMillis(10))) {
      CommandThread app =
          CommandThread.start(
              "app",
              "--port",
              "0",
              "--mode",
              "bulkhead",
              "--upstream",
              upstream.uri().toString(),
              "--no-warm-up");
      try {
        app.awaitUri();

        assertThat(fullCollections()).isGreaterThan(before);
      } finally {
        assertThat(app.stop()).isZero();
      }
    }
  }

  /** Full collections so far: G1's, Serial's and Parallel's old-generation collectors. */
  private static long fullCollections() {
    long total = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (List.of("G1 Old Generation", "MarkSweepCompact", "PS MarkSweep").contains(gc.getName())) {
        total += gc.getCollectionCount();
      }
    }
    return total;
  }

  @Test
  void app_negativeWarmUp_isOneLine_exit2() {
    assertOneLineError(
        run("app", "--warm-up", "-1"), 2, "--warm-up must be between 0 and 20 but was -1");
  }

  @Test
  void app_warmUpBeyondItsBound_isOneLine_exit2_ratherThanAStartThatNeverEnds() {
    assertOneLineError(
        run("app", "--warm-up", "1000000"),
        2,
        "--warm-up must be between 0 and 20 but was 1000000");
  }

  @Test
  void loadAgainstNothing_isOneLine_exit1() throws Exception {
    String down = "http://127.0.0.1:" + closedPort();

    assertOneLineError(
        run("load", "--target", down), 1, "nothing answers at " + down, "start the app first");
  }

  @Test
  void noCommand_showsUsage_exit2() {
    Run r = run();
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err())
        .contains("Usage: bulkhead-demo", "demo", "partition")
        .contains("a command is required")
        .doesNotContain("\tat ");
  }

  @Test
  void help_exit0() {
    Run r = run("demo", "--help");
    assertThat(r.exit()).isZero();
    assertThat(r.out()).contains("--delay", "Default: 30s", "--json");
  }

  @Test
  void partition_printsTheSharedVsSplitCounts() {
    Run r = run("partition");

    assertThat(r.exit()).isZero();
    assertThat(r.out())
        .isEqualTo(
            String.join(
                System.lineSeparator(),
                "One shared compartment of 7",
                "  reports : sent 10, accepted 7, rejected 3",
                "  payments: sent 4, accepted 0, rejected 4",
                "Two compartments: reports 3, payments 4",
                "  reports : sent 10, accepted 3, rejected 7",
                "  payments: sent 4, accepted 4, rejected 0",
                ""));
  }

  @Test
  void upstreamAndApp_serveUntilInterrupted() throws Exception {
    CommandThread upstream = CommandThread.start("upstream", "--port", "0", "--delay", "200ms");
    URI upstreamUri = upstream.awaitUri();
    CommandThread app =
        CommandThread.start(
            "app", "--port", "0", "--mode", "bulkhead", "--upstream", upstreamUri.toString());
    URI appUri = app.awaitUri();
    try {
      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpResponse<String> login =
          client.send(
              HttpRequest.newBuilder(appUri.resolve("/login")).build(),
              HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> chat =
          client.send(
              HttpRequest.newBuilder(appUri.resolve("/chat")).build(),
              HttpResponse.BodyHandlers.ofString());

      assertThat(login.statusCode()).isEqualTo(200);
      assertThat(login.body()).isEqualTo("ok\n");
      assertThat(chat.statusCode()).isEqualTo(200);
      assertThat(chat.body()).isEqualTo(FakeUpstream.ANSWER);
      assertThat(app.out())
          .contains(
              "bulkhead mode",
              "server (50 in flight, unbounded queue)",
              "llm (10 in flight, 20 waiting, 1s wait)");
    } finally {
      assertThat(app.stop()).isZero();
      assertThat(upstream.stop()).isZero();
    }
  }

  @Test
  void load_againstARunningApp_printsJsonOfOneMode() throws Exception {
    try (FakeUpstream upstream = FakeUpstream.start(0, Duration.ofMillis(1500));
        DemoApp app = new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri()))) {
      app.start(0);

      Run r =
          run(
              "load",
              "--target",
              app.uri().toString(),
              "--chats",
              "15",
              "--logins",
              "5",
              "--logins-after",
              "200ms",
              "--json");

      assertThat(r.exit()).as(r.err()).isZero();
      JsonNode m = new ObjectMapper().readTree(r.out());
      assertModeShape(m);
      assertThat(m.get("chat").get("200").asInt()).isEqualTo(10);
      assertThat(m.get("chat").get("503").asInt()).isEqualTo(5);
    }
  }

  @Test
  void demo_json_printsBothModes_andWritesTheReportAndTheResult(@TempDir Path dir)
      throws Exception {
    Path report = dir.resolve("report.html");
    Path result = dir.resolve("result.json");

    Run r =
        run(
            "demo",
            "--delay",
            "1s",
            "--chats",
            "12",
            "--logins",
            "6",
            "--logins-after",
            "300ms",
            "--server-limit",
            "8",
            "--llm-limit",
            "2",
            "--llm-max-queue",
            "2",
            "--llm-max-wait",
            "400ms",
            "--json",
            "--report",
            report.toString(),
            "--result",
            result.toString());

    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode both = new ObjectMapper().readTree(r.out());
    assertThat(fieldNames(both)).containsExactly("shared", "bulkhead");
    assertModeShape(both.get("shared"));
    assertModeShape(both.get("bulkhead"));
    assertThat(both.get("shared").get("chat").get("200").asInt()).isEqualTo(12);
    assertThat(both.get("shared").get("rejected").get("p50_ms").isNull()).isTrue();
    assertThat(both.get("bulkhead").get("chat").get("200").asInt()).isEqualTo(2);
    assertThat(both.get("bulkhead").get("chat").get("503").asInt()).isEqualTo(10);
    assertThat(Files.readString(result)).isEqualTo(r.out());
    String html = Files.readString(report);
    assertThat(html)
        .startsWith("<!DOCTYPE html>")
        .contains("<svg", "</html>")
        // self-contained: nothing to fetch (the only URL is the SVG namespace, which is a name)
        .doesNotContain("<script", "<link", "src=", "@import", "url(", "https://");
    assertThat(r.err()).contains("shared mode: done", "bulkhead mode: done", "wrote ");
  }

  @Test
  void demo_table_isPrintedOnStdout() throws Exception {
    Path dir = Files.createTempDirectory("demo-table");
    Run r =
        run(
            "demo",
            "--delay",
            "500ms",
            "--chats",
            "6",
            "--logins",
            "3",
            "--logins-after",
            "100ms",
            "--server-limit",
            "4",
            "--llm-limit",
            "1",
            "--llm-max-queue",
            "1",
            "--llm-max-wait",
            "200ms",
            "--report",
            dir.resolve("r.html").toString(),
            "--result",
            dir.resolve("r.json").toString());

    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out())
        .contains(
            "shared", "bulkhead", "login p99", "chat 503", "wall time", "machine: ", "wrote ");
  }

  private static void assertModeShape(JsonNode m) {
    assertThat(fieldNames(m)).containsExactly("login", "chat", "rejected", "wall_ms");
    assertThat(fieldNames(m.get("login"))).containsExactly("p50_ms", "p99_ms", "max_ms");
    assertThat(fieldNames(m.get("chat"))).containsExactly("200", "503", "other");
    assertThat(fieldNames(m.get("rejected"))).containsExactly("p50_ms", "p99_ms");
    assertThat(m.get("wall_ms").isNumber()).isTrue();
    assertThat(m.get("login").get("p99_ms").isNumber()).isTrue();
  }

  private static List<String> fieldNames(JsonNode node) {
    List<String> names = new ArrayList<>();
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      names.add(it.next());
    }
    return names;
  }

  /** A long-running command (upstream, app) on its own thread, stopped by interrupting it. */
  static final class CommandThread {
    private static final Pattern URL =
        Pattern.compile("listening on (http://127\\.0\\.0\\.1:\\d+)");

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    private final Thread thread;

    private CommandThread(String... args) {
      thread =
          new Thread(
              () ->
                  exit.complete(
                      Main.run(
                          args,
                          new PrintStream(out, true, StandardCharsets.UTF_8),
                          new PrintStream(err, true, StandardCharsets.UTF_8))),
              "cli-" + args[0]);
      thread.start();
    }

    static CommandThread start(String... args) {
      return new CommandThread(args);
    }

    String out() {
      return out.toString(StandardCharsets.UTF_8);
    }

    String err() {
      return err.toString(StandardCharsets.UTF_8);
    }

    boolean isDone() {
      return exit.isDone();
    }

    /**
     * Waits for the command's "listening on" line. The bound is a hang's only: an app warms up
     * before it listens, by default, which on a busy machine takes tens of seconds.
     */
    URI awaitUri() {
      return awaitUri(120);
    }

    URI awaitUri(long seconds) {
      await().atMost(seconds, SECONDS).until(() -> URL.matcher(out()).find() || exit.isDone());
      Matcher m = URL.matcher(out());
      if (!m.find()) {
        throw new AssertionError(
            "the command ended without listening: " + err.toString(StandardCharsets.UTF_8));
      }
      return URI.create(m.group(1));
    }

    int stop() throws Exception {
      thread.interrupt();
      return exit.get(10, SECONDS);
    }
  }
}
