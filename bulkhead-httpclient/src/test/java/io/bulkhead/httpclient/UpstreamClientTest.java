package io.bulkhead.httpclient;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadListener;
import io.bulkhead.Compartment;
import io.bulkhead.testing.Closer;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class UpstreamClientTest {

  @RegisterExtension final Closer closer = new Closer();

  private static HttpRequest get(URI uri) {
    return HttpRequest.newBuilder(uri).build();
  }

  private static Throwable failureOf(CompletableFuture<?> f) {
    try {
      f.get(30, SECONDS);
      throw new AssertionError("expected the call to fail, but it answered");
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (CancellationException e) {
      return e;
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void deadline_abortsTheCall_freesTheSlot_andReportsATimeout() throws Exception {
    CountingUpstream upstream = closer.closeLater(CountingUpstream.silent());
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofMillis(300)).build());

    long before = System.nanoTime();
    CompletableFuture<HttpResponse<String>> call =
        client.sendAsync(get(upstream.uri("/complete")), BodyHandlers.ofString());
    await().atMost(5, SECONDS).until(() -> llm.stats().inFlight() == 1);
    Throwable failure = failureOf(call);
    long tookMillis = (System.nanoTime() - before) / 1_000_000;

    assertThat(failure)
        .isInstanceOf(UpstreamTimeoutException.class)
        .hasMessageContaining("'llm'")
        .hasMessageContaining("300ms deadline");
    assertThat(((UpstreamTimeoutException) failure).upstream()).isEqualTo("llm");
    // Not before the deadline, less the HttpClient timer's rounding (a loaded machine only delays
    // it).
    assertThat(tookMillis).isGreaterThanOrEqualTo(250L);
    assertThat(llm.stats().inFlight()).isZero(); // freed by the time the caller hears of it
    // The connection was closed before the slot was freed: the upstream sees it gone.
    await().atMost(5, SECONDS).until(() -> upstream.openNow() == 0);
    assertThat(llm.tryAcquire()).isPresent(); // a new call could have the slot
  }

  @Test
  void aCallersDependentThatBlocks_doesNotDelayAnotherCallsDeadline() throws Exception {
    CountingUpstream upstream = closer.closeLater(CountingUpstream.silent());
    Bulkhead llm = Bulkhead.builder("llm").limit(2).build();
    Duration deadline = Duration.ofMillis(200);
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(deadline).build());
    java.util.concurrent.CountDownLatch blocker = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicReference<String> where =
        new java.util.concurrent.atomic.AtomicReference<>();
    try {
      client
          .sendAsync(get(upstream.uri("/first")), BodyHandlers.ofString())
          .whenComplete(
              (answer, failure) -> {
                where.set(Thread.currentThread().getName());
                entered.countDown();
                try {
                  blocker.await(); // held until the test ends
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      assertThat(entered.await(30, SECONDS)).as("the first call's deadline passed").isTrue();

      long before = System.nanoTime();
      CompletableFuture<HttpResponse<String>> second =
          client.sendAsync(get(upstream.uri("/second")), BodyHandlers.ofString());
      assertThat(failureOf(second)).isInstanceOf(UpstreamTimeoutException.class);
      System.out.printf(
          "D4: the second call's %d ms deadline fired after %d ms while the first"
              + " call's whenComplete was blocked%n",
          deadline.toMillis(), (System.nanoTime() - before) / 1_000_000);
      assertThat(where.get())
          .as("the thread that ran the caller's dependent")
          .doesNotContain("deadlines");
    } finally {
      blocker.countDown();
    }
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.EnumSource(MalformedUpstream.Garbage.class)
  void aMalformedResponse_closesItsConnection_beforeTheSlotIsFreed(
      MalformedUpstream.Garbage garbage) throws Exception {
    MalformedUpstream upstream = closer.closeLater(new MalformedUpstream(garbage));
    Bulkhead llm =
        Bulkhead.builder("llm").limit(2).maxQueue(20).maxWait(Duration.ofSeconds(60)).build();
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofSeconds(30)).build());

    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      calls.add(client.sendAsync(get(upstream.uri()), BodyHandlers.ofString()));
    }
    for (CompletableFuture<HttpResponse<String>> call : calls) {
      assertThat(failureOf(call))
          .isInstanceOf(UpstreamException.class)
          .hasMessageContaining("'llm'");
    }
    assertThat(llm.stats().inFlight()).isZero();
    assertThat(upstream.accepted()).isEqualTo(20); // a failed connection is never reused
    // Every connection was closed by the client: the upstream reads end of stream on each.
    await().atMost(10, SECONDS).untilAsserted(() -> assertThat(upstream.openNow()).isZero());
  }

  @Test
  void connectionsNeverExceedTheLimit_answersReuseThem() throws Exception {
    CountingUpstream upstream =
        closer.closeLater(CountingUpstream.answeringAfter(Duration.ofMillis(20), 200));
    Bulkhead llm =
        Bulkhead.builder("llm").limit(4).maxQueue(200).maxWait(Duration.ofSeconds(60)).build();
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofSeconds(30)).build());

    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      calls.add(client.sendAsync(get(upstream.uri("/complete?i=" + i)), BodyHandlers.ofString()));
    }
    for (CompletableFuture<HttpResponse<String>> call : calls) {
      assertThat(call.get(60, SECONDS).statusCode()).isEqualTo(200);
    }

    assertThat(upstream.requests()).isEqualTo(60);
    assertThat(upstream.maxOpen()).isLessThanOrEqualTo(4);
    // Connections were reused rather than opened per call: never more than the limit, ever.
    assertThat(upstream.totalOpened()).isLessThanOrEqualTo(4);
  }

  @Test
  void connectionsNeverExceedTheLimit_evenWhenEveryCallTimesOut() throws Exception {
    // The upstream never answers: every call hits its deadline, its connection is closed, and the
    // next waiter opens a new one. Two checks that a slot is freed only after its connection
    // closed:
    // at the upstream, no accept ever finds more than the limit open; and at the very moment a
    // waiter
    // is handed a slot (before its request is sent), the upstream finds at most limit - 1
    // connections
    // open, because the one whose slot it took is already closed.
    CountingUpstream upstream = closer.closeLater(CountingUpstream.silent());
    List<Integer> openAtHandOff = new CopyOnWriteArrayList<>();
    Bulkhead llm =
        Bulkhead.builder("llm")
            .limit(3)
            .maxQueue(100)
            .maxWait(Duration.ofSeconds(60))
            .listener(
                new BulkheadListener() {
                  @Override
                  public void onAdmitted(Compartment bulkhead, long waitedNanos) {
                    if (waitedNanos > 0) {
                      try {
                        openAtHandOff.add(upstream.probe());
                      } catch (Exception e) {
                        throw new IllegalStateException(e);
                      }
                    }
                  }
                })
            .build();
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofMillis(150)).build());

    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < 18; i++) {
      calls.add(client.sendAsync(get(upstream.uri("/complete?i=" + i)), BodyHandlers.ofString()));
    }
    for (CompletableFuture<HttpResponse<String>> call : calls) {
      assertThat(failureOf(call)).isInstanceOf(UpstreamTimeoutException.class);
    }

    assertThat(upstream.totalOpened()).isEqualTo(18); // each aborted call's connection was closed
    assertThat(upstream.maxOpen()).isLessThanOrEqualTo(3);
    assertThat(openAtHandOff)
        .hasSize(15)
        .allSatisfy(open -> assertThat(open).isLessThanOrEqualTo(2));
    assertThat(llm.stats().listenerFailures()).isZero();
    await().atMost(5, SECONDS).until(() -> upstream.openNow() == 0);
    assertThat(llm.stats().inFlight()).isZero();
  }

  @Test
  void connectionsNeverExceedTheLimit_withAnswersAndTimeoutsMixed() throws Exception {
    // Answers after 60 ms; every third caller gives up at once, some while running (connection
    // aborted), some while waiting (withdrawn). The answered ones reuse connections, the aborted
    // ones
    // are replaced: the count at the upstream must still never pass the limit.
    CountingUpstream upstream =
        closer.closeLater(CountingUpstream.answeringAfter(Duration.ofMillis(60), 200));
    Bulkhead llm =
        Bulkhead.builder("llm").limit(2).maxQueue(100).maxWait(Duration.ofSeconds(60)).build();
    UpstreamClient fast =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofSeconds(20)).build());

    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      CompletableFuture<HttpResponse<String>> call =
          fast.sendAsync(get(upstream.uri("/c?i=" + i)), BodyHandlers.ofString());
      if (i % 3 == 0) {
        call.cancel(true); // callers that give up, waiting or running
      }
      calls.add(call);
    }
    int answered = 0;
    for (CompletableFuture<HttpResponse<String>> call : calls) {
      try {
        call.get(60, SECONDS);
        answered++;
      } catch (CancellationException expected) {
        // cancelled by the caller
      }
    }

    assertThat(answered).isEqualTo(20);
    assertThat(upstream.maxOpen()).isLessThanOrEqualTo(2);
    await().atMost(5, SECONDS).until(() -> llm.stats().inFlight() == 0);
  }

  @Test
  void fullCompartment_failsFast_withBulkheadFullException_andNeverCallsTheUpstream()
      throws Exception {
    CountingUpstream upstream = closer.closeLater(CountingUpstream.silent());
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofSeconds(30)).build());
    CompletableFuture<HttpResponse<String>> holding =
        client.sendAsync(get(upstream.uri("/a")), BodyHandlers.ofString());
    await().atMost(5, SECONDS).until(() -> upstream.requests() == 1);

    Throwable refused =
        failureOf(client.sendAsync(get(upstream.uri("/b")), BodyHandlers.ofString()));

    assertThat(refused).isInstanceOf(BulkheadFullException.class);
    assertThat(((BulkheadFullException) refused).bulkheadName()).isEqualTo("llm");
    assertThat(upstream.requests()).isEqualTo(1);
    assertThat(upstream.totalOpened()).isEqualTo(1);
    holding.cancel(true);
  }

  @Test
  void upstreamDown_failsWithUpstreamException_notATimeout() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    Bulkhead llm = Bulkhead.builder("llm").limit(2).build();
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofSeconds(30)).build());

    Throwable failure =
        failureOf(
            client.sendAsync(
                get(URI.create("http://127.0.0.1:" + closedPort + "/complete")),
                BodyHandlers.ofString()));

    assertThat(failure)
        .isExactlyInstanceOf(UpstreamException.class)
        .hasMessageContaining("'llm' failed on GET http://127.0.0.1:" + closedPort);
    assertThat(failure).hasCauseInstanceOf(ConnectException.class);
    assertThat(llm.stats().inFlight()).isZero();
  }

  @Test
  void anErrorStatus_isAResponse_notAnException() throws Exception {
    CountingUpstream upstream =
        closer.closeLater(CountingUpstream.answeringAfter(Duration.ZERO, 500));
    UpstreamClient client =
        closer.closeLater(
            UpstreamClient.builder(Bulkhead.builder("llm").limit(1).build())
                .deadline(Duration.ofSeconds(30))
                .build());

    HttpResponse<String> answer = client.send(get(upstream.uri("/x")), BodyHandlers.ofString());

    assertThat(answer.statusCode()).isEqualTo(500);
    assertThat(answer.body()).isEqualTo("ok\n");
  }

  @Test
  void send_throwsTheTypedExceptions() throws Exception {
    CountingUpstream upstream = closer.closeLater(CountingUpstream.silent());
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofMillis(200)).build());

    assertThatThrownBy(() -> client.send(get(upstream.uri("/a")), BodyHandlers.ofString()))
        .isInstanceOf(UpstreamTimeoutException.class);
    CompletableFuture<HttpResponse<String>> holding =
        client.sendAsync(get(upstream.uri("/b")), BodyHandlers.ofString());
    await().atMost(5, SECONDS).until(() -> llm.stats().inFlight() == 1);
    assertThatThrownBy(() -> client.send(get(upstream.uri("/c")), BodyHandlers.ofString()))
        .isInstanceOf(BulkheadFullException.class);
    assertThat(failureOf(holding)).isInstanceOf(UpstreamTimeoutException.class);
  }

  @Test
  void cancellingARunningCall_closesItsConnection_thenFreesTheSlot() throws Exception {
    CountingUpstream upstream = closer.closeLater(CountingUpstream.silent());
    Bulkhead llm =
        Bulkhead.builder("llm").limit(1).maxQueue(1).maxWait(Duration.ofSeconds(30)).build();
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofSeconds(30)).build());
    CompletableFuture<HttpResponse<String>> running =
        client.sendAsync(get(upstream.uri("/a")), BodyHandlers.ofString());
    await().atMost(5, SECONDS).until(() -> upstream.requests() == 1);
    CompletableFuture<HttpResponse<String>> waiting =
        client.sendAsync(get(upstream.uri("/b")), BodyHandlers.ofString());
    assertThat(llm.stats().waiting()).isEqualTo(1);

    running.cancel(true);

    // The waiter got the slot and opened a connection only after the first was closed.
    await().atMost(5, SECONDS).until(() -> upstream.requests() == 2);
    assertThat(upstream.maxOpen()).isEqualTo(1);
    assertThat(upstream.totalOpened()).isEqualTo(2);
    waiting.cancel(true);
    await().atMost(5, SECONDS).until(() -> llm.stats().inFlight() == 0);
  }

  @Test
  void cancellingAWaitingCall_withdrawsIt_andTheUpstreamNeverSeesIt() throws Exception {
    CountingUpstream upstream = closer.closeLater(CountingUpstream.silent());
    Bulkhead llm =
        Bulkhead.builder("llm").limit(1).maxQueue(1).maxWait(Duration.ofSeconds(30)).build();
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofMillis(500)).build());
    CompletableFuture<HttpResponse<String>> running =
        client.sendAsync(get(upstream.uri("/a")), BodyHandlers.ofString());
    CompletableFuture<HttpResponse<String>> waiting =
        client.sendAsync(get(upstream.uri("/b")), BodyHandlers.ofString());

    waiting.cancel(true);

    assertThat(llm.stats().waiting()).isZero();
    assertThat(llm.stats().cancelled()).isEqualTo(1);
    assertThat(failureOf(running)).isInstanceOf(UpstreamTimeoutException.class);
    assertThat(upstream.requests()).isEqualTo(1);
  }

  @Test
  void close_abortsCallsInFlight_andRefusesNewOnes() throws Exception {
    CountingUpstream upstream = closer.closeLater(CountingUpstream.silent());
    Bulkhead llm = Bulkhead.builder("llm").limit(2).build();
    UpstreamClient client = UpstreamClient.builder(llm).deadline(Duration.ofSeconds(30)).build();
    CompletableFuture<HttpResponse<String>> running =
        client.sendAsync(get(upstream.uri("/a")), BodyHandlers.ofString());
    await().atMost(5, SECONDS).until(() -> upstream.requests() == 1);

    client.close();

    assertThat(failureOf(running)).isInstanceOf(CancellationException.class);
    assertThat(llm.stats().inFlight()).isZero();
    await().atMost(5, SECONDS).until(() -> upstream.openNow() == 0);
    assertThatThrownBy(() -> client.sendAsync(get(upstream.uri("/b")), BodyHandlers.ofString()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'llm' is closed");
  }

  @Test
  void aFailingBodyHandler_isTheCallersMistake_reportedAsIs_andFreesTheSlot() throws Exception {
    CountingUpstream upstream =
        closer.closeLater(CountingUpstream.answeringAfter(Duration.ZERO, 200));
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofSeconds(30)).build());
    HttpResponse.BodyHandler<String> broken =
        info -> {
          throw new IllegalStateException("the body handler failed on purpose");
        };

    Throwable failure = failureOf(client.sendAsync(get(upstream.uri("/x")), broken));

    assertThat(failure)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("the body handler failed on purpose");
    await().atMost(5, SECONDS).until(() -> llm.stats().inFlight() == 0);
  }

  @Test
  void aRequestWithItsOwnTimeout_isRefused_becauseTheJdkWouldAbortItUnsafely() {
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofSeconds(1)).build());
    HttpRequest timed =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:1/x"))
            .timeout(Duration.ofSeconds(5))
            .build();

    assertThatThrownBy(() -> client.sendAsync(timed, BodyHandlers.ofString()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("carries its own timeout (PT5S)");
    assertThat(llm.stats().admitted()).isZero();
  }

  @Test
  void builder_requiresAPositiveDeadline_andNamesTheValue() {
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    assertThatThrownBy(() -> UpstreamClient.builder(llm).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("deadline was not set for upstream client 'llm'");
    assertThatThrownBy(() -> UpstreamClient.builder(llm).deadline(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("PT0S");
    assertThatThrownBy(() -> UpstreamClient.builder(llm).deadline(Duration.ofDays(2)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("PT48H");
  }
}
