package io.bulkhead.okhttp;

import static io.bulkhead.httpclient.testing.ClientFailures.answered503WithRetryAfter7;
import static io.bulkhead.httpclient.testing.ClientFailures.failureOf;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.httpclient.CompartmentFullException;
import io.bulkhead.httpclient.RetryAfter;
import io.bulkhead.httpclient.UpstreamRoutes;
import io.bulkhead.httpclient.UpstreamUnavailableException;
import io.bulkhead.httpclient.testing.TestUpstream;
import io.bulkhead.testing.Closer;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The OkHttp edge against a real loopback server, with OkHttp's real dispatcher and pool. */
class BulkheadInterceptorTest {

  @RegisterExtension final Closer closer = new Closer();

  private final List<OkHttpClient> clients = new ArrayList<>();

  @AfterEach
  void shutDownClients() {
    for (OkHttpClient client : clients) {
      client.dispatcher().executorService().shutdownNow();
      client.connectionPool().evictAll();
    }
  }

  private OkHttpClient client(BulkheadInterceptor interceptor) {
    OkHttpClient client = interceptor.applyTo(new OkHttpClient.Builder()).build();
    clients.add(client);
    return client;
  }

  private static Bulkhead compartment(String name, int limit, int maxQueue) {
    return Bulkhead.builder(name)
        .limit(limit)
        .maxQueue(maxQueue)
        .maxWait(Duration.ofSeconds(30))
        .build();
  }

  private static Request get(TestUpstream upstream, String path) {
    return new Request.Builder().url(upstream.uri(path).toString()).build();
  }

  private static CompletableFuture<Response> enqueue(Call call) {
    CompletableFuture<Response> answer = new CompletableFuture<>();
    call.enqueue(
        new Callback() {
          @Override
          public void onFailure(Call call, IOException e) {
            answer.completeExceptionally(e);
          }

          @Override
          public void onResponse(Call call, Response response) {
            answer.complete(response);
          }
        });
    return answer;
  }

