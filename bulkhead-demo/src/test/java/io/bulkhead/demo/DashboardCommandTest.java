package io.bulkhead.demo;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bulkhead.scenarios.FakeUpstream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code demo --dashboard}: one address for both runs, and the bulkhead-mode app kept up after. */
class DashboardCommandTest {

  private static final Pattern KEPT =
      Pattern.compile("stays up at (http://127\\.0\\.0\\.1:(\\d+))");

  @Test
  void demoDashboard_runsBothModesOnOnePort_thenKeepsTheBulkheadAppUpUntilStopped(@TempDir Path dir)
      throws Exception {
    int port = freePort();
    CliTest.CommandThread demo =
        CliTest.CommandThread.start(
            "demo",
            "--dashboard",
            "--port",
            String.valueOf(port),
            "--delay",
            "3s",
            "--no-warm-up",
            "--report",
            dir.resolve("r.html").toString(),
            "--result",
            dir.resolve("r.json").toString());
    await().atMost(120, SECONDS).until(() -> KEPT.matcher(demo.out()).find());
    Matcher m = KEPT.matcher(demo.out());
    assertThat(m.find()).isTrue();
    URI app = URI.create(m.group(1));
    assertThat(Integer.parseInt(m.group(2))).as("the port asked for").isEqualTo(port);
    assertThat(demo.out()).contains("login p99", "/dashboard", "/bulkheads", "/metrics");

    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> snapshot =
        http.send(
            HttpRequest.newBuilder(app.resolve("/bulkheads")).build(),
            HttpResponse.BodyHandlers.ofString());
    JsonNode llm = new ObjectMapper().readTree(snapshot.body()).get("compartments").get(1);
    assertThat(llm.get("name").asText()).isEqualTo("llm");
    assertThat(llm.get("admitted").asLong())
        .as("the experiment's numbers are still there")
        .isEqualTo(10);
    assertThat(llm.get("rejected").asLong()).isEqualTo(70);
    assertThat(
            http.send(
                    HttpRequest.newBuilder(app.resolve("/dashboard")).build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode())
        .isEqualTo(200);

    assertThat(demo.stop()).isZero();
    try (ServerSocket again = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      assertThat(again.getLocalPort()).as("the kept app let its port go").isEqualTo(port);
    }
    try {
      http.send(
          HttpRequest.newBuilder(app.resolve("/login")).build(),
          HttpResponse.BodyHandlers.discarding());
      throw new AssertionError("the app still answers after Ctrl-C");
    } catch (ConnectException expected) {
      // stopped
    }
  }

  @Test
  void demoDashboard_badPort_isOneLine() {
    CliTest.Run r = CliTest.run("demo", "--dashboard", "--port", "70000");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err().strip()).doesNotContain("\n").contains("--port", "70000");
  }

  @Test
  void app_saysWhereItsDashboardIs() throws Exception {
    try (FakeUpstream upstream = FakeUpstream.start(0, java.time.Duration.ofMillis(10))) {
      CliTest.CommandThread app =
          CliTest.CommandThread.start(
              "app",
              "--port",
              "0",
              "--mode",
              "bulkhead",
              "--upstream",
              upstream.uri().toString(),
              "--no-warm-up");
      URI uri = app.awaitUri();
      try {
        assertThat(app.out())
            .contains(
                "dashboard " + uri + "/dashboard",
                "JSON " + uri + "/bulkheads",
                "Prometheus " + uri + "/metrics");
      } finally {
        assertThat(app.stop()).isZero();
      }
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
