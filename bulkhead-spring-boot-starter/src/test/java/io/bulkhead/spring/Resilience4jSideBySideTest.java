package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * One application with {@code resilience4j-spring-boot4} and this starter: it starts (no bean name
 * or endpoint id is claimed twice), each library's annotation guards its own method on the same
 * bean, and both endpoints and both sets of meters answer. Tagged: it runs in a surefire execution
 * of its own, the only one with Resilience4j on the class path.
 */
@Tag("resilience4j")
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(
    classes = Resilience4jSideBySideTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "bulkhead.compartments.llm.limit=1",
      "resilience4j.bulkhead.instances.partner.max-concurrent-calls=1",
      "resilience4j.bulkhead.instances.partner.max-wait-duration=0",
      "management.endpoints.web.exposure.include=bulkheads,compartments,prometheus"
    })
class Resilience4jSideBySideTest {

  private static final Duration PATIENCE = Duration.ofSeconds(30);

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  @Import(Calls.class)
  static class App {}

  /** One method per library, each held by the test until it releases them. */
  static class Calls {
    private volatile CountDownLatch entered = new CountDownLatch(0);
    private volatile CountDownLatch release = new CountDownLatch(0);

    public void hold(int calls) {
      entered = new CountDownLatch(calls);
      release = new CountDownLatch(1);
    }

    public boolean awaitEntered() throws InterruptedException {
      return entered.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    }

    public void releaseAll() {
      release.countDown();
    }

    @Bulkhead("llm")
    public String ours() throws InterruptedException {
      entered.countDown();
      release.await();
      return "ours";
    }

    @io.github.resilience4j.bulkhead.annotation.Bulkhead(name = "partner")
    public String theirs() throws InterruptedException {
      entered.countDown();
      release.await();
      return "theirs";
    }
  }

  @LocalServerPort int port;
  @Autowired Calls calls;
  @Autowired ApplicationContext context;

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void bothLibrariesGuardTheirMethodsAndAnswerOnTheirOwnEndpointsAndMeters(CapturedOutput output)
      throws Exception {
    System.out.println(
        "side by side: "
            + output
                .getOut()
                .lines()
                .filter(line -> line.contains("Started ") || line.contains("Exposing "))
                .toList());
    assertThat(context.getBean("bulkheadRegistry"))
        .isInstanceOf(io.github.resilience4j.bulkhead.BulkheadRegistry.class);
    assertThat(context.getBean("compartmentRegistry"))
        .isInstanceOf(io.bulkhead.BulkheadRegistry.class);

    calls.hold(2);
    CompletableFuture<String> ours = CompletableFuture.supplyAsync(this::ours);
    CompletableFuture<String> theirs = CompletableFuture.supplyAsync(this::theirs);
    try {
      assertThat(calls.awaitEntered()).isTrue();
      assertThatThrownBy(calls::ours)
          .isInstanceOf(io.bulkhead.BulkheadFullException.class)
          .hasMessageStartingWith("bulkhead 'llm' is full (QUEUE_FULL)");
      assertThatThrownBy(calls::theirs)
          .isInstanceOf(io.github.resilience4j.bulkhead.BulkheadFullException.class)
          .hasMessageContaining("'partner' is full");

      HttpResponse<String> resilience4j = get("/actuator/bulkheads");
      HttpResponse<String> compartments = get("/actuator/compartments");
      System.out.println("/actuator/bulkheads: " + firstLine(resilience4j.body()));
      System.out.println("/actuator/compartments: " + firstLine(compartments.body()));
      assertThat(resilience4j.statusCode()).isEqualTo(200);
      assertThat(resilience4j.body()).contains("\"partner\"").doesNotContain("\"llm\"");
      assertThat(compartments.statusCode()).isEqualTo(200);
      assertThat(compartments.body()).contains("\"name\":\"llm\"").doesNotContain("partner");

      String prometheus = get("/actuator/prometheus").body();
      assertThat(prometheus)
          .contains("bulkhead_in_flight{name=\"llm\"} 1.0")
          .contains("bulkhead_rejected_total{name=\"llm\",reason=\"queue_full\"} 1.0")
          .contains("resilience4j_bulkhead_available_concurrent_calls{name=\"partner\"} 0.0")
          .contains("resilience4j_bulkhead_max_allowed_concurrent_calls{name=\"partner\"} 1.0");
    } finally {
      calls.releaseAll();
    }
    assertThat(ours.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo("ours");
    assertThat(theirs.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo("theirs");
  }

  private String ours() {
    try {
      return calls.ours();
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private String theirs() {
    try {
      return calls.theirs();
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private HttpResponse<String> get(String path) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(PATIENCE)
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static String firstLine(String body) {
    String line = body.lines().findFirst().orElse("");
    return line.length() > 160 ? line.substring(0, 160) + "..." : line;
  }
}
