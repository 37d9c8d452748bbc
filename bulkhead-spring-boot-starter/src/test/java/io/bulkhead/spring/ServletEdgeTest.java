package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.BulkheadStats;
import io.bulkhead.edge.Route;
import io.bulkhead.edge.RouteTable;
import io.bulkhead.servlet.BulkheadFilter;
import jakarta.servlet.DispatcherType;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code paths} in Spring MVC on an embedded Tomcat, over real HTTP: the servlet filter the starter
 * registers puts {@code /chat/**} into the "llm" compartment before any controller runs, and
 * answers a full one with the problem body; {@code /**} puts every other request into "server",
 * except the Actuator endpoints, which answer while it is full.
 */
@SpringBootTest(
    classes = ServletEdgeTest.ChatApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "bulkhead.compartments.llm.limit=1",
      "bulkhead.compartments.llm.max-queue=0",
      "bulkhead.compartments.llm.paths=/chat/**",
      "bulkhead.compartments.queued.limit=1",
      "bulkhead.compartments.queued.max-queue=1",
      "bulkhead.compartments.queued.max-wait=30s",
      "bulkhead.compartments.queued.paths=/queued",
      "bulkhead.compartments.server.limit=1",
      "bulkhead.compartments.server.paths=/**",
      "management.endpoints.web.exposure.include=health,compartments"
    })
class ServletEdgeTest {

  private static final Duration PATIENCE = Duration.ofSeconds(30);
  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** A chat that waits for the test, and a login that answers at once. */
  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  @Import(ChatController.class)
  static class ChatApplication {}

  @RestController
  static class ChatController {
    static volatile CountDownLatch entered = new CountDownLatch(0);
    static volatile CountDownLatch release = new CountDownLatch(0);
    static volatile int calls;

    @GetMapping("/chat/held")
    String chat() throws InterruptedException {
      calls++;
      entered.countDown();
      release.await();
      return "answer";
    }

    static volatile CountDownLatch queuedEntered = new CountDownLatch(0);
    static volatile CountDownLatch queuedRelease = new CountDownLatch(0);

    @GetMapping("/queued")
    String queued() throws InterruptedException {
      queuedEntered.countDown();
      queuedRelease.await();
      return "served";
    }

    @GetMapping("/login")
    String login() {
      return "welcome";
    }

    static volatile CountDownLatch slowEntered = new CountDownLatch(0);
    static volatile CountDownLatch slowRelease = new CountDownLatch(0);

    @GetMapping("/slow")
    String slow() throws InterruptedException {
      slowEntered.countDown();
      slowRelease.await();
      return "slow";
    }
  }

  @LocalServerPort int port;
  @Autowired WebServerApplicationContext webServerContext;
  @Autowired BulkheadRegistry registry;

  @Autowired
  @Qualifier(BulkheadWebMvcAutoConfiguration.FILTER_NAME)
  FilterRegistrationBean<BulkheadFilter> filter;

  private final HttpClient http = HttpClient.newHttpClient();

  private HttpRequest request(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(PATIENCE)
        .build();
  }

  @Test
  void servedByTomcat() {
    assertThat(webServerContext.getWebServer())
        .isInstanceOf(org.springframework.boot.tomcat.TomcatWebServer.class);
  }

  @Test
  void theFilterIsRegisteredForAsyncDispatchesAfterSecurity() {
    assertThat(filter.isEnabled()).isTrue();
    assertThat(filter.isAsyncSupported()).isTrue();
    assertThat(filter.determineDispatcherTypes())
        .containsExactlyInAnyOrder(DispatcherType.REQUEST, DispatcherType.ASYNC);
    assertThat(filter.getOrder()).isEqualTo(BulkheadWebMvcAutoConfiguration.FILTER_ORDER);
    assertThat(filter.getUrlPatterns()).containsExactly("/*");
    RouteTable routes = filter.getFilter().routes();
    assertThat(routes.route("/chat")).isEqualTo(Route.through(registry.bulkhead("llm").get()));
    assertThat(routes.route("/chat/x/y")).isEqualTo(routes.route("/chat"));
    assertThat(routes.route("/chatter"))
        .isEqualTo(Route.through(registry.bulkhead("server").get())); // /** takes the rest
    assertThat(routes.route("/actuator/health")).isEqualTo(Route.bypass());
  }

