package io.bulkhead.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Debian's {@code prometheus} binary run as a child process on a free loopback port, with its data
 * in a directory of its own, scraping one target every second and evaluating {@code rules} every
 * second; and its HTTP API. No service manager is involved: the process is the server, and {@link
 * #close()} kills it.
 *
 * <p>It installs nothing: without {@code prometheus} on the {@code PATH} it fails with one line
 * saying how to get it ({@code .ci/run} installs it).
 */
final class PrometheusServer implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration START_PATIENCE = Duration.ofSeconds(60);

  private final Process process;
  private final URI uri;
  private final Path log;
  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private PrometheusServer(Process process, URI uri, Path log) {
    this.process = process;
    this.uri = uri;
    this.log = log;
  }

  /**
   * Starts Prometheus in {@code dir} scraping {@code target} (host:port, path {@code /metrics})
   * every second as job {@code job}, adding the label {@code application} to every series, with the
   * rules of {@code rules} loaded; returns once it answers {@code /-/ready}.
   */
  static PrometheusServer start(Path dir, String job, String target, String application, Path rules)
      throws IOException, InterruptedException {
    requireInstalled();
    int port = freePort();
    Path config = dir.resolve("prometheus.yml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "global:",
            "  scrape_interval: 1s",
            "  scrape_timeout: 1s",
            "  evaluation_interval: 1s",
            "rule_files:",
            "  - " + rules.toAbsolutePath(),
            "scrape_configs:",
            "  - job_name: " + job,
            "    static_configs:",
            "      - targets: ['" + target + "']",
            "        labels:",
            "          application: " + application,
            ""));
    Path log = dir.resolve("prometheus.log");
    Process p =
        new ProcessBuilder(
                "prometheus",
                "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port,
                "--log.level=warn")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    PrometheusServer server = new PrometheusServer(p, URI.create("http://127.0.0.1:" + port), log);
    try {
      server.awaitReady();
    } catch (IOException | RuntimeException | InterruptedException e) {
      server.close();
      throw e;
    }
    return server;
  }

  private static void requireInstalled() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "prometheus"))) {
        return;
      }
    }
    throw new IllegalStateException(
        "prometheus is not on the PATH: install Debian's package (apt-get install -y prometheus),"
            + " as .ci/run does");
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private void awaitReady() throws IOException, InterruptedException {
    long deadline = System.nanoTime() + START_PATIENCE.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "prometheus exited with " + process.exitValue() + ": " + Files.readString(log));
      }
      try {
        HttpResponse<String> r =
            client.send(
                HttpRequest.newBuilder(uri.resolve("/-/ready"))
                    .timeout(Duration.ofSeconds(2))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      TimeUnit.MILLISECONDS.sleep(200); // polling a process that gives no other signal
    }
    throw new IllegalStateException(
        "prometheus was not ready within " + START_PATIENCE + ": " + Files.readString(log));
  }

  URI uri() {
    return uri;
  }

  /** The alerts pending or firing now, as {@code /api/v1/alerts} lists them. */
  List<JsonNode> alerts() {
    JsonNode data = get("/api/v1/alerts").get("data").get("alerts");
    return List.copyOf(toList(data));
  }

  /** The health of the scrape target: "up", "down" or "unknown", with its last error. */
  String targetHealth() {
    JsonNode active = get("/api/v1/targets").get("data").get("activeTargets");
    if (active.isEmpty()) {
      return "no target";
    }
    JsonNode t = active.get(0);
    return t.get("health").asText() + " " + t.path("lastError").asText();
  }

  /** The rule groups as Prometheus loaded them, with every rule's health and last error. */
  JsonNode rules() {
    return get("/api/v1/rules").get("data").get("groups");
  }

  /**
   * Runs {@code query} over [{@code from}, {@code to}] every {@code step}; returns the whole answer
   * ({@code status}, {@code error}, {@code data.result}). An invalid query is an answer with status
   * "error", not an exception.
   */
  JsonNode queryRange(String query, Instant from, Instant to, Duration step) {
    return get(
        "/api/v1/query_range?query="
            + URLEncoder.encode(query, StandardCharsets.UTF_8)
            + "&start="
            + from.getEpochSecond()
            + "&end="
            + to.getEpochSecond()
            + "&step="
            + step.toSeconds());
  }

  private JsonNode get(String pathAndQuery) {
    try {
      HttpResponse<String> r =
          client.send(
              HttpRequest.newBuilder(URI.create(uri + pathAndQuery))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return JSON.readTree(r.body());
    } catch (IOException e) {
      throw new UncheckedIOException("GET " + pathAndQuery + " from prometheus", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted reading " + pathAndQuery, e);
    }
  }

  private static List<JsonNode> toList(JsonNode array) {
    List<JsonNode> out = new java.util.ArrayList<>();
    array.forEach(out::add);
    return out;
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
