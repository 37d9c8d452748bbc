package io.bulkhead.servlet;

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
import io.bulkhead.edge.testing.HostileClients;
import io.bulkhead.edge.testing.HostileClients.Resources;
import io.bulkhead.edge.testing.RawHttp;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Clients that never behave, in front of the filter on each container with its default connection
 * settings: idle and half-sent connections by the thousand, clients that leave while queued or
 * halfway through a response, an oversized head. A compartment of 2 slots and a small queue guards
 * {@code /chat/*}; {@code /login/now} is unguarded. Each case checks that the unguarded route still
 * answers, that no slot leaks and that the counts are exact; resource figures are printed and
 * asserted only against bounds a leak would break.
 */
class HostileClientsTest {

  /**
   * Slack for the containers' worker pools (Tomcat's grows to 200 threads) and threads started
   * lazily: a thread per connection (1,200) would still break the bound.
   */
  private static final int THREAD_SLACK = 200 + 16;

  private Container.Running server;
  private final HeldServlet held = new HeldServlet();
  private final Bulkhead llm = HostileClients.chatCompartment();
  private int port;

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
  }

  private void start(Container container) throws Exception {
    server =
        container.start(
            new Returns(),
            BulkheadFilter.of(RouteTable.builder().route("/chat/**", llm).build()),
            new App(held),
            Container.Options.DEFAULT);
    port = server.port();
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void idleAndSlowHeadConnections_leaveLoginAnswering_andNoSlotOrResourceLeaks(Container container)
      throws Exception {
    start(container);
    EdgeScenarios.idleAndSlowHeads(
        new EdgeScenarios.Edge(port, llm, held, "/login/now"),
        IDLE_CLIENTS,
        SLOW_HEAD_CLIENTS,
        THREAD_SLACK,
        FD_SLACK,
        container.toString());
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void clientsLeavingWhileQueuedOrMidResponse_freeEverySlot(Container container) throws Exception {
    start(container);
    Resources before = Resources.now();
    // HTTP/1.1 leavers while queued are not seen (README): each is admitted once the holders
    // answer,
    // served to a closed socket, and its slot freed like any other.
    int holders = 0;
    for (int left = 0; left < LEAVERS; left += MAX_QUEUE) {
      int batch = Math.min(MAX_QUEUE, LEAVERS - left);
      List<Socket> holding = new ArrayList<>();
      for (int i = 0; i < LIMIT; i++) {
        holding.add(RawHttp.sendGet(port, "/chat/holder"));
      }
      List<HeldServlet.Held> heldCalls = List.of(held.next(), held.next());
      holders += LIMIT;
      List<Socket> queued = new ArrayList<>();
      for (int i = 0; i < batch; i++) {
        queued.add(RawHttp.sendGet(port, "/chat/now/leaver"));
      }
      await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == batch);
      RawHttp.closeAll(queued);
      for (HeldServlet.Held h : heldCalls) {
        h.answer("holder");
      }
      for (Socket socket : holding) {
        assertThat(RawHttp.read(socket).status()).isEqualTo(200);
      }
      RawHttp.closeAll(holding);
      atRest();
    }
    Resources during = Resources.now();

    // Mid-response leavers, a slot's worth at a time: each reads the start of a 4 MiB body and
    // resets.
    for (int left = 0; left < LEAVERS; left += LIMIT) {
      assertThat(HostileClients.resetMidResponse(port, "/chat/big", LIMIT))
          .allSatisfy(status -> assertThat(status).contains(" 200 ")); // the body had begun
      atRest();
    }

    assertThat(RawHttp.get(port, "/login/now").status()).isEqualTo(200);
    BulkheadStats stats = atRest();
    assertThat(stats.admitted()).isEqualTo(holders + LEAVERS + LEAVERS);
    assertThat(stats.completed()).isEqualTo(stats.admitted());
    assertThat(stats.cancelled()).isZero(); // HTTP/1.1 gives the filter no way to see them leave
    assertThat(stats.rejected()).isZero();
    await().atMost(30, SECONDS).until(() -> Resources.now().fds() <= before.fds() + FD_SLACK);
    Resources after = Resources.now();
    Resources.print(container + " leavers", before, during, after);
    assertThat(after.threads()).isLessThanOrEqualTo(before.threads() + THREAD_SLACK);
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void hugeHead_isRefusedByTheContainer_withoutTakingASlot(Container container) throws Exception {
    start(container);
    String status = HostileClients.hugeHead(port, "/chat/x");
    // Tomcat answers an oversized head 400 Bad Request, Jetty 431 Request Header Fields Too Large.
    int refusal = container == Container.TOMCAT ? 400 : 431;
    assertThat(status).contains(" " + refusal + " ");
    assertThat(RawHttp.get(port, "/login/now").status()).isEqualTo(200);
    assertThat(held.seen()).containsExactly("/login/now");
    BulkheadStats stats = llm.stats();
    assertThat(stats.admitted()).isZero();
    assertThat(stats.rejected()).isZero();
    assertThat(stats.inFlight()).isZero();
  }

  private BulkheadStats atRest() {
    await()
        .atMost(10, SECONDS)
        .until(() -> llm.stats().inFlight() == 0 && llm.stats().waiting() == 0);
    return llm.stats();
  }

  /** {@code /chat/big} streams a 4 MiB body; everything else goes to the held servlet. */
  private static final class App extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient HeldServlet held;

    App(HeldServlet held) {
      this.held = held;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      if (!request.getRequestURI().equals("/chat/big")) {
        held.service(request, response);
        return;
      }
      response.setContentType("application/octet-stream");
      OutputStream out = response.getOutputStream();
      byte[] chunk = new byte[BIG_BODY_CHUNK];
      for (int i = 0; i < BIG_BODY_CHUNKS; i++) {
        out.write(chunk); // throws once the client has reset the connection
        out.flush();
      }
    }
  }
}
