package io.bulkhead.samples.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.BulkheadStats;
import io.bulkhead.scenarios.FakeUpstream;
import io.bulkhead.scenarios.LoadGenerator;
import io.bulkhead.scenarios.LoadResult;
import io.bulkhead.scenarios.Route;
import io.bulkhead.scenarios.Sample;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The slow-upstream experiment against the sample, over real HTTP on its Tomcat: 80 chats at once,
 * then 50 logins a second later, while the upstream takes {@link #UPSTREAM_DELAY} per answer. Only
 * the upstream's address comes from the test; the compartment is the one in {@code
 * application.yml}.
 */
@SpringBootTest(
    classes = LlmApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SlowUpstreamExperimentTest {

  /**
   * Long enough that every chat of the burst arrives while the first ten still hold their slots (on
   * a loaded two-core machine too), short enough that the test stays short.
   */
  private static final Duration UPSTREAM_DELAY = Duration.ofSeconds(5);

  /** Far beyond any answer: a request that times out fails the test rather than hanging it. */
  private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(60);

  private static final int LIMIT = 10; // bulkhead.compartments.llm.limit in application.yml

  private static final FakeUpstream UPSTREAM = FakeUpstream.start(0, UPSTREAM_DELAY);

  @DynamicPropertySource
  static void upstream(DynamicPropertyRegistry properties) {
    properties.add("llm.base-url", () -> UPSTREAM.uri().toString());
  }

  @AfterAll
  static void stopUpstream() {
    UPSTREAM.close();
  }

  @LocalServerPort int port;
  @Autowired BulkheadRegistry registry;

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void everyLoginIsAnsweredTenChatsAreAnsweredAndTheRestAreRefusedWithRetryAfter()
      throws Exception {
    LoadGenerator load =
        new LoadGenerator(
            URI.create("http://127.0.0.1:" + port),
            LoadGenerator.CHATS,
            LoadGenerator.LOGINS,
            LoadGenerator.LOGINS_AFTER,
            CLIENT_TIMEOUT);
    CompletableFuture<LoadResult> running = CompletableFuture.supplyAsync(load::run);

    // Once the 70 refusals are in, the 10 admitted chats still wait on the upstream: one more chat
    // shows the refusal's headers (the load generator keeps only statuses), and the endpoint shows
    // the compartment full.
    await().atMost(CLIENT_TIMEOUT).until(() -> load.chatsAnswered() >= LoadGenerator.CHATS - LIMIT);
    HttpResponse<String> probe = get("/chat");
    String duringLoad = get("/actuator/compartments").body();
    String prometheus = get("/actuator/prometheus").body();
    LoadResult result = running.join();

    List<Sample> logins = result.samples().stream().filter(s -> s.route() == Route.LOGIN).toList();
    System.out.printf(
        "sample app under the slow-upstream experiment: logins %d (failed %d),"
            + " p50 %.1f ms, p99 %.1f ms; chats 200: %d, 503: %d, other: %d; upstream calls %d%n",
        logins.size(),
        result.loginFailures(),
        result.login().p50Ms(),
        result.login().p99Ms(),
        result.chatOk(),
        result.chatRejected(),
        result.chatOther(),
        UPSTREAM.requests());

    System.out.println("/actuator/compartments during the load: " + duringLoad);

    assertThat(prometheus)
        .as("the starter alone binds the meters to the application's Prometheus registry")
        .contains("bulkhead_in_flight{name=\"llm\"} 10.0")
        .contains("bulkhead_limit{name=\"llm\"} 10.0");
    assertThat(probe.statusCode()).isEqualTo(503);
    assertThat(probe.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(Long.parseLong(probe.headers().firstValue("Retry-After").orElseThrow()))
        .isGreaterThanOrEqualTo(1);
    assertThat(logins).hasSize(LoadGenerator.LOGINS);
    assertThat(logins).allSatisfy(login -> assertThat(login.status()).isEqualTo(200));
    assertThat(result.chatOk()).isEqualTo(LIMIT);
    assertThat(result.chatRejected()).isEqualTo(LoadGenerator.CHATS - LIMIT);
    assertThat(result.chatOther()).isZero();
    assertThat(UPSTREAM.requests()).as("refused chats never reach the upstream").isEqualTo(LIMIT);
    BulkheadStats llm = registry.find("llm").orElseThrow().stats();
    assertThat(llm.admitted()).isEqualTo(LIMIT);
    assertThat(llm.rejected(BulkheadFullException.Reason.QUEUE_FULL))
        .as("the load's refusals and the probe")
        .isEqualTo(LoadGenerator.CHATS - LIMIT + 1);
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(CLIENT_TIMEOUT)
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }
}
