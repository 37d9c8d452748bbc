package io.bulkhead.jetty;

import static io.bulkhead.edge.testing.HostileClients.BIG_BODY_CHUNK;
import static io.bulkhead.edge.testing.HostileClients.BIG_BODY_CHUNKS;
import static io.bulkhead.edge.testing.HostileClients.FD_SLACK;
import static io.bulkhead.edge.testing.HostileClients.IDLE_CLIENTS;
import static io.bulkhead.edge.testing.HostileClients.LEAVERS;
import static io.bulkhead.edge.testing.HostileClients.LIMIT;
import static io.bulkhead.edge.testing.HostileClients.MAX_QUEUE;
import static io.bulkhead.edge.testing.HostileClients.SLOW_HEAD_CLIENTS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadStats;
import io.bulkhead.edge.RouteTable;
import io.bulkhead.edge.testing.EdgeScenarios;
import io.bulkhead.edge.testing.H2c;
import io.bulkhead.edge.testing.HostileClients;
import io.bulkhead.edge.testing.HostileClients.Resources;
import io.bulkhead.edge.testing.RawHttp;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Clients that never behave: idle and half-sent connections by the thousand, clients that leave
 * while queued or halfway through a response, oversized heads, an HTTP/2 stream flood. A
 * compartment of 2 slots and a small queue guards {@code /chat}; {@code /login} is unguarded. Each
 * case checks that {@code /login} still answers, that no slot leaks and that the counts are exact;
 * resource figures (heap, threads, descriptors) are printed, and asserted only against bounds a
 * leak would break.
 */
class HostileClientsTest {

  /** The README's connection cap for the demo's servers. */
  private static final int MAX_CONNECTIONS = 512;

  /** Short so the test does not wait the demo's 30 s for silent clients to be dropped. */
  private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(1);

  private static final Duration HANDLING_IDLE_TIMEOUT = Duration.ofSeconds(60);
  private static final int SERVER_THREADS = 32;

  /**
   * Slack for threads started lazily (the disconnect watcher, a scheduler): with the server's pool
   * grown to its maximum, a thread per connection or per stream would still break the bound.
   */
  private static final int THREAD_SLACK = SERVER_THREADS + 16;

  private Server server;
  private H2c h2c;
  private final HeldRequests held = new HeldRequests();
  private final Bulkhead llm = HostileClients.chatCompartment();
  private int port;

  @AfterEach
  void stop() throws Exception {
    if (h2c != null) {
      h2c.close();
    }
    if (server != null) {
      server.stop();
    }
  }

  /** The server as the README's "Limits the handler cannot set" configures it. */
  private void start(boolean h2c) throws Exception {
    QueuedThreadPool pool = new QueuedThreadPool(SERVER_THREADS, 4);
    pool.setName("hostile-server");
    server = new Server(pool);
    HttpConfiguration http = new HttpConfiguration();
    http.setIdleTimeout(HANDLING_IDLE_TIMEOUT.toMillis());
    http.setSendServerVersion(false);
    http.setSendXPoweredBy(false);
    ServerConnector connector;
    if (h2c) {
      HTTP2CServerConnectionFactory h2 = new HTTP2CServerConnectionFactory(http);
      h2.setMaxConcurrentStreams(1_024); // let the whole flood reach the edge at once
      connector = new ServerConnector(server, 1, 1, h2);
    } else {
      connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
    }
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    connector.setIdleTimeout(IDLE_TIMEOUT.toMillis());
    // Clients past the cap wait in the kernel's accept queue; make it hold all of them.
    connector.setAcceptQueueSize(IDLE_CLIENTS + SLOW_HEAD_CLIENTS + MAX_CONNECTIONS);
    server.addConnector(connector);
    server.addBean(new NetworkConnectionLimit(MAX_CONNECTIONS, connector));
    BulkheadHandler edge = BulkheadHandler.of(RouteTable.builder().route("/chat/**", llm).build());
    edge.setHandler(new App(held));
    server.setHandler(edge);
    server.start();
    port = connector.getLocalPort();
  }

  @Test
  void idleAndSlowHeadConnections_leaveLoginAnswering_andNoSlotOrResourceLeaks() throws Exception {
    start(false);
    EdgeScenarios.idleAndSlowHeads(
        new EdgeScenarios.Edge(port, llm, held, "/login"),
        IDLE_CLIENTS,
        SLOW_HEAD_CLIENTS,
        THREAD_SLACK,
        FD_SLACK,
        "jetty");
  }

