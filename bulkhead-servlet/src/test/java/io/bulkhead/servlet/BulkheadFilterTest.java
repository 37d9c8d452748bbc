package io.bulkhead.servlet;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException.Reason;
import io.bulkhead.BulkheadStats;
import io.bulkhead.edge.Route;
import io.bulkhead.edge.RouteTable;
import io.bulkhead.edge.testing.RawHttp;
import io.bulkhead.edge.testing.TestBodies;
import java.net.Socket;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The filter on real servers over real sockets: each case runs on Tomcat 11 and on Jetty 12 ee10.
 */
class BulkheadFilterTest {

  private Container.Running server;
  private HeldServlet app;
  private Returns returns;
  private int port;

  private void start(Container container, BulkheadFilter filter) throws Exception {
    start(container, filter, Container.Options.DEFAULT);
  }

  private void start(Container container, BulkheadFilter filter, Container.Options options)
      throws Exception {
    app = new HeldServlet();
    returns = new Returns();
    server = container.start(returns, filter, app, options);
    port = server.port();
  }

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.stop();
      server = null;
    }
  }

  private static BulkheadFilter edge(String pattern, Bulkhead compartment) {
    return BulkheadFilter.of(RouteTable.builder().route(pattern, compartment).build());
  }

  private static Bulkhead compartment(String name, int limit, int maxQueue, Duration maxWait) {
    return Bulkhead.builder(name).limit(limit).maxQueue(maxQueue).maxWait(maxWait).build();
  }

  /**
   * Waits until the compartment has neither calls in flight nor waiters, and returns its numbers.
   */
  private static BulkheadStats atRest(Bulkhead compartment) {
    await()
        .atMost(10, SECONDS)
        .until(() -> compartment.stats().inFlight() == 0 && compartment.stats().waiting() == 0);
    return compartment.stats();
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void admittedRequest_passesThroughToTheServlet(Container container) throws Exception {
    Bulkhead llm = compartment("llm", 2, 2, Duration.ofSeconds(5));
    start(container, edge("/chat/**", llm));

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
    start(container, edge("/chat/**", llm));
    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next();
      try (Socket b = RawHttp.sendGet(port, "/chat/b")) {
        await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);
        // B waits without a thread: its container thread has come back out of the chain.
        await().atMost(10, SECONDS).until(() -> returns.hasReturned("REQUEST /chat/b"));

        RawHttp.Answer c = RawHttp.get(port, "/chat/c");

        assertThat(c.status()).isEqualTo(503);
        long retryAfter = Long.parseLong(c.header("Retry-After"));
        assertThat(retryAfter).isGreaterThanOrEqualTo(1);
        assertThat(c.header("Content-Type")).startsWith("text/plain");
        assertThat(c.body())
            .isEqualTo("bulkhead 'llm' is full: retry after " + retryAfter + " s\n");
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
    start(container, edge("/chat/**", llm));
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
    start(container, edge("/chat/**", llm));
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

  /**
   * Neither Tomcat 11 nor Jetty 12 ee10 tells a parked HTTP/1.1 request that its client closed the
   * connection (they do not read it while nobody asks for content), so the request may stay queued
   * and be admitted. Whichever way the container goes, the slot must not leak and the counts must
   * add up: the request is either withdrawn (cancelled) or admitted and completed.
   */
  @ParameterizedTest
  @EnumSource(Container.class)
  void clientClosingWhileWaiting_neverLeaksItsSlot_andTheCountsAddUp(Container container)
      throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(30));
    start(container, edge("/chat/**", llm));
    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next();
      Socket b = RawHttp.sendGet(port, "/chat/b");
      await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);
      b.close();

      heldA.answer("a");
      assertThat(RawHttp.read(a).body()).isEqualTo("a");
    }
    await()
        .atMost(10, SECONDS)
        .until(() -> llm.stats().cancelled() == 1 || app.seen().contains("/chat/b"));
    if (app.seen().contains("/chat/b")) {
      app.next().answer("b"); // to nobody: the client has gone
    }
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted() + stats.cancelled()).isEqualTo(2);
    assertThat(stats.completed()).isEqualTo(stats.admitted());
    assertThat(stats.rejected()).isZero();
    assertThat(RawHttp.get(port, "/chat/now").status()).isEqualTo(200);
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void servletThrowing_gives500_andFreesTheSlot_whetherAdmittedAtOnceOrAfterWaiting(
      Container container) throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(30));
    start(container, edge("/chat/**", llm));

    assertThat(RawHttp.get(port, "/chat/throw-at-once").status()).isEqualTo(500);
    assertThat(atRest(llm).completed()).isEqualTo(1);

    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next();
      try (Socket b = RawHttp.sendGet(port, "/chat/throw-after-waiting")) {
        await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);
        heldA.answer("a");
        assertThat(RawHttp.read(a).body()).isEqualTo("a");
        assertThat(RawHttp.read(b).status()).isEqualTo(500);
      }
    }
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted()).isEqualTo(3);
    assertThat(stats.completed()).isEqualTo(3);
    assertThat(RawHttp.get(port, "/chat/now").status()).isEqualTo(200);
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void applicationAsync_admittedAtOnce_holdsTheSlotUntilItCompletes(Container container)
      throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(30));
    start(container, edge("/chat/**", llm));
    try (Socket a = RawHttp.sendGet(port, "/chat/async-a")) {
      HeldServlet.Held heldA = app.next();
      // The container's thread has come back out of the chain: the servlet has let go of it...
      await().atMost(10, SECONDS).until(() -> returns.hasReturned("REQUEST /chat/async-a"));
      // ...and the slot is still held, so the next request waits.
      try (Socket b = RawHttp.sendGet(port, "/chat/b")) {
        await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);
        assertThat(llm.stats().inFlight()).isEqualTo(1);
        assertThat(app.seen()).containsExactly("/chat/async-a");

        heldA.answer("async a");
        assertThat(RawHttp.read(a).body()).isEqualTo("async a");
        HeldServlet.Held heldB = app.next();
        heldB.answer("b");
        assertThat(RawHttp.read(b).body()).isEqualTo("b");
      }
    }
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted()).isEqualTo(2);
    assertThat(stats.completed()).isEqualTo(2);
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void applicationAsync_admittedAfterWaiting_holdsTheSlotUntilItCompletes(Container container)
      throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(30));
    start(container, edge("/chat/**", llm));
    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next(); // A holds the slot before B is sent
      try (Socket b = RawHttp.sendGet(port, "/chat/async-b")) {
        await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);
        heldA.answer("a");
        assertThat(RawHttp.read(a).body()).isEqualTo("a");

        HeldServlet.Held heldB = app.next(); // admitted, dispatched, and async again in the servlet
        await().atMost(10, SECONDS).until(() -> returns.hasReturned("ASYNC /chat/async-b"));
        try (Socket c = RawHttp.sendGet(port, "/chat/c")) {
          await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);
          assertThat(llm.stats().inFlight()).isEqualTo(1);

          heldB.answer("async b");
          assertThat(RawHttp.read(b).body()).isEqualTo("async b");
          app.next().answer("c");
          assertThat(RawHttp.read(c).body()).isEqualTo("c");
        }
      }
    }
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted()).isEqualTo(3);
    assertThat(stats.completed()).isEqualTo(3);
    assertThat(app.seen()).containsExactly("/chat/a", "/chat/async-b", "/chat/c");
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void unmatchedAndBypassedPaths_passWithoutTouchingAnyCompartment(Container container)
      throws Exception {
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build(); // no queue: a second /chat is refused
    Bulkhead server = Bulkhead.builder("server").limit(1).build();
    start(
        container,
        BulkheadFilter.of(
            RouteTable.builder()
                .route("/chat/**", llm)
                .route("/**", server)
                .bypass("/health/**")
                .build()));
    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next();

      assertThat(RawHttp.get(port, "/health/now").status()).isEqualTo(200);
      assertThat(RawHttp.get(port, "/chatty/now").status()).isEqualTo(200); // the default route
      assertThat(RawHttp.get(port, "/chat/now").status()).isEqualTo(503);

      heldA.answer("a");
      assertThat(RawHttp.read(a).body()).isEqualTo("a");
    }
    assertThat(atRest(llm).admitted()).isEqualTo(1);
    assertThat(llm.stats().rejected()).isEqualTo(1);
    assertThat(atRest(server).admitted()).isEqualTo(1);

    Bulkhead only = Bulkhead.builder("only").limit(1).build();
    stop();
    start(container, edge("/chat/**", only));
    assertThat(RawHttp.get(port, "/login/now").body()).isEqualTo("now /login/now");
    BulkheadStats untouched = only.stats();
    assertThat(untouched.admitted() + untouched.rejected() + untouched.cancelled()).isZero();
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void rejectionBody_saysThe503InTheApisOwnFormat_andABrokenBodyFallsBackToTheDefault(
      Container container) throws Exception {
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    Bulkhead broken = Bulkhead.builder("broken").limit(1).build();
    start(
        container,
        BulkheadFilter.of(
            RouteTable.builder().route("/chat/**", llm).route("/broken/**", broken).build(),
            TestBodies.busy(new java.util.concurrent.CopyOnWriteArrayList<>())));
    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next();
      RawHttp.Answer refused = RawHttp.get(port, "/chat/b");
      assertThat(refused.status()).isEqualTo(503);
      assertThat(refused.header("Content-Type")).startsWith("application/problem+json");
      String seconds = refused.header("Retry-After");
      assertThat(Long.parseLong(seconds)).isGreaterThanOrEqualTo(1);
      assertThat(refused.body()).isEqualTo(TestBodies.busyJson("llm", seconds));
      heldA.answer("a");
      assertThat(RawHttp.read(a).body()).isEqualTo("a");
    }
    try (Socket a = RawHttp.sendGet(port, "/broken/a")) {
      HeldServlet.Held heldA = app.next();
      RawHttp.Answer refused = RawHttp.get(port, "/broken/b");
      assertThat(refused.status()).isEqualTo(503);
      assertThat(refused.header("Content-Type")).startsWith("text/plain");
      String seconds = refused.header("Retry-After");
      assertThat(Long.parseLong(seconds)).isGreaterThanOrEqualTo(1);
      assertThat(refused.body())
          .isEqualTo("bulkhead 'broken' is full: retry after " + seconds + " s\n");
      heldA.answer("a");
      assertThat(RawHttp.read(a).body()).isEqualTo("a");
    }
    assertThat(app.seen()).containsExactly("/chat/a", "/broken/a");
  }

  /**
   * The servlet needs async support only for async of its own: a waiting request is parked by the
   * filter, before the servlet, and reaches the servlet through an ordinary ASYNC dispatch.
   */
  @ParameterizedTest
  @EnumSource(Container.class)
  void servletWithoutAsyncSupport_stillWaitsWithoutAContainerThread(Container container)
      throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(30));
    start(container, edge("/chat/**", llm), new Container.Options(true, false, false));
    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next();
      try (Socket b = RawHttp.sendGet(port, "/chat/b")) {
        await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);
        // B still waits, and its container thread has come back out of the chain.
        await().atMost(10, SECONDS).until(() -> returns.hasReturned("REQUEST /chat/b"));
        assertThat(llm.stats().waiting()).isEqualTo(1);

        heldA.answer("a");
        assertThat(RawHttp.read(a).body()).isEqualTo("a");
        app.next().answer("b");
        assertThat(RawHttp.read(b).body()).isEqualTo("b");
      }
    }
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted()).isEqualTo(2);
    assertThat(app.seen()).containsExactly("/chat/a", "/chat/b");
  }

  /**
   * A filter before ours without async support forbids parking: the waiting request keeps its
   * container thread, but still waits in the compartment's queue, in order, and a full queue still
   * answers 503 at once.
   */
  @ParameterizedTest
  @EnumSource(Container.class)
  void filterBeforeItWithoutAsyncSupport_waitsOnTheContainersThread_withTheSameQueueAndRefusals(
      Container container) throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(30));
    start(container, edge("/chat/**", llm), new Container.Options(false, true, false));
    try (Socket a = RawHttp.sendGet(port, "/chat/a")) {
      HeldServlet.Held heldA = app.next();
      try (Socket b = RawHttp.sendGet(port, "/chat/b")) {
        await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);

        RawHttp.Answer c = RawHttp.get(port, "/chat/c");
        assertThat(c.status()).isEqualTo(503);
        assertThat(Long.parseLong(c.header("Retry-After"))).isGreaterThanOrEqualTo(1);
        // B cannot have come back out of the chain: it waits on its thread until A ends.
        assertThat(returns.hasReturned("REQUEST /chat/b")).isFalse();

        heldA.answer("a");
        assertThat(RawHttp.read(a).body()).isEqualTo("a");
        app.next().answer("b");
        assertThat(RawHttp.read(b).body()).isEqualTo("b");
      }
    }
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted()).isEqualTo(2);
    assertThat(stats.rejected(Reason.QUEUE_FULL)).isEqualTo(1);
    assertThat(app.seen()).containsExactly("/chat/a", "/chat/b");
  }

  /**
   * Stopping the server ends the application's async request; its slot goes to the waiting request
   * (FIFO hand-off), or the container withdraws that one too. Either way nothing stays counted.
   */
  @ParameterizedTest
  @EnumSource(Container.class)
  void stoppingTheServer_withOneRequestInApplicationAsyncAndOneWaiting_leavesNothingCounted(
      Container container) throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(30));
    start(container, edge("/chat/**", llm));
    Socket a = RawHttp.sendGet(port, "/chat/async-a");
    Socket b = null;
    try {
      app.next(); // A holds the slot, in the application's async, before B is sent
      b = RawHttp.sendGet(port, "/chat/now-b");
      await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);
      stop();
    } finally {
      a.close();
      if (b != null) {
        b.close();
      }
    }
    BulkheadStats stats = atRest(llm);
    assertThat(stats.admitted() + stats.cancelled()).isEqualTo(2);
    assertThat(stats.completed()).isEqualTo(stats.admitted());
    assertThat(stats.rejected()).isZero();
  }

  @Test
  void routesAreTheTablesOwn_andTheFilterSaysThem() {
    Bulkhead api = Bulkhead.builder("api").limit(1).build();
    RouteTable routes = RouteTable.builder().route("/a/**", api).bypass("/a/health").build();
    BulkheadFilter filter = BulkheadFilter.of(routes);
    assertThat(filter.routes()).isSameAs(routes);
    assertThat(filter.routes().route("/a/x")).isEqualTo(Route.through(api));
    assertThat(filter).hasToString("BulkheadFilter[/a/** -> bulkhead 'api', /a/health -> bypass]");
    assertThatThrownBy(() -> BulkheadFilter.of(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("routes");
    assertThatThrownBy(() -> BulkheadFilter.of(routes, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("rejectionBody");
  }
}
