package io.bulkhead.jetty;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.edge.Route;
import io.bulkhead.edge.RouteTable;
import io.bulkhead.edge.testing.RawHttp;
import io.bulkhead.edge.testing.TestBodies;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BulkheadHandlerTest {

  private Server server;
  private HeldRequests app;
  private BulkheadHandler handler;
  private int port;

  private void start(BulkheadHandler bulkheads) throws Exception {
    start(bulkheads, new QueuedThreadPool(32, 4));
  }

  private void start(BulkheadHandler bulkheads, QueuedThreadPool pool) throws Exception {
    pool.setName("test-server");
    server = new Server(pool);
    ServerConnector connector = new ServerConnector(server, 1, 1);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    connector.setAcceptQueueSize(256);
    server.addConnector(connector);
    app = new HeldRequests();
    handler = bulkheads;
    handler.setHandler(app);
    server.setHandler(handler);
    server.start();
    port = connector.getLocalPort();
  }

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
  }

  private static BulkheadHandler edge(String pattern, Bulkhead compartment) {
    return BulkheadHandler.of(RouteTable.builder().route(pattern, compartment).build());
  }

  private static Bulkhead compartment(String name, int limit, int maxQueue, Duration maxWait) {
    return Bulkhead.builder(name).limit(limit).maxQueue(maxQueue).maxWait(maxWait).build();
  }

  @Test
  void fullCompartment_answers503_withRetryAfterInWholeSeconds_andABodyNamingIt() throws Exception {
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build(); // no queue: the second is refused
    start(edge("/chat", llm));
    try (Socket first = RawHttp.sendGet(port, "/chat")) {
      HeldRequests.Held held = app.next();

      RawHttp.Answer refused = RawHttp.get(port, "/chat");

      assertThat(refused.status()).isEqualTo(503);
      assertThat(refused.header("Content-Type")).startsWith("text/plain");
      assertThat(refused.body()).contains("'llm'").contains("full").endsWith("\n");
      long retryAfter = Long.parseLong(refused.header("Retry-After"));
      assertThat(retryAfter).isGreaterThanOrEqualTo(1);
      assertThat(refused.body()).contains("retry after " + retryAfter + " s");
      // Fast: refused while the first request still holds the slot, without a wait (QUEUE_FULL, no
      // WAIT_TIMEOUT) and without reaching the wrapped handler.
      assertThat(app.count()).isZero(); // the wrapped handler never saw it
      assertThat(llm.stats().rejected(BulkheadFullException.Reason.QUEUE_FULL)).isEqualTo(1);
      assertThat(llm.stats().rejected(BulkheadFullException.Reason.WAIT_TIMEOUT)).isZero();

      held.answer("done");
      assertThat(RawHttp.read(first.getInputStream()).body()).isEqualTo("done");
    }
    await().atMost(5, SECONDS).until(() -> llm.stats().inFlight() == 0);
  }

  @Test
  void retryAfterHeader_carriesTheCompartmentsHint() throws Exception {
    // Before any call has finished the hint is maxWait x (waiting + 1) / limit: 2.5 s x 2 / 1 = 5
    // s.
    Bulkhead reports = compartment("reports", 1, 1, Duration.ofMillis(2500));
    start(edge("/reports/**", reports));
    try (Socket holder = RawHttp.connect(port);
        Socket waiter = RawHttp.connect(port)) {
      RawHttp.sendGet(holder, "/reports/a");
      HeldRequests.Held held = app.next();
      RawHttp.sendGet(waiter, "/reports/b");
      await().atMost(5, SECONDS).until(() -> reports.stats().waiting() == 1);

      RawHttp.Answer refused = RawHttp.get(port, "/reports/c");

      assertThat(refused.status()).isEqualTo(503);
      assertThat(refused.header("Retry-After")).isEqualTo("5");
      held.answer("a");
    }
  }

  @Test
  void rejectionBody_saysThe503InTheApisOwnFormat_forQueueFullAndWaitTimeoutAlike()
      throws Exception {
    // maxWait leaves the queue-full request 3 s to arrive while the waiter still waits.
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(3));
    List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    start(
        BulkheadHandler.of(
            RouteTable.builder().route("/chat", llm).build(), TestBodies.busy(seen)));
    try (Socket first = RawHttp.sendGet(port, "/chat")) {
      HeldRequests.Held held = app.next(); // first holds the slot before the waiter is sent
      try (Socket waiter = RawHttp.sendGet(port, "/chat")) {
        await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 1);

        RawHttp.Answer queueFull = RawHttp.get(port, "/chat");
        assertThat(queueFull.status()).isEqualTo(503);
        assertThat(queueFull.header("Content-Type")).isEqualTo("application/problem+json");
        String seconds = queueFull.header("Retry-After");
        assertThat(Long.parseLong(seconds)).isGreaterThanOrEqualTo(1);
        assertThat(queueFull.body()).isEqualTo(TestBodies.busyJson("llm", seconds));

        RawHttp.Answer timedOut = RawHttp.read(waiter.getInputStream()); // after maxWait
        assertThat(timedOut.status()).isEqualTo(503);
        assertThat(timedOut.header("Content-Type")).isEqualTo("application/problem+json");
        assertThat(timedOut.body()).startsWith("{\"title\":\"busy\"");
        assertThat(seen).hasSize(2);
        assertThat(seen.get(0)).startsWith("QUEUE_FULL");
        assertThat(seen.get(1)).startsWith("WAIT_TIMEOUT");
        assertThat(app.count()).isZero(); // no one else reached the handler
      }
      held.answer("done");
    }
  }

  @Test
  void rejectionBody_thatThrowsOrGivesNothing_isReplacedByTheDefault_andTheClientStillGets503()
      throws Exception {
    Bulkhead broken = Bulkhead.builder("broken").limit(1).build();
    Bulkhead empty = Bulkhead.builder("empty").limit(1).build();
    start(
        BulkheadHandler.of(
            RouteTable.builder().route("/broken", broken).route("/empty", empty).build(),
            TestBodies.busy(new java.util.concurrent.CopyOnWriteArrayList<>())));
    for (String route : List.of("broken", "empty")) {
      try (Socket first = RawHttp.sendGet(port, "/" + route)) {
        HeldRequests.Held held = app.next();
        RawHttp.Answer refused = RawHttp.get(port, "/" + route);
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.header("Content-Type")).startsWith("text/plain");
        assertThat(refused.body()).contains("'" + route + "' is full");
        assertThat(Long.parseLong(refused.header("Retry-After"))).isGreaterThanOrEqualTo(1);
        held.answer("done");
        assertThat(RawHttp.read(first.getInputStream()).body()).isEqualTo("done");
      }
    }
    assertThatThrownBy(() -> BulkheadHandler.of(RouteTable.builder().build(), null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("rejectionBody");
  }

  @Test
  void oneRoutesBlockingListener_doesNotDelayAnotherRoutes503() throws Exception {
    java.util.concurrent.CountDownLatch blocker = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
    Duration maxWait = Duration.ofMillis(100);
    Bulkhead audit =
        Bulkhead.builder("audit")
            .limit(1)
            .maxQueue(1)
            .maxWait(maxWait)
            .listener(
                new io.bulkhead.BulkheadListener() {
                  @Override
                  public void onRejected(
                      io.bulkhead.Compartment c, BulkheadFullException.Reason reason) {
                    if (reason == BulkheadFullException.Reason.WAIT_TIMEOUT) {
                      entered.countDown();
                      try {
                        blocker.await(); // held until the test ends: an audit log that hangs
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                      }
                    }
                  }
                })
            .build();
    Bulkhead checkout = compartment("checkout", 1, 1, maxWait);
    start(
        BulkheadHandler.of(
            RouteTable.builder().route("/audit", audit).route("/checkout", checkout).build()));
    try (Socket auditHolder = RawHttp.sendGet(port, "/audit")) {
      HeldRequests.Held auditHeld = app.next();
      try (Socket checkoutHolder = RawHttp.sendGet(port, "/checkout");
          Socket auditWaiter = RawHttp.sendGet(port, "/audit")) {
        HeldRequests.Held checkoutHeld = app.next();
        assertThat(entered.await(10, SECONDS)).as("audit's waiter timed out").isTrue();

        long before = System.nanoTime();
        RawHttp.Answer refused = RawHttp.get(port, "/checkout"); // 30 s socket timeout on the bug
        long tookMillis = (System.nanoTime() - before) / 1_000_000;
        System.out.printf(
            "D1 at the Jetty edge: /checkout's 503 after %d ms (maxWait %d ms) while"
                + " /audit's onRejected was blocked%n",
            tookMillis, maxWait.toMillis());

        assertThat(refused.status()).isEqualTo(503);
        assertThat(checkout.stats().rejected(BulkheadFullException.Reason.WAIT_TIMEOUT))
            .isEqualTo(1);
        blocker.countDown();
        assertThat(RawHttp.read(auditWaiter.getInputStream()).status()).isEqualTo(503);
        checkoutHeld.answer("done");
      } finally {
        blocker.countDown();
        auditHeld.answer("done");
      }
    }
  }

  @Test
  void waitTimeout_answers503_afterMaxWait_withoutCallingTheHandler() throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofMillis(300));
    start(edge("/chat", llm));
    try (Socket first = RawHttp.sendGet(port, "/chat")) {
      HeldRequests.Held held = app.next();

      long before = System.nanoTime();
      RawHttp.Answer refused = RawHttp.get(port, "/chat");
      long tookMillis = (System.nanoTime() - before) / 1_000_000;

      assertThat(refused.status()).isEqualTo(503);
      assertThat(tookMillis).as("never before maxWait").isGreaterThanOrEqualTo(300L);
      assertThat(llm.stats().rejected(BulkheadFullException.Reason.WAIT_TIMEOUT)).isEqualTo(1);
      assertThat(app.count()).isZero();
      held.answer("done");
    }
  }

  @Test
  void routesWithoutACompartment_andBypassedRoutes_areUntouched_whileTheCompartmentIsFull()
      throws Exception {
    Bulkhead server = Bulkhead.builder("server").limit(1).build();
    start(
        BulkheadHandler.of(
            RouteTable.builder().route("/api/**", server).bypass("/api/now").build()));
    try (Socket first = RawHttp.sendGet(port, "/api/slow")) {
      HeldRequests.Held held = app.next();
      assertThat(RawHttp.get(port, "/api/other/now").status()).isEqualTo(503); // full

      RawHttp.Answer unrouted = RawHttp.get(port, "/now/free");
      RawHttp.Answer bypassed = RawHttp.get(port, "/api/now");

      assertThat(unrouted.status()).isEqualTo(200);
      assertThat(unrouted.body()).isEqualTo("now /now/free");
      assertThat(bypassed.status()).isEqualTo(200);
      assertThat(bypassed.body()).isEqualTo("now /api/now");
      assertThat(handler.routes().route("/api/now")).isEqualTo(Route.bypass());
      assertThat(handler.routes().route("/api/x")).isEqualTo(Route.through(server));
      assertThat(handler.routes().route("/elsewhere")).isEqualTo(Route.bypass());
      assertThat(server.stats().admitted()).isEqualTo(1); // neither went through the compartment
      held.answer("done");
    }
  }

  @Test
  void routesAreTheTablesOwn_andTheHandlerSaysThem() {
    Bulkhead server = Bulkhead.builder("server").limit(5).build();
    Bulkhead chat = Bulkhead.builder("chat").limit(1).build();
    RouteTable routes =
        RouteTable.builder().route("/**", server).route("/chat", chat).bypass("/metrics").build();
    BulkheadHandler h = BulkheadHandler.of(routes);

    assertThat(h.routes()).isSameAs(routes);
    assertThat(h)
        .hasToString(
            "BulkheadHandler[/** -> bulkhead 'server', /chat -> bulkhead 'chat', /metrics -> bypass]");
    assertThatThrownBy(() -> BulkheadHandler.of(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("routes");
  }

  @Test
  void slotIsHeldUntilTheAsyncHandlerCompletesTheCallback_notUntilHandleReturns() throws Exception {
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    start(edge("/chat", llm));
    try (Socket first = RawHttp.sendGet(port, "/chat")) {
      HeldRequests.Held held = app.next(); // handle() has returned; the callback is pending

      assertThat(llm.stats().inFlight()).isEqualTo(1);
      assertThat(RawHttp.get(port, "/chat").status()).isEqualTo(503);

      held.answer("done");
      assertThat(RawHttp.read(first.getInputStream()).status()).isEqualTo(200);
      await().atMost(5, SECONDS).until(() -> llm.stats().inFlight() == 0);
    }
    try (Socket second = RawHttp.sendGet(port, "/chat")) {
      app.next().answer("again");
      assertThat(RawHttp.read(second.getInputStream()).body()).isEqualTo("again");
    }
  }

  @Test
  void waitingRequestsHoldNoThread_manyMoreWaitersThanServerThreads() throws Exception {
    // 12 server threads in all; 40 requests wait for one slot. A waiter that held a thread would
    // starve the server long before the 40th arrived.
    Bulkhead one = Bulkhead.builder("one").limit(1).unboundedQueue().unboundedWait().build();
    start(edge("/**", one), new QueuedThreadPool(12, 4));
    int waiters = 40;
    try (RawHttp.Connections connections = new RawHttp.Connections()) {
      for (int i = 0; i < waiters; i++) {
        connections.sendGet(port, "/w" + i);
      }
      HeldRequests.Held first = app.next();
      await().atMost(10, SECONDS).until(() -> one.stats().waiting() == waiters - 1);

      // Each answer frees the slot for the next waiter, which runs on a server thread.
      first.answer(first.path());
      for (int i = 1; i < waiters; i++) {
        HeldRequests.Held next = app.next();
        assertThat(next.thread).startsWith("test-server");
        next.answer(next.path());
      }
      for (int i = 0; i < waiters; i++) {
        assertThat(RawHttp.read(connections.get(i).getInputStream()).status()).isEqualTo(200);
      }
      await().atMost(5, SECONDS).until(() -> one.stats().completed() == waiters);
    }
  }

  @Test
  void admittedInArrivalOrder() throws Exception {
    Bulkhead one = compartment("one", 1, 10, Duration.ofSeconds(30));
    start(edge("/**", one));
    try (RawHttp.Connections connections = new RawHttp.Connections()) {
      connections.sendGet(port, "/first");
      HeldRequests.Held current = app.next();
      for (int i = 0; i < 5; i++) {
        connections.sendGet(port, "/q" + i);
        int expected = i + 1;
        await().atMost(5, SECONDS).until(() -> one.stats().waiting() == expected);
      }
      List<String> order = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        current.answer("x");
        current = app.next();
        order.add(current.path());
      }
      current.answer("x");
      assertThat(order).containsExactly("/q0", "/q1", "/q2", "/q3", "/q4");
    }
  }

  @Test
  void clientThatDisconnectsWhileQueued_freesItsPlace_andIsNeverHandled() throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(60));
    start(edge("/chat", llm));
    try (Socket holder = RawHttp.sendGet(port, "/chat?who=holder")) {
      HeldRequests.Held held = app.next();

      Socket leaver = RawHttp.sendGet(port, "/chat?who=leaver");
      await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 1);
      assertThat(RawHttp.get(port, "/chat?who=refused").status()).isEqualTo(503); // queue of 1 full

      leaver.close(); // the client gives up while its request waits

      await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 0);
      assertThat(llm.stats().cancelled()).isEqualTo(1);
      try (Socket next = RawHttp.connect(port)) {
        RawHttp.sendGet(next, "/chat?who=next"); // the freed place is usable again
        await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 1);

        held.answer("holder");
        assertThat(RawHttp.read(holder.getInputStream()).body()).isEqualTo("holder");
        HeldRequests.Held admitted = app.next();
        assertThat(admitted.request.getHttpURI().getQuery()).isEqualTo("who=next");
        admitted.answer("next");
        assertThat(RawHttp.read(next.getInputStream()).body()).isEqualTo("next");
      }
      assertThat(app.poll(200)).isNull(); // the leaver's request never reached the handler
      assertThat(llm.stats().admitted()).isEqualTo(2);
    }
  }

  @Test
  void disconnectWhileQueued_onAKeepAliveConnection_isSeenForTheSecondRequestToo()
      throws Exception {
    Bulkhead llm = compartment("llm", 1, 4, Duration.ofSeconds(60));
    start(edge("/chat", llm));
    try (Socket holder = RawHttp.connect(port);
        Socket keepAlive = RawHttp.connect(port)) {
      RawHttp.sendGet(holder, "/chat?n=0");
      HeldRequests.Held held = app.next();

      // First request on the keep-alive connection waits, is admitted, answered.
      RawHttp.sendGet(keepAlive, "/chat?n=1");
      await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 1);
      held.answer("0");
      HeldRequests.Held one = app.next();
      one.answer("1");
      assertThat(RawHttp.read(keepAlive.getInputStream()).body()).isEqualTo("1");

      // Hold the slot again; the second request on the same connection waits, then the client
      // leaves.
      try (Socket again = RawHttp.sendGet(port, "/chat?n=2")) {
        HeldRequests.Held two = app.next();
        RawHttp.sendGet(keepAlive, "/chat?n=3");
        await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 1);

        keepAlive.close();

        await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 0);
        assertThat(llm.stats().cancelled()).isEqualTo(1);
        two.answer("2");
      }
    }
  }

  @Test
  void pipelinedRequestWhileQueued_isNotMistakenForADisconnect_andBothAreAnswered()
      throws Exception {
    Bulkhead llm = compartment("llm", 1, 4, Duration.ofSeconds(60));
    start(edge("/chat", llm));
    try (Socket holder = RawHttp.connect(port);
        Socket pipelining = RawHttp.connect(port)) {
      RawHttp.sendGet(holder, "/chat?n=0");
      HeldRequests.Held held = app.next();

      RawHttp.sendGet(pipelining, "/chat?n=1");
      await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 1);
      long judged = handler.watcherVerdicts();
      pipelining
          .getOutputStream()
          .write(
              RawHttp.getRequest("/now?n=2").getBytes(StandardCharsets.US_ASCII)); // bytes, not EOF
      // The watcher has looked at the readable socket: bytes, so it stopped watching.
      await().atMost(5, SECONDS).until(() -> handler.watcherVerdicts() == judged + 1);
      assertThat(llm.stats().waiting()).isEqualTo(1);
      assertThat(llm.stats().cancelled()).isZero();

      held.answer("0");
      app.next().answer("1");
      InputStream in = pipelining.getInputStream();
      assertThat(RawHttp.read(in).body()).isEqualTo("1");
      assertThat(RawHttp.read(in).body()).isEqualTo("now /now"); // Jetty still had every byte
    }
  }

  @Test
  void unhandledRequest_gets404_andAThrowingHandler_gets500_andBothFreeTheSlot() throws Exception {
    Bulkhead one = Bulkhead.builder("one").limit(1).build();
    start(edge("/**", one));

    assertThat(RawHttp.get(port, "/unhandled").status()).isEqualTo(404);
    await().atMost(5, SECONDS).until(() -> one.stats().inFlight() == 0);
    assertThat(RawHttp.get(port, "/throw").status()).isEqualTo(500);
    await().atMost(5, SECONDS).until(() -> one.stats().inFlight() == 0);
    assertThat(RawHttp.get(port, "/now").status()).isEqualTo(200);
    // The slot frees just after Jetty's callback completes, so just after the client has its
    // answer.
    await().atMost(5, SECONDS).until(() -> one.stats().completed() == 3);
  }

  @Test
  void idleTimeoutWhileQueued_removesTheWaiter() throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(60));
    start(edge("/chat", llm));
    ((ServerConnector) server.getConnectors()[0]).setIdleTimeout(400);
    try (Socket holder = RawHttp.connect(port);
        Socket waiter = RawHttp.connect(port)) {
      RawHttp.sendGet(holder, "/chat");
      HeldRequests.Held held = app.next();
      RawHttp.sendGet(waiter, "/chat");
      await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 1);

      // Jetty fails the idle request through its failure listeners; the waiter leaves the queue.
      await().atMost(10, SECONDS).until(() -> llm.stats().cancelled() == 1);
      assertThat(llm.stats().waiting()).isZero();
      held.answer("late");
    }
  }

  @Test
  void disconnectWatcherThread_startsOnlyWhenARequestWaits_andStopsWithTheServer()
      throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofSeconds(60));
    start(edge("/chat", llm));
    assertThat(RawHttp.get(port, "/now").status()).isEqualTo(200);
    assertThat(handler.isWatching()).isFalse();

    try (Socket holder = RawHttp.connect(port);
        Socket waiter = RawHttp.connect(port)) {
      RawHttp.sendGet(holder, "/chat");
      HeldRequests.Held held = app.next();
      RawHttp.sendGet(waiter, "/chat");
      await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 1);
      assertThat(handler.isWatching()).isTrue();
      held.answer("x");
      app.next().answer("y");
    }
    server.stop();
    server = null;
    assertThat(handler.isWatching()).isFalse();
    assertThat(Thread.getAllStackTraces().keySet())
        .noneMatch(t -> t.getName().equals("bulkhead-jetty-disconnects"));
  }

  @Test
  void concurrentRequests_neverExceedTheLimit_andEveryOneIsAnsweredOrRefused() throws Exception {
    Bulkhead llm = compartment("llm", 3, 5, Duration.ofMillis(200));
    start(edge("/**", llm));
    int requests = 30;
    ExecutorService clients = Executors.newFixedThreadPool(requests);
    try {
      List<Future<RawHttp.Answer>> answers = new ArrayList<>();
      for (int i = 0; i < requests; i++) {
        String path = "/r" + i;
        answers.add(clients.submit(() -> RawHttp.get(port, path)));
      }
      // Answer whatever arrives, checking the compartment's own count each time.
      CompletableFuture<Void> answering =
          CompletableFuture.runAsync(
              () -> {
                try {
                  HeldRequests.Held h;
                  while ((h = app.poll(1500)) != null) {
                    assertThat(llm.stats().inFlight()).isLessThanOrEqualTo(3);
                    Thread.sleep(20); // NOPMD: hold the slot a little so others queue and time out
                    h.answer("ok");
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      int ok = 0;
      int refused = 0;
      for (Future<RawHttp.Answer> f : answers) {
        int status = f.get(30, SECONDS).status();
        if (status == 200) {
          ok++;
        } else if (status == 503) {
          refused++;
        }
      }
      answering.get(30, SECONDS);
      assertThat(ok + refused).isEqualTo(requests);
      assertThat(ok).isEqualTo(llm.stats().admitted());
      assertThat(refused).isEqualTo(llm.stats().rejected());
      await().atMost(5, SECONDS).until(() -> llm.stats().inFlight() == 0);
    } finally {
      clients.shutdownNow();
    }
  }
}
