package io.bulkhead.httpclient;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadListener;
import io.bulkhead.BulkheadStats;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Faults at the upstream edge, each over real sockets: the upstream resets, answers 5xx, closes
 * mid-body, trickles past the deadline, never answers, refuses, answers garbage, or sits behind a
 * proxy that delays or blackholes. Every case fills the {@code llm} compartment (limit 2) with
 * faulty calls and checks the same four things: what the caller gets, and how soon; the slot freed
 * exactly once; the connection freed; and a {@code /login} call on another compartment answering
 * while the fault is in progress. The README's "Faults at every edge" table lists these test names.
 */
class UpstreamFaultMatrixTest {

  private static final int LIMIT = 2;

  /** For the faults that last until the deadline: the deadline is the fault's whole cost. */
  private static final Duration SHORT_DEADLINE = Duration.ofMillis(300);

  /**
   * For the faults that end the call by themselves: never reached, so it can be long enough that
   * the upstream can hold the fault while {@code /login} is checked, however loaded the machine.
   */
  private static final Duration LONG_DEADLINE = Duration.ofSeconds(20);

  /** What a loaded machine may add to a deadline; only a bug (a deadline held back) exceeds it. */
  private static final Duration SLACK = Duration.ofSeconds(3);

  /** How long the slow link holds each chunk of the answer: far past the short deadline. */
  private static final Duration PROXY_LATENCY = Duration.ofSeconds(10);

  private static final Duration AWAIT = Duration.ofSeconds(10);

  @RegisterExtension final Closer closer = new Closer();

  private Bulkhead llm;
  private final AtomicInteger releases = new AtomicInteger();
  private UpstreamClient login;
  private CountingUpstream loginUpstream;
  private String testName;

  @BeforeEach
  void compartments(TestInfo test) throws Exception {
    testName = test.getTestMethod().map(m -> m.getName()).orElse("?");
    llm = Bulkhead.builder("llm").limit(LIMIT).build();
    llm.addListener(
        new BulkheadListener() {
          @Override
          public void onReleased(Compartment compartment, long heldNanos) {
            releases.incrementAndGet();
          }
        });
    loginUpstream = closer.closeLater(CountingUpstream.answeringAfter(Duration.ZERO, 200));
    login =
        closer.closeLater(
            UpstreamClient.builder(Bulkhead.builder("login").limit(LIMIT).build())
                .deadline(LONG_DEADLINE)
                .build());
  }

  @Test
  void upstreamResets_upstreamException() throws Exception {
    FaultyUpstream upstream = held(FaultyUpstream.Fault.RESET);
    Outcome outcome = runHeld(upstream);
    outcome.allFailWith(UpstreamException.class);
    outcome.slotsFreedOnce();
    // The JDK retries a GET whose connection was reset before any answer, on a new connection,
    // inside the same slot: still never more connections at once than the limit.
    connectionsClosed(upstream);
  }

  @Test
  void upstreamAnswers5xx_aResponse_connectionBackInThePool() throws Exception {
    FaultyUpstream upstream = held(FaultyUpstream.Fault.SERVER_ERROR);
    Outcome outcome = runHeld(upstream);
    for (CompletableFuture<HttpResponse<String>> call : outcome.calls) {
      HttpResponse<String> answer = call.get(AWAIT.toMillis(), MILLISECONDS);
      // an answer, for the edge to map, not an exception
      assertThat(answer.statusCode()).isEqualTo(503);
      assertThat(answer.body()).isEqualTo("down\n");
    }
    outcome.withinBound();
    outcome.slotsFreedOnce();
    // Back in the client's pool, not leaked: the next calls reuse them and open none.
    assertThat(upstream.openNow()).isLessThanOrEqualTo(LIMIT);
    for (int i = 0; i < LIMIT; i++) {
      assertThat(outcome.client.send(get(upstream.uri()), BodyHandlers.ofString()).statusCode())
          .isEqualTo(503);
    }
    assertThat(upstream.accepted()).isEqualTo(LIMIT);
  }

