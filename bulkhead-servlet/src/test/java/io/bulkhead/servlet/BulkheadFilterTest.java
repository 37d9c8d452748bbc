package io.bulkhead.servlet;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException.Reason;
import io.bulkhead.BulkheadStats;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The filter on real servers over real sockets: each case runs on Tomcat 11 and on Jetty 12 ee10. */
class BulkheadFilterTest {

  private Container.Running server;
  private HeldServlet app;
  private Returns returns;
  private int port;

  private void start(Container container, BulkheadFilter filter) throws Exception {
    app = new HeldServlet();
    returns = new Returns();
    server = container.start(returns, filter, app);
    port = server.port();
  }

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  private static Bulkhead compartment(String name, int limit, int maxQueue, Duration maxWait) {
    return Bulkhead.builder(name).limit(limit).maxQueue(maxQueue).maxWait(maxWait).build();
  }

  /** Waits until the compartment has neither calls in flight nor waiters, and returns its numbers. */
  private static BulkheadStats atRest(Bulkhead compartment) {
    await().atMost(10, SECONDS).until(
        () -> compartment.stats().inFlight() == 0 && compartment.stats().waiting() == 0);
    return compartment.stats();
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void admittedRequest_passesThroughToTheServlet(Container container) throws Exception {
    Bulkhead llm = compartment("llm", 2, 2, Duration.ofSeconds(5));
    start(container, BulkheadFilter.builder().route("/chat/*", llm).build());

    RawHttp.Answer answer = RawHttp.get(port, "/chat/now");

    assertThat(answer.status()).isEqualTo(200);
    assertThat(answer.body()).isEqualTo("now /chat/now");
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted()).isEqualTo(1);
    assertThat(stats.completed()).isEqualTo(1);
    assertThat(stats.rejected()).isZero();
    assertThat(stats.cancelled()).isZero();
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void fullCompartment_queuesOne_refusesTheNextAtOnce_andAdmitsTheWaiterWhenTheSlotFrees(
      Container container) throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(30));
    start(container, BulkheadFilter.builder().route("/chat/*", llm).build());
    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next();
      try (Socket b = RawHttp.sendGet(port, "/chat/b")) {
        await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);

        RawHttp.Answer c = RawHttp.get(port, "/chat/c");

        assertThat(c.status()).isEqualTo(503);
        long retryAfter = Long.parseLong(c.header("Retry-After"));
        assertThat(retryAfter).isGreaterThanOrEqualTo(1);
        assertThat(c.header("Content-Type")).startsWith("text/plain");
        assertThat(c.body()).isEqualTo("bulkhead 'llm' is full: retry after " + retryAfter + " s\n");
        assertThat(app.seen()).containsExactly("/chat/a");

        heldA.answer("a");
        assertThat(RawHttp.read(a).body()).isEqualTo("a");
        HeldServlet.Held heldB = app.next();
        assertThat(heldB.path).isEqualTo("/chat/b");
        assertThat(llm.stats().inFlight()).isEqualTo(1);
        heldB.answer("b");
        RawHttp.Answer answerB = RawHttp.read(b);
        assertThat(answerB.status()).isEqualTo(200);
        assertThat(answerB.body()).isEqualTo("b");
      }
    }
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted()).isEqualTo(2);
    assertThat(stats.completed()).isEqualTo(2);
    assertThat(stats.rejected()).isEqualTo(1);
    assertThat(stats.rejected(Reason.QUEUE_FULL)).isEqualTo(1);
    assertThat(stats.cancelled()).isZero();
    assertThat(app.seen()).containsExactly("/chat/a", "/chat/b");
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void waitingPastMaxWait_answers503_andNeverReachesTheServlet(Container container)
      throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofMillis(200));
    start(container, BulkheadFilter.builder().route("/chat/*", llm).build());
    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next();
      try (Socket b = RawHttp.sendGet(port, "/chat/b")) {
        RawHttp.Answer answerB = RawHttp.read(b);

        assertThat(answerB.status()).isEqualTo(503);
        assertThat(Long.parseLong(answerB.header("Retry-After"))).isGreaterThanOrEqualTo(1);
        assertThat(answerB.body()).startsWith("bulkhead 'llm' is full");
        assertThat(llm.stats().rejected(Reason.WAIT_TIMEOUT)).isEqualTo(1);
      }
      heldA.answer("a");
      assertThat(RawHttp.read(a).body()).isEqualTo("a");
    }
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted()).isEqualTo(1);
    assertThat(stats.rejected()).isEqualTo(1);
    assertThat(stats.cancelled()).isZero();
    assertThat(app.seen()).containsExactly("/chat/a");
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void asyncTimeoutWhileWaiting_leavesTheQueue_countsAsCancelled_andNeverReachesTheServlet(
      Container container) throws Exception {
    Bulkhead llm = Bulkhead.builder("llm").limit(1).maxQueue(1).unboundedWait().build();
    start(container, BulkheadFilter.builder().route("/chat/*", llm).build());
    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next();
      try (Socket b = RawHttp.sendGet(port, "/chat/b", Returns.ASYNC_TIMEOUT + ": 100")) {
        RawHttp.Answer answerB = RawHttp.read(b);

        assertThat(answerB.status()).isEqualTo(503);
        assertThat(answerB.header("Retry-After")).isNull(); // the compartment suggested nothing
        assertThat(answerB.body()).contains("'llm'").contains("async timeout");
        await().atMost(10, SECONDS).until(() -> llm.stats().cancelled() == 1);
        assertThat(llm.stats().waiting()).isZero();
      }
      heldA.answer("a");
      assertThat(RawHttp.read(a).body()).isEqualTo("a");
    }
    assertThat(RawHttp.get(port, "/chat/now").body()).isEqualTo("now /chat/now");
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted()).isEqualTo(2);
    assertThat(stats.cancelled()).isEqualTo(1);
    assertThat(stats.rejected()).isZero();
    assertThat(app.seen()).containsExactly("/chat/a", "/chat/now");
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void clientClosingWhileWaiting(Container container) throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(30));
    start(container, BulkheadFilter.builder().route("/chat/*", llm).build());
    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next();
      Socket b = RawHttp.sendGet(port, "/chat/b");
      await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);
      b.close();
      await().atMost(10, SECONDS).until(() -> llm.stats().cancelled() == 1);
      heldA.answer("a");
      assertThat(RawHttp.read(a).body()).isEqualTo("a");
    }
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted()).isEqualTo(1);
    assertThat(app.seen()).containsExactly("/chat/a");
  }
}
