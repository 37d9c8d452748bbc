package io.bulkhead.httpclient5;

import static io.bulkhead.httpclient.testing.ClientFailures.answered503WithRetryAfter7;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.httpclient.CompartmentFullException;
import io.bulkhead.httpclient.UpstreamRoutes;
import io.bulkhead.httpclient.UpstreamUnavailableException;
import io.bulkhead.httpclient.testing.TestUpstream;
import io.bulkhead.testing.Closer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.support.ClassicRequestBuilder;
import org.apache.hc.core5.io.CloseMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The classic HttpClient 5 edge against a real loopback server and HttpClient's real pool. */
class BulkheadExecChainHandlerTest {

  @RegisterExtension final Closer closer = new Closer();

  private final ExecutorService callers = Executors.newCachedThreadPool();

  @AfterEach
  void stopCallers() {
    callers.shutdownNow();
  }

  private CloseableHttpClient client(BulkheadExecChainHandler handler) {
    PoolingHttpClientConnectionManager pool =
        PoolingHttpClientConnectionManagerBuilder.create().build();
    handler.agree(pool);
    return closer.closeLater(
        handler
            .applyTo(HttpClients.custom().setConnectionManager(pool).disableAutomaticRetries())
            .build());
  }

  private static Bulkhead compartment(String name, int limit, int maxQueue) {
    return Bulkhead.builder(name)
        .limit(limit)
        .maxQueue(maxQueue)
        .maxWait(Duration.ofSeconds(30))
        .build();
  }

  private static ClassicHttpRequest get(TestUpstream upstream, String path) {
    return ClassicRequestBuilder.get(upstream.uri(path)).build();
  }

  private static ClassicHttpResponse open(CloseableHttpClient client, ClassicHttpRequest request)
      throws Exception {
    return client.executeOpen(null, request, null);
  }

  private CompletableFuture<String> readInBackground(
      CloseableHttpClient client, ClassicHttpRequest request) {
    return CompletableFuture.supplyAsync(
        () -> {
          try (ClassicHttpResponse response = open(client, request)) {
            return EntityUtils.toString(response.getEntity());
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        },
        callers);
  }

  @Test
  void limitQueueAndRefusal_theQueuedRequestGoesOnceTheFirstBodyIsRead() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 1);
    CloseableHttpClient client = client(BulkheadExecChainHandler.of(llm));

    CompletableFuture<String> first = readInBackground(client, get(upstream, "/stream"));
    upstream.awaitStreaming(1);
    CompletableFuture<String> queued = readInBackground(client, get(upstream, "/ok"));
    await().atMost(30, SECONDS).until(() -> llm.stats().waiting() == 1);

    assertThatThrownBy(() -> open(client, get(upstream, "/ok")))
        .isInstanceOfSatisfying(
            CompartmentFullException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(BulkheadFullException.Reason.QUEUE_FULL);
              assertThat(e).hasMessageStartingWith("bulkhead 'llm' is full (QUEUE_FULL)");
            });
    assertThat(upstream.requests()).as("neither the queued nor the refused one was sent").isOne();

    upstream.release(1);
    assertThat(first.get(30, SECONDS)).isEqualTo("first\nrest\n");
    assertThat(queued.get(30, SECONDS)).isEqualTo("ok\n");
    assertThat(llm.stats().inFlight()).isZero();
    assertThat(llm.stats().completed()).isEqualTo(2);
    assertThat(llm.stats().rejected()).isOne();
  }

  @Test
  void theSlotIsHeldUntilTheBodyIsReadToItsEnd_notJustTheHeaders() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 0);
    CloseableHttpClient client = client(BulkheadExecChainHandler.of(llm));

    ClassicHttpResponse response = open(client, get(upstream, "/ok"));
    assertThat(response.getCode()).isEqualTo(200);
    assertThat(llm.stats().inFlight()).as("headers in hand, body unread").isOne();
    assertThat(llm.tryAcquire()).isEmpty();

    byte[] body = response.getEntity().getContent().readAllBytes(); // to its end, not closed
    assertThat(new String(body, StandardCharsets.UTF_8)).isEqualTo("ok\n");
    assertThat(llm.stats().inFlight()).isZero();
    response.close();
    assertThat(llm.stats().completed()).as("freed once").isOne();
  }

  @Test
  void aClientThatAbandonsAStreamedBody_freesTheSlotWhenItClosesIt() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 0);
    CloseableHttpClient client = client(BulkheadExecChainHandler.of(llm));

    ClassicHttpResponse streaming = open(client, get(upstream, "/stream"));
    BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(streaming.getEntity().getContent(), StandardCharsets.UTF_8));
    assertThat(lines.readLine()).isEqualTo("first");
    assertThat(llm.stats().inFlight()).as("an unclosed body holds the slot").isOne();
    assertThatThrownBy(() -> open(client, get(upstream, "/ok")))
        .isInstanceOf(CompartmentFullException.class);

    ((org.apache.hc.core5.io.ModalCloseable) streaming).close(CloseMode.IMMEDIATE);
    assertThat(llm.stats().inFlight()).isZero();
    try (ClassicHttpResponse next = open(client, get(upstream, "/ok"))) {
      assertThat(EntityUtils.toString(next.getEntity())).isEqualTo("ok\n");
    }
    assertThat(llm.stats().completed()).isEqualTo(2);
  }

  @Test
  void anUpstreams503WithRetryAfter_isATypedExceptionWithItsHint() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 0);
    CloseableHttpClient client = client(BulkheadExecChainHandler.of(llm));

    assertThatThrownBy(() -> open(client, get(upstream, "/busy?retry-after=7")))
        .isInstanceOfSatisfying(
            UpstreamUnavailableException.class,
            answered503WithRetryAfter7(upstream, "/busy?retry-after=7"));
    assertThat(llm.stats().inFlight()).isZero();
    try (ClassicHttpResponse next = open(client, get(upstream, "/ok"))) {
      assertThat(EntityUtils.toString(next.getEntity())).isEqualTo("ok\n");
    }
  }

  @Test
  void agree_letsEveryAdmittedRequestHaveAConnection() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 6, 0); // more than HttpClient's 5 per route
    CloseableHttpClient client =
        client(
            BulkheadExecChainHandler.of(
                UpstreamRoutes.builder().route(upstream.uri("/").toString(), llm).build()));

    List<CompletableFuture<String>> calls = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      calls.add(readInBackground(client, get(upstream, "/stream")));
    }
    upstream.awaitStreaming(6); // with HttpClient's default pool the sixth would wait for a lease
    upstream.release(6);
    for (CompletableFuture<String> call : calls) {
      assertThat(call.get(30, SECONDS)).isEqualTo("first\nrest\n");
    }
    assertThat(upstream.maxConcurrent()).isEqualTo(6);
    assertThat(llm.stats().inFlight()).isZero();
  }
}
