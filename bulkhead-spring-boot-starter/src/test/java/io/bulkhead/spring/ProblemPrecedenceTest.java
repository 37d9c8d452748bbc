package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.BulkheadFullException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * An application's own handler for {@code BulkheadFullException} answers instead of the starter's,
 * on Spring MVC (Tomcat) and WebFlux (Netty), even beside a catch-all handler; the catch-all alone
 * does not (WebIntegrationTest and WebFluxIntegrationTest have one).
 */
class ProblemPrecedenceTest {

  private static final Duration PATIENCE = Duration.ofSeconds(30);

  /** Refuses every request, as a full compartment would. */
  @RestController
  static class Refusing {
    @GetMapping("/chat")
    String chat() {
      throw new BulkheadFullException(
          "llm", BulkheadFullException.Reason.QUEUE_FULL, Duration.ofSeconds(2));
    }
  }

  /** The application's handlers: a catch-all, and one for refusals that says 429. */
  @RestControllerAdvice
  static class Handlers {
    @ExceptionHandler(Exception.class)
    ResponseEntity<Map<String, String>> any(Exception e) {
      return ResponseEntity.internalServerError().body(Map.of("error", "any"));
    }

    @ExceptionHandler
    ResponseEntity<Map<String, String>> busy(BulkheadFullException e) {
      return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
          .body(Map.of("busy", e.bulkheadName()));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  @Import({Refusing.class, Handlers.class})
  static class App {}

  @Test
  void onSpringMvcTheApplicationsOwnHandlerAnswers() throws Exception {
    assertOwnHandlerAnswers(
        WebApplicationType.SERVLET, org.springframework.boot.tomcat.TomcatWebServer.class);
  }

  @Test
  void onWebFluxTheApplicationsOwnHandlerAnswers() throws Exception {
    assertOwnHandlerAnswers(
        WebApplicationType.REACTIVE, org.springframework.boot.reactor.netty.NettyWebServer.class);
  }

  private static void assertOwnHandlerAnswers(WebApplicationType type, Class<?> server)
      throws Exception {
    try (ConfigurableApplicationContext context =
        new SpringApplicationBuilder(App.class)
            .web(type)
            .properties("server.port=0", "bulkhead.compartments.llm.limit=1")
            .run()) {
      assertThat(((WebServerApplicationContext) context).getWebServer()).isInstanceOf(server);
      int port = ((WebServerApplicationContext) context).getWebServer().getPort();
      HttpResponse<String> answer =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/chat"))
                      .timeout(PATIENCE)
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(answer.statusCode()).isEqualTo(429);
      assertThat(answer.body()).isEqualTo("{\"busy\":\"llm\"}");
      assertThat(answer.headers().firstValue("Retry-After")).isEmpty();
    }
  }
}
