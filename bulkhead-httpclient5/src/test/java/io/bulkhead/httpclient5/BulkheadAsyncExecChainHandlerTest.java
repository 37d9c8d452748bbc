package io.bulkhead.httpclient5;

import static io.bulkhead.httpclient.testing.ClientFailures.answered503WithRetryAfter7;
import static io.bulkhead.httpclient.testing.ClientFailures.failureOf;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.httpclient.CompartmentFullException;
import io.bulkhead.httpclient.RetryAfter;
import io.bulkhead.httpclient.UpstreamRoutes;
import io.bulkhead.httpclient.UpstreamUnavailableException;
import io.bulkhead.httpclient.testing.TestUpstream;
import io.bulkhead.testing.Closer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Future;
import org.apache.hc.client5.http.async.methods.SimpleHttpRequest;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManager;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The async HttpClient 5 edge against a real loopback server and HttpClient's real I/O reactor. */
class BulkheadAsyncExecChainHandlerTest {

  @RegisterExtension final Closer closer = new Closer();

  private CloseableHttpAsyncClient client(BulkheadAsyncExecChainHandler handler) {
    PoolingAsyncClientConnectionManager pool =
        PoolingAsyncClientConnectionManagerBuilder.create().build();
    handler.agree(pool);
    CloseableHttpAsyncClient client =
        handler
            .applyTo(HttpAsyncClients.custom().setConnectionManager(pool).disableAutomaticRetries())
            .build();
    client.start();
    return closer.closeLater(client);
  }

  private static Bulkhead compartment(String name, int limit, int maxQueue) {
    return Bulkhead.builder(name)
        .limit(limit)
        .maxQueue(maxQueue)
        .maxWait(Duration.ofSeconds(30))
        .build();
  }

  private static Future<SimpleHttpResponse> get(
      CloseableHttpAsyncClient client, TestUpstream upstream, String path) {
    SimpleHttpRequest request = SimpleRequestBuilder.get(upstream.uri(path)).build();
    return client.execute(request, null);
  }

  @Test
  void limitQueueAndRefusal_withNoThreadHeldWhileWaiting() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 1);
    CloseableHttpAsyncClient client = client(BulkheadAsyncExecChainHandler.of(llm));

    Future<SimpleHttpResponse> first = get(client, upstream, "/stream");
    upstream.awaitStreaming(1);
    Future<SimpleHttpResponse> queued = get(client, upstream, "/ok");
    await().atMost(30, SECONDS).until(() -> llm.stats().waiting() == 1);

    Throwable refused = failureOf(get(client, upstream, "/ok"));
    assertThat(refused).isInstanceOf(CompartmentFullException.class);
    assertThat(((CompartmentFullException) refused).reason())
        .isEqualTo(BulkheadFullException.Reason.QUEUE_FULL);
    assertThat(upstream.requests()).as("neither the queued nor the refused one was sent").isOne();
    assertThat(llm.stats().inFlight()).as("headers and a first chunk in, body not done").isOne();

    upstream.release(1);
    assertThat(first.get(30, SECONDS).getBodyText()).isEqualTo("first\nrest\n");
    assertThat(queued.get(30, SECONDS).getBodyText()).isEqualTo("ok\n");
    assertThat(llm.stats().inFlight()).isZero();
    assertThat(llm.stats().completed()).isEqualTo(2);
    assertThat(llm.stats().rejected()).isOne();
  }

  @Test
  void aCallerThatAbandonsAStreamedBody_freesTheSlot_andOneThatGivesUpWhileQueuedLeavesTheQueue()
      throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 1);
    CloseableHttpAsyncClient client = client(BulkheadAsyncExecChainHandler.of(llm));

    Future<SimpleHttpResponse> streaming = get(client, upstream, "/stream");
    upstream.awaitStreaming(1);
    Future<SimpleHttpResponse> queued = get(client, upstream, "/ok");
    await().atMost(30, SECONDS).until(() -> llm.stats().waiting() == 1);

    queued.cancel(true);
    await().atMost(30, SECONDS).until(() -> llm.stats().waiting() == 0);
    assertThat(llm.stats().inFlight()).isOne();

    streaming.cancel(true); // mid-body: the exchange is aborted
    await().atMost(30, SECONDS).until(() -> llm.stats().inFlight() == 0);
    assertThat(get(client, upstream, "/ok").get(30, SECONDS).getBodyText()).isEqualTo("ok\n");
    assertThat(upstream.requests()).as("the withdrawn request was never sent").isEqualTo(2);
    assertThat(llm.stats().admitted()).isEqualTo(2);
    assertThat(llm.stats().completed()).isEqualTo(2);
    assertThat(llm.stats().inFlight()).isZero();
    assertThat(streaming.isCancelled()).isTrue();
    try {
      queued.get(30, SECONDS);
    } catch (CancellationException expected) {
      // the caller's own cancellation
    }
  }

  @Test
  void anUpstreams503WithRetryAfter_isATypedExceptionWithItsHint() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 0);
    CloseableHttpAsyncClient client = client(BulkheadAsyncExecChainHandler.of(llm));

    Throwable busy = failureOf(get(client, upstream, "/busy?retry-after=7"));
    assertThat(busy)
        .isInstanceOfSatisfying(
            UpstreamUnavailableException.class,
            answered503WithRetryAfter7(upstream, "/busy?retry-after=7"));
    assertThat(RetryAfter.of(busy)).contains(Duration.ofSeconds(7));
    assertThat(llm.stats().inFlight()).isZero();

    Throwable tooMany = failureOf(get(client, upstream, "/busy?status=429"));
    assertThat(((UpstreamUnavailableException) tooMany).status()).isEqualTo(429);
    assertThat(RetryAfter.of(tooMany)).isEmpty();
    assertThat(get(client, upstream, "/ok").get(30, SECONDS).getBodyText()).isEqualTo("ok\n");
    assertThat(llm.stats().inFlight()).isZero();
  }

  @Test
  void agree_letsEveryAdmittedRequestHaveAConnection() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 6, 0); // more than HttpClient's 5 per route
    CloseableHttpAsyncClient client =
        client(
            BulkheadAsyncExecChainHandler.of(
                UpstreamRoutes.builder().route(upstream.uri("/").toString(), llm).build()));

    List<Future<SimpleHttpResponse>> calls = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      calls.add(get(client, upstream, "/stream"));
    }
    upstream.awaitStreaming(6); // with HttpClient's default pool the sixth would wait for a lease
    assertThat(failureOf(get(client, upstream, "/ok")))
        .isInstanceOf(CompartmentFullException.class);
    upstream.release(6);
    for (Future<SimpleHttpResponse> call : calls) {
      assertThat(call.get(30, SECONDS).getBodyText()).isEqualTo("first\nrest\n");
    }
    assertThat(upstream.maxConcurrent()).isEqualTo(6);
    assertThat(llm.stats().inFlight()).isZero();
  }
}