  @Test
  void upstreamClosesMidBody_upstreamException() throws Exception {
    FaultyUpstream upstream = held(FaultyUpstream.Fault.CLOSE_MID_BODY);
    Outcome outcome = runHeld(upstream);
    outcome.allFailWith(UpstreamException.class);
    outcome.slotsFreedOnce();
    connectionsClosed(upstream);
  }

  @Test
  void upstreamTricklesPastTheDeadline_upstreamTimeoutException() throws Exception {
    FaultyUpstream upstream =
        closer.closeLater(new FaultyUpstream(FaultyUpstream.Fault.TRICKLE, LIMIT, false));
    Outcome outcome = runUntilTheDeadline(upstream.uri(), upstream::awaitRequests);
    outcome.allFailWith(UpstreamTimeoutException.class);
    outcome.slotsFreedOnce();
    connectionsClosed(upstream);
  }

  @Test
  void upstreamNeverAnswers_upstreamTimeoutException() throws Exception {
    FaultyUpstream upstream =
        closer.closeLater(new FaultyUpstream(FaultyUpstream.Fault.NEVER_ANSWER, LIMIT, false));
    Outcome outcome = runUntilTheDeadline(upstream.uri(), upstream::awaitRequests);
    outcome.allFailWith(UpstreamTimeoutException.class);
    outcome.slotsFreedOnce();
    connectionsClosed(upstream);
  }

