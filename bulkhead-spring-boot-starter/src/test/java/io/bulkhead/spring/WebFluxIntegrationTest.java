package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.BulkheadRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The same 503 problem answer on WebFlux (Netty), for a CompletionStage method held by the test, in
 * an application with a catch-all exception handler.
 */
@SpringBootTest(
    classes = WebFluxIntegrationTest.ReactiveApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "spring.main.web-application-type=reactive",
      "bulkhead.compartments.llm.limit=1",
      "management.endpoints.web.exposure.include=health",
      "management.endpoint.health.show-details=always"
    })
class WebFluxIntegrationTest {

  private static final Duration PATIENCE = Duration.ofSeconds(30);

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class ReactiveApplication {

    /** Completes its answers when the test says so; reached through methods, as it is proxied. */
    static class LlmService {
      private volatile CountDownLatch entered = new CountDownLatch(0);
      private volatile CompletableFuture<String> pending = CompletableFuture.completedFuture("a");

      public void hold() {
        entered = new CountDownLatch(1);
        pending = new CompletableFuture<>();
      }

      public boolean awaitEntered() throws InterruptedException {
        return entered.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
      }

      public void release() {
        pending.complete("answer");
      }

      @Bulkhead("llm")
      public CompletableFuture<String> complete() {
        entered.countDown();
        return pending;
      }
    }

    /** Registered as a member class of this configuration. */
    @RestController
    static class LlmController {
      private final LlmService service;

      LlmController(LlmService service) {
        this.service = service;
      }

      @GetMapping("/complete")
      CompletableFuture<String> complete() {
        return service.complete();
      }
    }

    /** A catch-all exception handler, as many applications have; the 503 must survive it. */
    @RestControllerAdvice
    static class CatchAll {
      @ExceptionHandler(Exception.class)
      ResponseEntity<Map<String, String>> any(Exception e) {
        return ResponseEntity.internalServerError()
            .body(Map.of("error", e.getClass().getSimpleName()));
      }
    }

    @Bean
    LlmService llmService() {
      return new LlmService();
    }
  }

  @LocalServerPort int port;
  @Autowired WebServerApplicationContext webServerContext;
  @Autowired ReactiveApplication.LlmService service;
  @Autowired BulkheadRegistry registry;

  @Test
  void servedByNetty() {
    assertThat(webServerContext.getWebServer())
        .isInstanceOf(org.springframework.boot.reactor.netty.NettyWebServer.class);
  }

  @Test
  void aFullCompartmentAnswers503WithRetryAfterAndAProblemBody() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/complete"))
            .timeout(PATIENCE)
            .build();
    service.hold();
    CompletableFuture<HttpResponse<String>> first =
        http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    assertThat(service.awaitEntered()).isTrue();

    HttpResponse<String> refused = http.send(request, HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> health =
        http.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/actuator/health/bulkheads"))
                .timeout(PATIENCE)
                .build(),
            HttpResponse.BodyHandlers.ofString());

    System.out.println(
        "refused on Netty behind a catch-all @ExceptionHandler(Exception.class): /complete -> "
            + refused.statusCode()
            + " "
            + refused.headers().map()
            + " "
            + refused.body());
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow()))
        .isGreaterThanOrEqualTo(1);
    JsonNode problem = JsonMapper.builder().build().readTree(refused.body());
    assertThat(problem.get("status").asInt()).isEqualTo(503);
    assertThat(problem.get("compartment").asString()).isEqualTo("llm");
    assertThat(problem.get("reason").asString()).isEqualTo("queue_full");

    assertThat(health.statusCode()).isEqualTo(200);
    JsonNode bulkheads = JsonMapper.builder().build().readTree(health.body());
    assertThat(bulkheads.get("status").asString()).isEqualTo("UP");
    assertThat(bulkheads.get("details").get("llm").get("inFlight").asInt()).isEqualTo(1);

    service.release();
    assertThat(first.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).body()).isEqualTo("answer");
    assertThat(registry.find("llm").orElseThrow().stats().inFlight()).isZero();
  }
}
