package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.BulkheadStats;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code paths} in Spring WebFlux on Netty, over real HTTP: the {@code WebFilter} the starter
 * registers puts {@code /chat/**} into the "llm" compartment before any handler runs, holds the
 * slot until the response is written, and answers a full compartment with the problem body; {@code
 * /**} puts every other request into "server", except the Actuator endpoints, which answer while it
 * is full.
 */
@SpringBootTest(
    classes = WebFluxEdgeTest.ChatApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "spring.main.web-application-type=reactive",
      "bulkhead.compartments.llm.limit=1",
      "bulkhead.compartments.llm.max-queue=0",
      "bulkhead.compartments.llm.paths=/chat/**",
      "bulkhead.compartments.server.limit=1",
      "bulkhead.compartments.server.paths=/**",
      "management.endpoints.web.exposure.include=health,compartments"
    })
class WebFluxEdgeTest {

  private static final Duration PATIENCE = Duration.ofSeconds(30);
  private static final JsonMapper JSON = JsonMapper.builder().build();

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  @Import(ChatController.class)
  static class ChatApplication {}

  /** A chat whose answer the test holds in a sink, and a login that answers at once. */
  @RestController
  static class ChatController {
    static volatile CountDownLatch entered = new CountDownLatch(0);
    static volatile Sinks.One<String> answer = Sinks.one();
    static final AtomicInteger calls = new AtomicInteger();

    @GetMapping("/chat/held")
    Mono<String> chat() {
      calls.incrementAndGet();
      entered.countDown();
      return answer.asMono();
    }

    @GetMapping("/login")
    Mono<String> login() {
      return Mono.just("welcome");
    }

    static volatile CountDownLatch slowEntered = new CountDownLatch(0);
    static volatile Sinks.One<String> slowAnswer = Sinks.one();

    @GetMapping("/slow")
    Mono<String> slow() {
      slowEntered.countDown();
      return slowAnswer.asMono();
    }
  }

  @LocalServerPort int port;
  @Autowired WebServerApplicationContext webServerContext;
  @Autowired BulkheadRegistry registry;

  private final HttpClient http = HttpClient.newHttpClient();

  private HttpRequest request(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(PATIENCE)
        .build();
  }

  @Test
  void servedByNetty() {
    assertThat(webServerContext.getWebServer())
        .isInstanceOf(org.springframework.boot.reactor.netty.NettyWebServer.class);
  }

  @Test
  void aHeldChatFillsTheCompartmentAndTheNextIsRefusedByTheWebFilter() throws Exception {
    ChatController.entered = new CountDownLatch(1);
    ChatController.answer = Sinks.one();
    ChatController.calls.set(0);
    BulkheadStats before = stats();

    CompletableFuture<HttpResponse<String>> held =
        http.sendAsync(request("/chat/held"), HttpResponse.BodyHandlers.ofString());
    assertThat(ChatController.entered.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(stats().inFlight()).as("the handler returned, its Mono holds the slot").isEqualTo(1);

    HttpResponse<String> refused =
        http.send(request("/chat/held"), HttpResponse.BodyHandlers.ofString());
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow()))
        .isGreaterThanOrEqualTo(1);
    assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    JsonNode problem = JSON.readTree(refused.body());
    assertThat(problem.get("type").asString()).isEqualTo(BulkheadProblemHandler.TYPE.toString());
    assertThat(problem.get("title").asString()).isEqualTo("Compartment full");
    assertThat(problem.get("status").asInt()).isEqualTo(503);
    assertThat(problem.get("detail").asString()).startsWith("bulkhead 'llm' is full (QUEUE_FULL)");
    assertThat(problem.get("compartment").asString()).isEqualTo("llm");
    assertThat(problem.get("reason").asString()).isEqualTo("queue_full");
    assertThat(ChatController.calls.get())
        .as("the refused chat never reached the handler")
        .isEqualTo(1);

    HttpResponse<String> login = http.send(request("/login"), HttpResponse.BodyHandlers.ofString());
    assertThat(login.statusCode()).as("a path outside the compartment").isEqualTo(200);

    ChatController.answer.tryEmitValue("answer").orThrow();
    HttpResponse<String> answered = held.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertThat(answered.statusCode()).isEqualTo(200);
    assertThat(answered.body()).isEqualTo("answer");

    // The slot is freed when the exchange completes, which the client may see a moment before:
    // wait for that, however long the machine takes.
    BulkheadStats after = awaitIdle();
    assertThat(after.admitted() - before.admitted()).isEqualTo(1);
    assertThat(after.completed() - before.completed()).isEqualTo(1);
    assertThat(
            after.rejected(BulkheadFullException.Reason.QUEUE_FULL)
                - before.rejected(BulkheadFullException.Reason.QUEUE_FULL))
        .isEqualTo(1);
  }

  @Test
  void theActuatorAnswers_whileOneSlowCallHoldsTheOnlySlotOfSlashStarStar() throws Exception {
    ChatController.slowEntered = new CountDownLatch(1);
    ChatController.slowAnswer = Sinks.one();
    CompletableFuture<HttpResponse<String>> held =
        http.sendAsync(request("/slow"), HttpResponse.BodyHandlers.ofString());
    try {
      assertThat(ChatController.slowEntered.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS))
          .isTrue();
      assertThat(stats("server").inFlight()).isEqualTo(1);
      assertThat(http.send(request("/login"), HttpResponse.BodyHandlers.ofString()).statusCode())
          .as("/** is full")
          .isEqualTo(503);

      for (String path : new String[] {"/actuator/health", "/actuator/compartments", "/actuator"}) {
        HttpResponse<String> answer =
            http.send(request(path), HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).as(path).isEqualTo(200);
      }
    } finally {
      ChatController.slowAnswer.tryEmitValue("slow");
    }
    assertThat(held.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).body()).isEqualTo("slow");
    await().atMost(PATIENCE).until(() -> stats("server").inFlight() == 0);
  }

  private BulkheadStats awaitIdle() {
    await().atMost(PATIENCE).until(() -> stats().inFlight() == 0);
    return stats();
  }

  private BulkheadStats stats() {
    return stats("llm");
  }

  private BulkheadStats stats(String name) {
    return registry.find(name).orElseThrow().stats();
  }
}