  @Test
  void upstreamRefuses_upstreamException() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    URI nothingListening = URI.create("http://127.0.0.1:" + closedPort + "/fault");
    // Nothing to hold: the fault is over before /login is called, which must answer all the same.
    Outcome outcome = run(nothingListening, LONG_DEADLINE, atMost -> true, () -> {}, false);
    outcome.allFailWith(UpstreamException.class);
    for (CompletableFuture<HttpResponse<String>> call : outcome.calls) {
      assertThat(failureOf(call)).hasCauseInstanceOf(ConnectException.class);
    }
    outcome.slotsFreedOnce(); // no connection was ever opened
  }

  @Test
  void upstreamAnswersGarbage_upstreamException() throws Exception {
    FaultyUpstream upstream = held(FaultyUpstream.Fault.GARBAGE);
    Outcome outcome = runHeld(upstream);
    outcome.allFailWith(UpstreamException.class);
    outcome.slotsFreedOnce();
    connectionsClosed(upstream); // closed by the client although the upstream keeps it (D2)
  }

  @Test
  void proxyDelaysTheAnswer_upstreamTimeoutException() throws Exception {
    FaultProxy proxy =
        closer.closeLater(
            new FaultProxy(FaultProxy.Mode.DELAY, loginUpstream.uri("/"), PROXY_LATENCY, LIMIT));
    Outcome outcome = runUntilTheDeadline(proxy.uri("/fault"), proxy::awaitRequests);
    outcome.allFailWith(UpstreamTimeoutException.class);
    outcome.slotsFreedOnce();
    connectionsClosed(proxy::openNow);
  }

  @Test
  void proxyBlackholes_upstreamTimeoutException() throws Exception {
    FaultProxy proxy =
        closer.closeLater(
            new FaultProxy(
                FaultProxy.Mode.BLACKHOLE, loginUpstream.uri("/"), PROXY_LATENCY, LIMIT));
    Outcome outcome = runUntilTheDeadline(proxy.uri("/fault"), proxy::awaitRequests);
    outcome.allFailWith(UpstreamTimeoutException.class);
    outcome.slotsFreedOnce();
    connectionsClosed(proxy::openNow);
  }

  // --- the steps every case shares ---

  interface Arrival {
    boolean await(Duration atMost) throws InterruptedException;
  }

  interface Release {
    void run() throws Exception;
  }

  private FaultyUpstream held(FaultyUpstream.Fault fault) throws Exception {
    return closer.closeLater(new FaultyUpstream(fault, LIMIT, true));
  }

  private Outcome runHeld(FaultyUpstream upstream) throws Exception {
    return run(upstream.uri(), LONG_DEADLINE, upstream::awaitRequests, upstream::proceed, true);
  }

  private Outcome runUntilTheDeadline(URI uri, Arrival arrived) throws Exception {
    return run(uri, SHORT_DEADLINE, arrived, () -> {}, false);
  }

  /**
   * Fills the compartment with faulty calls; once the fault has every request (and, for a held
   * fault, before it is committed) calls /login on the other compartment, then releases the fault.
   */
  private Outcome run(URI uri, Duration deadline, Arrival arrived, Release release, boolean held)
      throws Exception {
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(deadline).build());
    long started = System.nanoTime();
    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < LIMIT; i++) {
      calls.add(client.sendAsync(get(uri), BodyHandlers.ofString()));
    }
    assertThat(arrived.await(AWAIT)).as("the faulty upstream received every call").isTrue();

    long loginStarted = System.nanoTime();
    HttpResponse<String> answer =
        login.send(get(loginUpstream.uri("/login")), BodyHandlers.ofString());
    long loginMillis = (System.nanoTime() - loginStarted) / 1_000_000;
    assertThat(answer.statusCode()).as("/login while the fault is in progress").isEqualTo(200);
    if (held) {
      // The fault is not committed yet: /login answered while every llm slot was taken by it.
      for (CompletableFuture<HttpResponse<String>> call : calls) {
        assertThat(call).as("a faulty call, held by the upstream").isNotDone();
      }
      assertThat(llm.stats().inFlight()).isEqualTo(LIMIT);
    }
    release.run();
    for (CompletableFuture<HttpResponse<String>> call : calls) {
      try {
        call.get(deadline.plus(SLACK).plus(AWAIT).toMillis(), MILLISECONDS);
      } catch (ExecutionException expected) {
        // each case checks how it ended
      }
    }
    long tookMillis = (System.nanoTime() - started) / 1_000_000;
    System.out.printf(
        "fault matrix %s: calls ended after %d ms (deadline %d ms), /login took %d ms%n",
        testName, tookMillis, deadline.toMillis(), loginMillis);
    return new Outcome(client, calls, tookMillis, deadline);
  }

  private final class Outcome {
    final UpstreamClient client;
    final List<CompletableFuture<HttpResponse<String>>> calls;
    final long tookMillis;
    final Duration deadline;

    Outcome(
        UpstreamClient client,
        List<CompletableFuture<HttpResponse<String>>> calls,
        long tookMillis,
        Duration deadline) {
      this.client = client;
      this.calls = calls;
      this.tookMillis = tookMillis;
      this.deadline = deadline;
    }

    void allFailWith(Class<? extends UpstreamException> type) {
      for (CompletableFuture<HttpResponse<String>> call : calls) {
        Throwable failure = failureOf(call);
        assertThat(failure).isInstanceOf(type).hasMessageContaining("'llm'");
        if (type == UpstreamException.class) {
          assertThat(failure)
              .as("a fault that ends the call by itself is not reported as a timeout")
              .isNotInstanceOf(UpstreamTimeoutException.class);
        }
      }
      withinBound();
    }

    void withinBound() {
      assertThat(tookMillis)
          .as("the calls ended within the deadline plus slack")
          .isLessThanOrEqualTo(deadline.plus(SLACK).toMillis());
    }

    void slotsFreedOnce() {
      BulkheadStats stats = llm.stats();
      assertThat(stats.inFlight()).isZero();
      assertThat(stats.admitted()).isEqualTo(LIMIT);
      assertThat(stats.completed()).isEqualTo(LIMIT);
      assertThat(releases).hasValue(LIMIT);
    }
  }

  /** Every connection closed at the upstream's end, and never more open at once than the limit. */
  private static void connectionsClosed(FaultyUpstream upstream) {
    connectionsClosed(upstream::openNow);
    assertThat(upstream.maxOpen()).isLessThanOrEqualTo(LIMIT);
  }

  private static void connectionsClosed(IntSupplier openAtTheFaultsEnd) {
    await().atMost(AWAIT).untilAsserted(() -> assertThat(openAtTheFaultsEnd.getAsInt()).isZero());
  }

  private static HttpRequest get(URI uri) {
    return HttpRequest.newBuilder(uri).build();
  }

  private static Throwable failureOf(CompletableFuture<?> f) {
    try {
      f.get(30, SECONDS);
      throw new AssertionError("expected the call to fail, but it answered");
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
