package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.BulkheadStats;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The starter in a real application on an embedded Tomcat, over real HTTP: {@code @Bulkhead} on
 * plain and CompletionStage methods, the 503 problem answer, the Actuator endpoint, Prometheus, and
 * a RestClient whose upstream is a small local server.
 */
@SpringBootTest(
    classes = TestApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "bulkhead.compartments.llm.limit=2",
      "bulkhead.compartments.llm.maxQueue=0", // relaxed binding: camelCase as well as kebab-case
      "bulkhead.compartments.upstream-api.limit=1",
      "management.endpoints.web.exposure.include=compartments,compartmentevents,health,prometheus",
      "management.endpoint.health.show-details=always"
    })
class WebIntegrationTest {

  private static final Duration PATIENCE = Duration.ofSeconds(30);
  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** The upstream: /slow/** waits for the test, anything else answers at once. */
  private static final HttpServer UPSTREAM;

  private static final ExecutorService UPSTREAM_THREADS = Executors.newCachedThreadPool();
  private static volatile CountDownLatch upstreamArrived = new CountDownLatch(0);
  private static volatile CountDownLatch upstreamRelease = new CountDownLatch(0);

  static {
    try {
      UPSTREAM = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    UPSTREAM.setExecutor(UPSTREAM_THREADS);
    UPSTREAM.createContext(
        "/",
        exchange -> {
          if (exchange.getRequestURI().getPath().startsWith("/slow/")) {
            upstreamArrived.countDown();
            try {
              upstreamRelease.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          byte[] body =
              ("upstream " + exchange.getRequestURI().getPath()).getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    UPSTREAM.start();
  }

  @DynamicPropertySource
  static void upstream(DynamicPropertyRegistry registry) {
    registry.add(
        "bulkhead.compartments.upstream-api.upstream",
        () -> "http://127.0.0.1:" + UPSTREAM.getAddress().getPort() + "/slow");
  }

  @AfterAll
  static void stopUpstream() {
    upstreamRelease.countDown();
    UPSTREAM.stop(0);
    UPSTREAM_THREADS.shutdownNow();
  }

  @LocalServerPort int port;
  @Autowired WebServerApplicationContext webServerContext;
  @Autowired TestApplication.LlmService service;
  @Autowired BulkheadRegistry registry;
  @Autowired RestClient.Builder restClients;

  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(request(path), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest request(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(PATIENCE)
        .build();
  }

  private BulkheadStats stats(String name) {
    return registry.find(name).orElseThrow().stats();
  }

  @Test
  void servedByTomcat() {
    assertThat(webServerContext.getWebServer())
        .isInstanceOf(org.springframework.boot.tomcat.TomcatWebServer.class);
  }

  @Test
  void aFullCompartmentAnswers503WithRetryAfterAndAProblemBody() throws Exception {
    long recordedBefore = recordedRejections();
    service.hold(2);
    CompletableFuture<HttpResponse<String>> plain =
        http.sendAsync(request("/plain"), HttpResponse.BodyHandlers.ofString());
    CompletableFuture<HttpResponse<String>> async =
        http.sendAsync(request("/async"), HttpResponse.BodyHandlers.ofString());
    assertThat(service.awaitEntered(PATIENCE)).isTrue();
    // The async method has returned, but its stage is pending: it still holds its slot.
    assertThat(stats("llm").inFlight()).isEqualTo(2);

    for (String path : new String[] {"/plain", "/async"}) {
      HttpResponse<String> refused = get(path);
      System.out.println(
          "refused behind a catch-all @ExceptionHandler(Exception.class): "
              + path
              + " -> "
              + refused.statusCode()
              + " "
              + refused.headers().map()
              + " "
              + refused.body());
      assertThat(refused.statusCode()).as(path).isEqualTo(503);
      assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
      long retryAfter = Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow());
      assertThat(retryAfter).isGreaterThanOrEqualTo(1);
      JsonNode problem = JSON.readTree(refused.body());
      assertThat(problem.get("type").asString()).isEqualTo(BulkheadProblemHandler.TYPE.toString());
      assertThat(problem.get("title").asString()).isEqualTo("Compartment full");
      assertThat(problem.get("status").asInt()).isEqualTo(503);
      assertThat(problem.get("detail").asString())
          .startsWith("bulkhead 'llm' is full (QUEUE_FULL)");
      assertThat(problem.get("compartment").asString()).isEqualTo("llm");
      assertThat(problem.get("reason").asString()).isEqualTo("queue_full");
    }
    assertThat(stats("llm").rejected(BulkheadFullException.Reason.QUEUE_FULL)).isEqualTo(2);
    JsonNode events = JSON.readTree(get("/actuator/compartmentevents/llm").body());
    JsonNode llmEvents = events.get("compartments").get("llm");
    assertThat(llmEvents.get("recorded").asLong() - recordedBefore).isEqualTo(2);
    JsonNode last = llmEvents.get("events").get(llmEvents.get("events").size() - 1);
    assertThat(last.get("reason").asString()).isEqualTo("queue_full");
    assertThat(java.time.Instant.parse(last.get("time").asString()))
        .isBetween(java.time.Instant.now().minus(PATIENCE), java.time.Instant.now());

    service.releaseAll();
    assertThat(plain.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).body()).isEqualTo("plain");
    assertThat(async.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).body()).isEqualTo("async");
    assertThat(stats("llm").inFlight()).isZero();
  }

  @Test
  void theActuatorEndpointAndPrometheusShowTheCompartmentsAsTheyAre() throws Exception {
    service.hold(1);
    CompletableFuture<HttpResponse<String>> plain =
        http.sendAsync(request("/plain"), HttpResponse.BodyHandlers.ofString());
    assertThat(service.awaitEntered(PATIENCE)).isTrue();
    try {
      HttpResponse<String> all = get("/actuator/compartments");
      assertThat(all.statusCode()).isEqualTo(200);
      assertThat(all.headers().firstValue("Content-Type").orElseThrow()).contains("json");
      JsonNode compartments = JSON.readTree(all.body()).get("compartments");
      assertThat(compartments.valueStream().map(c -> c.get("name").asString()).toList())
          .containsExactlyInAnyOrder("llm", "upstream-api"); // in the order the properties came
      JsonNode llm =
          compartments
              .valueStream()
              .filter(c -> c.get("name").asString().equals("llm"))
              .findFirst()
              .orElseThrow();
      assertThat(llm.get("inFlight").asInt()).isEqualTo(1);
      assertThat(llm.get("config").get("limit").asInt()).isEqualTo(2);
      assertThat(llm.get("diagnosis").get("state").asString()).isNotEmpty();
      assertThat(llm.has("rejectedByReason")).isTrue();

      HttpResponse<String> one = get("/actuator/compartments/llm");
      assertThat(one.statusCode()).isEqualTo(200);
      JsonNode only = JSON.readTree(one.body()).get("compartments");
      assertThat(only.size()).isEqualTo(1);
      assertThat(only.get(0).get("name").asString()).isEqualTo("llm");
      assertThat(get("/actuator/compartments/nope").statusCode()).isEqualTo(404);

      HttpResponse<String> health = get("/actuator/health/bulkheads");
      System.out.println("/actuator/health/bulkheads with one call in flight: " + health.body());
      assertThat(health.statusCode()).isEqualTo(200);
      JsonNode bulkheads = JSON.readTree(health.body());
      assertThat(bulkheads.get("status").asString()).isEqualTo("UP");
      assertThat(bulkheads.get("details").get("llm").get("inFlight").asInt()).isEqualTo(1);
      assertThat(bulkheads.get("details").get("llm").get("limit").asInt()).isEqualTo(2);
      assertThat(bulkheads.get("details").get("llm").get("state").asString()).isNotEmpty();

      // Read-only unless the application allows writes: no POST mapping (which this application's
      // catch-all handler turns into a 500 of its own), and the limit stays.
      HttpResponse<String> write =
          http.send(
              HttpRequest.newBuilder(
                      URI.create("http://127.0.0.1:" + port + "/actuator/compartments/llm"))
                  .timeout(PATIENCE)
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString("{\"limit\":5}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(write.body()).isEqualTo("{\"error\":\"HttpRequestMethodNotSupportedException\"}");
      assertThat(stats("llm").limit()).isEqualTo(2);

      HttpResponse<String> prometheus = get("/actuator/prometheus");
      assertThat(prometheus.statusCode()).isEqualTo(200);
      assertThat(prometheus.body())
          .contains("bulkhead_in_flight{name=\"llm\"} 1.0")
          .contains("bulkhead_limit{name=\"llm\"} 2.0")
          .contains("bulkhead_call_duration_seconds_count{name=\"llm\"}")
          .as("histograms stay off unless management.metrics.distribution asks for them")
          .doesNotContain("bulkhead_call_duration_seconds_bucket");
    } finally {
      service.releaseAll();
    }
    assertThat(plain.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).body()).isEqualTo("plain");
  }

  private long recordedRejections() throws Exception {
    return JSON.readTree(get("/actuator/compartmentevents/llm").body())
        .get("compartments")
        .get("llm")
        .get("recorded")
        .asLong();
  }

  @Test
  void restClientCallsToAnUpstreamHoldItsSlotUntilTheResponseIsRead() throws Exception {
    RestClient client =
        restClients.baseUrl("http://127.0.0.1:" + UPSTREAM.getAddress().getPort()).build();
    upstreamArrived = new CountDownLatch(1);
    upstreamRelease = new CountDownLatch(1);
    ExecutorService caller = Executors.newSingleThreadExecutor();
    try {
      CompletableFuture<String> first =
          CompletableFuture.supplyAsync(
              () -> client.get().uri("/slow/one").retrieve().body(String.class), caller);
      assertThat(upstreamArrived.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
      assertThat(stats("upstream-api").inFlight()).isEqualTo(1);

      assertThatThrownBy(() -> client.get().uri("/slow/two").retrieve().body(String.class))
          .isInstanceOf(BulkheadFullException.class)
          .hasMessageStartingWith("bulkhead 'upstream-api' is full (QUEUE_FULL)");
      // Not under the upstream's base path: not in its compartment, so not refused.
      assertThat(client.get().uri("/fast").retrieve().body(String.class))
          .isEqualTo("upstream /fast");
      assertThat(client.get().uri("/slower").retrieve().body(String.class))
          .isEqualTo("upstream /slower");

      upstreamRelease.countDown();
      assertThat(first.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo("upstream /slow/one");
      // body() has read and closed the response, which freed the slot.
      assertThat(stats("upstream-api").inFlight()).isZero();
      assertThat(client.get().uri("/slow/three").retrieve().body(String.class))
          .isEqualTo("upstream /slow/three");
      assertThat(stats("upstream-api").admitted()).isEqualTo(2);
      assertThat(stats("upstream-api").rejected()).isEqualTo(1);
    } finally {
      upstreamRelease.countDown();
      caller.shutdownNow();
    }
  }
}