  @Test
  void limitQueueAndRefusal_theQueuedCallGoesOnceTheFirstBodyIsClosed() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 1);
    OkHttpClient client = client(BulkheadInterceptor.of(llm));

    Response first = client.newCall(get(upstream, "/stream")).execute();
    upstream.awaitStreaming(1);
    CompletableFuture<Response> queued = enqueue(client.newCall(get(upstream, "/ok")));
    await().atMost(30, SECONDS).until(() -> llm.stats().waiting() == 1);

    assertThatThrownBy(() -> client.newCall(get(upstream, "/ok")).execute())
        .isInstanceOfSatisfying(
            CompartmentFullException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(BulkheadFullException.Reason.QUEUE_FULL);
              assertThat(e.bulkheadName()).isEqualTo("llm");
              assertThat(RetryAfter.of(e)).contains(e.retryAfter());
              assertThat(e).hasMessageStartingWith("bulkhead 'llm' is full (QUEUE_FULL)");
            });
    assertThat(upstream.requests()).as("neither the queued nor the refused call was sent").isOne();
    assertThat(queued).isNotDone();

    first.close(); // abandons the streamed body after its headers
    try (Response second = queued.get(30, SECONDS)) {
      assertThat(second.body().string()).isEqualTo("ok\n");
    }
    assertThat(llm.stats().inFlight()).isZero();
    assertThat(llm.stats().admitted()).isEqualTo(2);
    assertThat(llm.stats().completed()).isEqualTo(2);
    assertThat(llm.stats().rejected()).isOne();
  }

  @Test
  void theSlotIsHeldUntilTheBodyIsReadToItsEnd_notJustTheHeaders() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 0);
    OkHttpClient client = client(BulkheadInterceptor.of(llm));

    Response response = client.newCall(get(upstream, "/ok")).execute();
    assertThat(response.code()).isEqualTo(200);
    assertThat(llm.stats().inFlight()).as("headers in hand, body unread").isOne();
    assertThat(llm.tryAcquire()).isEmpty();

    assertThat(response.body().source().readUtf8()).isEqualTo("ok\n"); // to its end, not closed
    assertThat(llm.stats().inFlight()).isZero();
    response.close();
    assertThat(llm.stats().completed()).as("freed once").isOne();
  }

  @Test
  void aClientThatAbandonsAStreamedBody_freesTheSlotWhenItClosesIt() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 0);
    OkHttpClient client = client(BulkheadInterceptor.of(llm));

    Response streaming = client.newCall(get(upstream, "/stream")).execute();
    assertThat(streaming.body().source().readUtf8Line()).isEqualTo("first");
    assertThat(llm.stats().inFlight()).as("an unclosed body holds the slot").isOne();
    assertThatThrownBy(() -> client.newCall(get(upstream, "/ok")).execute())
        .isInstanceOf(CompartmentFullException.class);

    streaming.close(); // mid-stream: the rest never comes
    assertThat(llm.stats().inFlight()).isZero();
    try (Response next = client.newCall(get(upstream, "/ok")).execute()) {
      assertThat(next.body().string()).isEqualTo("ok\n");
    }
    assertThat(llm.stats().completed()).isEqualTo(2);
  }

  @Test
  void anUpstreams503WithRetryAfter_isATypedExceptionWithItsHint() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 0);
    OkHttpClient client = client(BulkheadInterceptor.of(llm));

    assertThatThrownBy(() -> client.newCall(get(upstream, "/busy?retry-after=7")).execute())
        .isInstanceOfSatisfying(
            UpstreamUnavailableException.class,
            answered503WithRetryAfter7(upstream, "/busy?retry-after=7"));
    assertThat(llm.stats().inFlight()).isZero();

    Instant inAnHour = Instant.now().plusSeconds(3600);
    String date = DateTimeFormatter.RFC_1123_DATE_TIME.format(inAnHour.atOffset(ZoneOffset.UTC));
    Throwable async =
        failureOf(
            enqueue(
                client.newCall(
                    get(upstream, "/busy?status=429&retry-after=" + date.replace(" ", "%20")))));
    assertThat(async).isInstanceOf(UpstreamUnavailableException.class);
    assertThat(((UpstreamUnavailableException) async).status()).isEqualTo(429);
    assertThat(RetryAfter.of(async).orElseThrow())
        .isBetween(Duration.ofSeconds(3500), Duration.ofSeconds(3600));
    assertThat(llm.stats().inFlight()).isZero();
    assertThat(llm.stats().completed()).isEqualTo(2);
  }

  @Test
  void applyTo_letsEveryAdmittedCallReachTheUpstream_andRefusesTheNextFast() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 6, 0); // more than OkHttp's 5 per host
    OkHttpClient client =
        client(
            BulkheadInterceptor.of(
                UpstreamRoutes.builder().route(upstream.uri("/").toString(), llm).build()));
    assertThat(client.dispatcher().getMaxRequestsPerHost()).isEqualTo(12);

    List<CompletableFuture<Response>> calls = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      calls.add(enqueue(client.newCall(get(upstream, "/stream"))));
    }
    upstream.awaitStreaming(6); // with OkHttp's default dispatcher the sixth would wait in it
    assertThat(failureOf(enqueue(client.newCall(get(upstream, "/ok")))))
        .isInstanceOf(CompartmentFullException.class);

    upstream.release(6);
    for (CompletableFuture<Response> call : calls) {
      try (Response response = call.get(30, SECONDS)) {
        assertThat(response.body().string()).isEqualTo("first\nrest\n");
      }
    }
    assertThat(llm.stats().inFlight()).isZero();
    assertThat(upstream.maxConcurrent()).isEqualTo(6);
  }

  @Test
  void aRequestNoRouteMatches_passesUntouched() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    Bulkhead llm = compartment("llm", 1, 0);
    OkHttpClient client =
        client(
            BulkheadInterceptor.of(
                UpstreamRoutes.builder().route("https://llm.internal/v1", llm).build()));

    try (Response busy = client.newCall(get(upstream, "/busy?retry-after=7")).execute()) {
      assertThat(busy.code()).as("not guarded: the answer as it is").isEqualTo(503);
    }
    assertThat(llm.stats().admitted()).isZero();
  }
}
