package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadListener;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * The auto-configured {@code WebClient} (Reactor Netty) against a local upstream whose {@code
 * /slow} requests wait for the test: the upstream's exchanges enter its compartment, and the slot
 * is held until the response body ends.
 */
class WebClientFilterTest {

  private static final Duration PATIENCE = Duration.ofSeconds(30);

  private final ExecutorService upstreamThreads = Executors.newCachedThreadPool();
  private HttpServer upstream;
  private volatile CountDownLatch arrived = new CountDownLatch(1);
  private volatile CountDownLatch firstChunkSent = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);

  @BeforeEach
  void startUpstream() throws IOException {
    upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    upstream.setExecutor(upstreamThreads);
    // /slow/**: waits for the test before answering. /stream/**: sends one line, waits for the
    // test,
    // then sends the last. Anything else answers at once.
    upstream.createContext(
        "/",
        exchange -> {
          String path = exchange.getRequestURI().getPath();
          try (OutputStream out = exchange.getResponseBody()) {
            if (path.startsWith("/slow/")) {
              arrived.countDown();
              await(release);
            }
            exchange.sendResponseHeaders(
                200, 0); // chunked: the body's length is not known up front
            out.write(("upstream " + path + "\n").getBytes(StandardCharsets.UTF_8));
            if (path.startsWith("/stream/")) {
              out.flush();
              firstChunkSent.countDown();
              await(release);
              out.write("end\n".getBytes(StandardCharsets.UTF_8));
            }
          }
        });
    upstream.start();
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @AfterEach
  void stopUpstream() {
    release.countDown();
    upstream.stop(0);
    upstreamThreads.shutdownNow();
  }

  private ApplicationContextRunner runner(String base) {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                BulkheadAutoConfiguration.class,
                BulkheadWebClientAutoConfiguration.class,
                WebClientAutoConfiguration.class))
        .withPropertyValues(
            "bulkhead.compartments.upstream-api.limit=1",
            "bulkhead.compartments.upstream-api.upstream=" + url(base));
  }

  private String url(String path) {
    return "http://127.0.0.1:" + upstream.getAddress().getPort() + path;
  }

  /** Counts down when the compartment frees a slot: the release can run on a Netty thread. */
  private static CountDownLatch released(BulkheadRegistry registry) {
    CountDownLatch released = new CountDownLatch(1);
    registry
        .find("upstream-api")
        .orElseThrow()
        .addListener(
            new BulkheadListener() {
              @Override
              public void onReleased(Compartment compartment, long heldNanos) {
                released.countDown();
              }
            });
    return released;
  }

  private static int inFlight(BulkheadRegistry registry) {
    return registry.find("upstream-api").orElseThrow().stats().inFlight();
  }

  @Test
  void aFullCompartmentRefusesTheUpstreamsSecondExchangeAndLeavesOtherPathsAlone() {
    runner("/slow")
        .run(
            context -> {
              BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);
              WebClient client = context.getBean(WebClient.Builder.class).baseUrl(url("")).build();
              CountDownLatch released = released(registry);

              CompletableFuture<String> first =
                  client.get().uri("/slow/one").retrieve().bodyToMono(String.class).toFuture();
              assertThat(arrived.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
              assertThat(inFlight(registry)).isEqualTo(1);

              assertThatThrownBy(
                      () ->
                          client
                              .get()
                              .uri("/slow/two")
                              .retrieve()
                              .bodyToMono(String.class)
                              .block(PATIENCE))
                  .isInstanceOf(BulkheadFullException.class)
                  .hasMessageStartingWith("bulkhead 'upstream-api' is full (QUEUE_FULL)");
              // Not under the upstream's base path: not in its compartment, so not refused.
              assertThat(
                      client.get().uri("/fast").retrieve().bodyToMono(String.class).block(PATIENCE))
                  .isEqualTo("upstream /fast\n");

              release.countDown();
              assertThat(first.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                  .isEqualTo("upstream /slow/one\n");
              assertThat(released.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
              assertThat(inFlight(registry)).isZero();
              assertThat(
                      client
                          .get()
                          .uri("/slow/three")
                          .retrieve()
                          .bodyToMono(String.class)
                          .block(PATIENCE))
                  .isEqualTo("upstream /slow/three\n");
            });
  }

  @Test
  void theSlotIsHeldUntilTheResponseBodyEndsNotJustItsHeaders() {
    runner("/stream")
        .run(
            context -> {
              BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);
              WebClient client = context.getBean(WebClient.Builder.class).baseUrl(url("")).build();
              CountDownLatch released = released(registry);
              CountDownLatch firstLineRead = new CountDownLatch(1);

              CompletableFuture<List<String>> lines =
                  client
                      .get()
                      .uri("/stream/tokens")
                      .retrieve()
                      .bodyToFlux(String.class)
                      .doOnNext(line -> firstLineRead.countDown())
                      .collectList()
                      .toFuture();
              assertThat(firstLineRead.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
              // The status and the first line are in; the body is not over, so the slot is still
              // taken.
              assertThat(inFlight(registry)).isEqualTo(1);
              assertThatThrownBy(
                      () ->
                          client
                              .get()
                              .uri("/stream/other")
                              .retrieve()
                              .bodyToMono(String.class)
                              .block(PATIENCE))
                  .isInstanceOf(BulkheadFullException.class);

              release.countDown();
              assertThat(lines.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                  .containsExactly("upstream /stream/tokens", "end");
              assertThat(released.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
              assertThat(inFlight(registry)).isZero();
            });
  }

  @Test
  void aResponseWhoseBodyIsReleasedUnreadFreesTheSlot() {
    runner("/slow")
        .run(
            context -> {
              BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);
              WebClient client = context.getBean(WebClient.Builder.class).baseUrl(url("")).build();
              CountDownLatch released = released(registry);
              release.countDown(); // the upstream answers at once

              // exchangeToMono releases the body the function did not read.
              assertThat(
                      client
                          .get()
                          .uri("/slow/status")
                          .exchangeToMono(response -> Mono.just(response.statusCode().value()))
                          .block(PATIENCE))
                  .isEqualTo(200);
              assertThat(released.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
              assertThat(inFlight(registry)).isZero();
            });
  }

  @Test
  void aCallerThatCancelsBeforeTheResponseFreesTheSlot() {
    runner("/slow")
        .run(
            context -> {
              BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);
              WebClient client = context.getBean(WebClient.Builder.class).baseUrl(url("")).build();
              CountDownLatch released = released(registry);

              var pending =
                  client
                      .get()
                      .uri("/slow/abandoned")
                      .retrieve()
                      .bodyToMono(String.class)
                      .subscribe();
              assertThat(arrived.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
              assertThat(inFlight(registry)).isEqualTo(1);
              pending.dispose();
              assertThat(released.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
              assertThat(inFlight(registry)).isZero();
            });
  }
}
