package io.bulkhead.scenarios;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadStats;
import io.bulkhead.testing.Closer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The app's own views of its compartments: /bulkheads, /metrics and the dashboard's files. */
class ObservabilityTest {

  @RegisterExtension final Closer closer = new Closer();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private HttpResponse<String> get(URI app, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(app.resolve(path)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private CompletableFuture<HttpResponse<String>> getAsync(URI app, String path) {
    return http.sendAsync(
        HttpRequest.newBuilder(app.resolve(path)).timeout(Duration.ofSeconds(60)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /**
   * With the llm compartment full and its queue full, /bulkheads reports exactly what the
   * compartments' own stats say, and answers although the server-wide cap would make a normal route
   * wait.
   */
  @Test
  void bulkheads_isASnapshotOfEveryCompartment_matchingTheirStats_evenWhileSaturated()
      throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofSeconds(5)));
    // One server slot: a single chat takes it, so only a bypassing route can answer.
    DemoApp app =
        closer.closeLater(
            new DemoApp(
                new AppSettings(
                    Mode.BULKHEAD,
                    upstream.uri(),
                    1,
                    1,
                    1,
                    Duration.ofSeconds(30),
                    Duration.ofSeconds(30))));
    app.start(0);
    Bulkhead server = app.registry().bulkhead("server").orElseThrow();
    Bulkhead llm = app.registry().bulkhead("llm").orElseThrow();
    long chatSent = System.nanoTime();
    CompletableFuture<HttpResponse<String>> chat = getAsync(app.uri(), "/chat");
    await().atMost(30, SECONDS).until(() -> upstream.requests() == 1);
    CompletableFuture<HttpResponse<String>> login = getAsync(app.uri(), "/login");
    await().atMost(30, SECONDS).until(() -> server.stats().waiting() == 1);
    await().atMost(30, SECONDS).until(() -> app.insight().advice("llm").isPresent());

    HttpResponse<String> response = get(app.uri(), "/bulkheads");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type"))
        .hasValueSatisfying(ct -> assertThat(ct).startsWith("application/json"));
    assertThat(login.isDone()).as("/login still waits behind the cap").isFalse();

    JsonNode doc = new ObjectMapper().readTree(response.body());
    assertThat(doc.get("sampleEveryMs").asLong()).isEqualTo(1000);
    JsonNode compartments = doc.get("compartments");
    assertThat(compartments).hasSize(2);
    assertThat(compartments.get(0).get("name").asText()).isEqualTo("server");
    assertThat(compartments.get(1).get("name").asText()).isEqualTo("llm");

    JsonNode s = compartments.get(0);
    BulkheadStats serverStats = server.stats();
    assertThat(s.get("limit").asInt()).isEqualTo(1);
    assertThat(s.get("inFlight").asInt()).isEqualTo(serverStats.inFlight()).isEqualTo(1);
    assertThat(s.get("waiting").asInt()).isEqualTo(1);
    assertThat(s.get("maxQueue").isNull()).as("unbounded queue is null").isTrue();
    assertThat(s.get("config").get("maxWaitMs").isNull()).isTrue();
    assertThat(s.get("admitted").asLong()).isEqualTo(serverStats.admitted());

    JsonNode l = compartments.get(1);
    BulkheadStats llmStats = llm.stats();
    assertThat(l.get("config").get("limit").asInt()).isEqualTo(1);
    assertThat(l.get("config").get("maxQueue").asInt()).isEqualTo(1);
    assertThat(l.get("config").get("maxWaitMs").asLong()).isEqualTo(30_000);
    assertThat(l.get("inFlight").asInt()).isEqualTo(llmStats.inFlight()).isEqualTo(1);
    assertThat(l.get("waiting").asInt()).isEqualTo(0);
    assertThat(l.get("admitted").asLong()).isEqualTo(1);
    assertThat(l.get("rejected").asLong()).isZero();
    assertThat(l.get("rejectedByReason").get("queue_full").asLong()).isZero();
    assertThat(l.get("latency").get("count").asLong()).isZero();
    assertThat(l.get("latency").get("p99Ms").isNull()).as("no call finished yet").isTrue();
    JsonNode d = l.get("diagnosis");
    assertThat(d.get("state").asText()).isEqualTo("HEALTHY");
    assertThat(d.get("explanation").asText()).isNotBlank();
    // The advice is the sampler's (once a second): its wording depends on how many samples ran, but
    // with no llm call finished it has no latency and so no recommendation, whichever sample it is.
    JsonNode advice = l.get("advice");
    assertThat(advice.get("summary").asText()).isNotBlank();
    assertThat(advice.get("latencyMs").isNull()).as("no call finished yet").isTrue();
    assertThat(advice.get("recommendedLimit").isNull()).isTrue();
    assertThat(advice.get("headroom").asDouble()).isEqualTo(3.0);
    assertThat(l.get("resource").isNull()).as("nothing known behind the llm compartment").isTrue();

    assertThat(chat.get(60, SECONDS).statusCode()).isEqualTo(200);
    double chatWaitedMs = (System.nanoTime() - chatSent) / 1e6;
    assertThat(login.get(60, SECONDS).statusCode()).isEqualTo(200);
    JsonNode after =
        new ObjectMapper().readTree(get(app.uri(), "/bulkheads").body()).get("compartments").get(1);
    assertThat(after.get("inFlight").asInt()).isZero();
    assertThat(after.get("latency").get("count").asLong()).isEqualTo(1);
    // The upstream's 5 s, and no more than the client waited for the chat (the histogram's buckets
    // are a quarter of a power of two wide: a reading is within 12.5% of the truth).
    assertThat(after.get("latency").get("p99Ms").asDouble())
        .as("the upstream's 5 s")
        .isBetween(4_900.0, chatWaitedMs * 1.125);
    assertThat(after.get("diagnosis").get("state").asText()).isEqualTo("HEALTHY");
  }

  @Test
  void metrics_isPrometheusText_withEveryCompartmentsMeters() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofMillis(10)));
    DemoApp app =
        closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri())));
    app.start(0);
    assertThat(get(app.uri(), "/chat").statusCode()).isEqualTo(200);
    HttpResponse<String> metrics = get(app.uri(), "/metrics");
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.headers().firstValue("content-type"))
        .hasValueSatisfying(ct -> assertThat(ct).startsWith("text/plain"));
    assertThat(metrics.body())
        .contains(
            "bulkhead_limit{name=\"server\"} 50.0",
            "bulkhead_limit{name=\"llm\"} 10.0",
            "bulkhead_max_queue{name=\"server\"} +Inf",
            "bulkhead_max_queue{name=\"llm\"} 20.0",
            "bulkhead_admitted_total{name=\"llm\"} 1.0",
            "bulkhead_rejected_total{name=\"llm\",reason=\"queue_full\"} 0.0",
            "bulkhead_call_duration_seconds_count{name=\"llm\"} 1",
            "# TYPE bulkhead_queue_wait_seconds histogram");
  }

  @Test
  void dashboard_servesItsThreeFiles_andNothingElse() throws Exception {
    DemoApp app =
        closer.closeLater(
            new DemoApp(AppSettings.defaults(Mode.SHARED, URI.create("http://127.0.0.1:1"))));
    app.start(0);
    for (String path : List.of("/dashboard", "/dashboard/")) {
      HttpResponse<String> page = get(app.uri(), path);
      assertThat(page.statusCode()).isEqualTo(200);
      assertThat(page.headers().firstValue("content-type")).hasValue("text/html;charset=utf-8");
      assertThat(page.body())
          .contains(
              "<title>Bulkhead dashboard</title>",
              "/dashboard/dashboard.js",
              "/dashboard/dashboard.css");
    }
    HttpResponse<String> js = get(app.uri(), "/dashboard/dashboard.js");
    assertThat(js.headers().firstValue("content-type")).hasValue("text/javascript;charset=utf-8");
    assertThat(js.body()).contains("fetch(\"/bulkheads\"");
    assertThat(get(app.uri(), "/dashboard/dashboard.css").body()).contains(".badge");
    assertThat(get(app.uri(), "/dashboard/../pom.xml").statusCode()).isIn(400, 404);
    assertThat(get(app.uri(), "/dashboard/nothing.js").statusCode()).isEqualTo(404);
  }
}