  @Test
  void aHeldChatFillsTheCompartmentAndTheNextIsRefusedByTheFilter() throws Exception {
    ChatController.entered = new CountDownLatch(1);
    ChatController.release = new CountDownLatch(1);
    ChatController.calls = 0;
    BulkheadStats before = stats();

    CompletableFuture<HttpResponse<String>> held =
        http.sendAsync(request("/chat/held"), HttpResponse.BodyHandlers.ofString());
    assertThat(ChatController.entered.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(stats().inFlight()).isEqualTo(1);

    HttpResponse<String> refused =
        http.send(request("/chat/held"), HttpResponse.BodyHandlers.ofString());
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow()))
        .isGreaterThanOrEqualTo(1);
    assertThat(refused.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("application/problem+json");
    JsonNode problem = JSON.readTree(refused.body());
    assertThat(problem.get("type").asString()).isEqualTo(BulkheadProblemHandler.TYPE.toString());
    assertThat(problem.get("status").asInt()).isEqualTo(503);
    assertThat(problem.get("compartment").asString()).isEqualTo("llm");
    assertThat(problem.get("reason").asString()).isEqualTo("queue_full");
    assertThat(ChatController.calls)
        .as("the refused chat never reached the controller")
        .isEqualTo(1);

    // A path outside the compartment is untouched while it is full.
    HttpResponse<String> login = http.send(request("/login"), HttpResponse.BodyHandlers.ofString());
    assertThat(login.statusCode()).isEqualTo(200);

    ChatController.release.countDown();
    HttpResponse<String> answered = held.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertThat(answered.statusCode()).isEqualTo(200);
    assertThat(answered.body()).isEqualTo("answer");

    // The slot is freed when the filter's chain returns, which the client may see a moment after
    // the response (the converter flushes it): wait for that, however long the machine takes.
    BulkheadStats after = awaitIdle();
    assertThat(after.admitted() - before.admitted()).isEqualTo(1);
    assertThat(after.completed() - before.completed()).isEqualTo(1);
    assertThat(
            after.rejected(BulkheadFullException.Reason.QUEUE_FULL)
                - before.rejected(BulkheadFullException.Reason.QUEUE_FULL))
        .isEqualTo(1);
  }

  @Test
  void aRequestThatWaitsForASlotIsDispatchedToTheControllerWhenOneIsFree() throws Exception {
    ChatController.queuedEntered = new CountDownLatch(1);
    ChatController.queuedRelease = new CountDownLatch(1);
    BulkheadStats before = stats("queued");

    CompletableFuture<HttpResponse<String>> first =
        http.sendAsync(request("/queued"), HttpResponse.BodyHandlers.ofString());
    assertThat(ChatController.queuedEntered.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS))
        .isTrue();
    ChatController.queuedEntered = new CountDownLatch(1);
    CompletableFuture<HttpResponse<String>> second =
        http.sendAsync(request("/queued"), HttpResponse.BodyHandlers.ofString());
    await().atMost(PATIENCE).until(() -> stats("queued").waiting() == 1);
    assertThat(ChatController.queuedEntered.getCount()).as("the second waits outside").isEqualTo(1);

    ChatController.queuedRelease.countDown(); // the first returns; its slot goes to the second
    assertThat(first.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).body()).isEqualTo("served");
    HttpResponse<String> dispatched = second.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertThat(dispatched.statusCode()).isEqualTo(200);
    assertThat(dispatched.body()).isEqualTo("served");

    await().atMost(PATIENCE).until(() -> stats("queued").inFlight() == 0);
    BulkheadStats after = stats("queued");
    assertThat(after.admitted() - before.admitted()).isEqualTo(2);
    assertThat(after.completed() - before.completed()).isEqualTo(2);
    assertThat(after.waiting()).isZero();
  }

  @Test
  void theActuatorAnswers_whileOneSlowCallHoldsTheOnlySlotOfSlashStarStar() throws Exception {
    ChatController.slowEntered = new CountDownLatch(1);
    ChatController.slowRelease = new CountDownLatch(1);
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
      ChatController.slowRelease.countDown();
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