  @Test
  void clientsLeavingWhileQueuedOrMidResponse_freeEverySlot_withExactCounts() throws Exception {
    start(false);
    Resources before = Resources.now();
    Resources during;
    try (Socket holder1 = RawHttp.sendGet(port, "/chat?who=h1");
        Socket holder2 = RawHttp.sendGet(port, "/chat?who=h2")) {
      HeldRequests.Held first = held.next();
      HeldRequests.Held second = held.next();
      // Queued leavers, a queue-full at a time: all wait, all leave, all are counted as cancelled.
      for (int left = 0; left < LEAVERS; left += MAX_QUEUE) {
        int batch = Math.min(MAX_QUEUE, LEAVERS - left);
        List<Socket> queued = new ArrayList<>();
        for (int i = 0; i < batch; i++) {
          queued.add(RawHttp.sendGet(port, "/chat?who=leaver"));
        }
        await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == batch);
        RawHttp.closeAll(queued);
        await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 0);
      }
      assertThat(llm.stats().cancelled()).isEqualTo(LEAVERS);
      during = Resources.now();
      assertThat(held.poll(100)).as("no leaver reached the handler").isNull();
      first.answer("h1");
      second.answer("h2");
      assertThat(RawHttp.read(holder1).status()).isEqualTo(200);
      assertThat(RawHttp.read(holder2).status()).isEqualTo(200);
    }
    await().atMost(10, SECONDS).until(() -> llm.stats().inFlight() == 0);

    // Mid-response leavers, a slot's worth at a time: each reads the start of a 4 MiB body and
    // resets.
    for (int left = 0; left < LEAVERS; left += LIMIT) {
      assertThat(HostileClients.resetMidResponse(port, "/chat/big", LIMIT))
          .allSatisfy(status -> assertThat(status).contains(" 200 ")); // the body had begun
      await().atMost(10, SECONDS).until(() -> llm.stats().inFlight() == 0);
    }

    assertThat(RawHttp.get(port, "/login").status()).isEqualTo(200);
    BulkheadStats stats = llm.stats();
    assertThat(stats.inFlight()).isZero();
    assertThat(stats.waiting()).isZero();
    assertThat(stats.admitted()).isEqualTo(LIMIT + LEAVERS);
    assertThat(stats.completed()).isEqualTo(stats.admitted());
    assertThat(stats.cancelled())
        .isEqualTo(LEAVERS); // only the queued ones: the others were served
    assertThat(stats.rejected()).isZero();
    await().atMost(30, SECONDS).until(() -> Resources.now().fds() <= before.fds() + FD_SLACK);
    Resources after = Resources.now();
    Resources.print("leavers", before, during, after);
    assertThat(after.threads()).isLessThanOrEqualTo(before.threads() + THREAD_SLACK);
  }

  @Test
  void hugeHead_gets431_withoutTakingASlot() throws Exception {
    start(false);
    assertThat(HostileClients.hugeHead(port, "/chat")).contains(" 431 ");
    assertThat(RawHttp.get(port, "/login").status()).isEqualTo(200);
    assertThat(held.count()).isZero();
    BulkheadStats stats = llm.stats();
    assertThat(stats.admitted()).isZero();
    assertThat(stats.rejected()).isZero();
    assertThat(stats.inFlight()).isZero();
  }

  @Test
  void http2StreamFlood_excessGets503_andResetsLeaveTheQueue_withExactCounts() throws Exception {
    start(true);
    Resources before = Resources.now();
    h2c = H2c.connect(port);
    int flood = 500;
    List<H2c.Exchange> answers = new ArrayList<>();
    for (int i = 0; i < flood; i++) {
      answers.add(h2c.get("/chat?who=" + i));
    }
    int refused = flood - LIMIT - MAX_QUEUE;
    await().atMost(30, SECONDS).until(() -> count(answers, 503) == refused);
    await()
        .atMost(10, SECONDS)
        .until(() -> llm.stats().inFlight() == LIMIT && llm.stats().waiting() == MAX_QUEUE);
    Resources during = Resources.now();
    List<HeldRequests.Held> admitted = List.of(held.next(), held.next());
    Set<String> holders = new HashSet<>();
    for (HeldRequests.Held h : admitted) {
      holders.add(h.request.getHttpURI().getQuery());
    }

    int reset = 0;
    for (int i = 0; i < flood; i++) {
      if (!answers.get(i).status().isDone() && !holders.contains("who=" + i)) {
        answers.get(i).reset();
        reset++;
      }
    }
    assertThat(reset).isEqualTo(MAX_QUEUE);
    await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 0);
    assertThat(llm.stats().cancelled()).isEqualTo(MAX_QUEUE);

    for (HeldRequests.Held h : admitted) {
      h.answer("chat");
    }
    await().atMost(10, SECONDS).until(() -> count(answers, 200) == LIMIT);
    await().atMost(10, SECONDS).until(() -> llm.stats().inFlight() == 0);
    assertThat(held.poll(100)).as("no reset stream reached the handler").isNull();
    BulkheadStats stats = llm.stats();
    assertThat(stats.waiting()).isZero();
    assertThat(stats.admitted()).isEqualTo(LIMIT);
    assertThat(stats.completed()).isEqualTo(LIMIT);
    assertThat(stats.rejected()).isEqualTo(refused);
    assertThat(count(answers, 503)).isEqualTo(refused);

    // the same connection still serves the unguarded route
    assertThat(h2c.get("/login").status().get(10, SECONDS)).isEqualTo(200);
    h2c.close();
    h2c = null;
    await().atMost(30, SECONDS).until(() -> Resources.now().fds() <= before.fds() + FD_SLACK);
    Resources after = Resources.now();
    Resources.print("h2-flood", before, during, after);
    assertThat(after.threads()).isLessThanOrEqualTo(before.threads() + THREAD_SLACK);
  }

  private static long count(List<H2c.Exchange> answers, int status) {
    return answers.stream().filter(a -> a.answered(status)).count();
  }

  /**
   * {@code /login} answers at once, {@code /chat/big} streams a 4 MiB body a chunk at a time (each
   * written when the client has taken the previous one), everything else is held.
   */
  private static final class App extends Handler.Abstract {
    private final HeldRequests held;

    App(HeldRequests held) {
      this.held = held;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
      String path = Request.getPathInContext(request);
      if (path.equals("/login")) {
        Content.Sink.write(response, true, "welcome", callback);
        return true;
      }
      if (path.equals("/chat/big")) {
        writeChunk(response, 0, callback);
        return true;
      }
      return held.handle(request, response, callback);
    }

    private static void writeChunk(Response response, int index, Callback done) {
      boolean last = index == BIG_BODY_CHUNKS - 1;
      byte[] chunk = new byte[BIG_BODY_CHUNK];
      response.write(
          last,
          java.nio.ByteBuffer.wrap(chunk),
          Callback.from(
              () -> {
                if (last) {
                  done.succeeded();
                } else {
                  writeChunk(response, index + 1, done);
                }
              },
              done::failed));
    }
  }
}
