package io.bulkhead.servlet;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadStats;
import io.bulkhead.edge.RouteTable;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
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

  private static final int LIMIT = 2;
  private static final int MAX_QUEUE = 8;
  private static final int IDLE_CLIENTS = 1_000;
  private static final int SLOW_HEAD_CLIENTS = 200;
  private static final int LEAVERS = 100;
  private static final int BIG_BODY_CHUNK = 64 * 1024;
  private static final int BIG_BODY_CHUNKS = 64; // 4 MiB: far more than the socket buffers hold

  /**
   * Slack for the containers' worker pools (Tomcat's grows to 200 threads) and threads started
   * lazily: a thread per connection (1,200) would still break the bound.
   */
  private static final int THREAD_SLACK = 200 + 16;

  /** Slack for descriptors opened lazily (a jar, a selector). */
  private static final int FD_SLACK = 32;

  private Container.Running server;
  private final HeldServlet held = new HeldServlet();
  private final Bulkhead llm =
      Bulkhead.builder("llm")
          .limit(LIMIT)
          .maxQueue(MAX_QUEUE)
          .maxWait(Duration.ofSeconds(60))
          .build();
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
    assertThat(RawHttp.get(port, "/login/now").status()).isEqualTo(200); // warm up first
    Resources before = Resources.now();
    List<Socket> hostile = new ArrayList<>();
    List<Socket> chats = new ArrayList<>();
    try {
      for (int i = 0; i < LIMIT + MAX_QUEUE; i++) {
        chats.add(RawHttp.sendGet(port, "/chat/" + i));
      }
      await()
          .atMost(10, SECONDS)
          .until(() -> llm.stats().inFlight() == LIMIT && llm.stats().waiting() == MAX_QUEUE);
      for (int i = 0; i < IDLE_CLIENTS; i++) {
        hostile.add(RawHttp.connect(port)); // connects and never sends a byte
      }
      byte[] partialHead = "GET /chat/x HTTP/1.1\r\nHo".getBytes(StandardCharsets.US_ASCII);
      for (int i = 0; i < SLOW_HEAD_CLIENTS; i++) {
        Socket slow = RawHttp.connect(port);
        slow.getOutputStream().write(partialHead); // a few bytes, then nothing
        slow.getOutputStream().flush();
        hostile.add(slow);
      }
      Resources during = Resources.now();

      assertThat(RawHttp.get(port, "/login/now").status()).isEqualTo(200);
      assertThat(llm.stats().admitted()).isEqualTo(LIMIT); // no half-sent /chat head took a slot
      assertThat(llm.stats().rejected()).isZero();

      for (int i = 0; i < LIMIT + MAX_QUEUE; i++) {
        held.next().answer("chat");
      }
      for (Socket chat : chats) {
        assertThat(RawHttp.read(chat).body()).isEqualTo("chat");
      }
      BulkheadStats stats = atRest();
      assertThat(stats.admitted()).isEqualTo(LIMIT + MAX_QUEUE);
      assertThat(stats.completed()).isEqualTo(stats.admitted());
      assertThat(stats.cancelled()).isZero();

      close(hostile);
      close(chats);
      await().atMost(30, SECONDS).until(() -> Resources.now().fds <= before.fds + FD_SLACK);
      Resources after = Resources.now();
      print(container + " idle+slow-head", before, during, after);
      assertThat(after.threads).isLessThanOrEqualTo(before.threads + THREAD_SLACK);
    } finally {
      close(hostile);
      close(chats);
    }
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
      close(queued);
      for (HeldServlet.Held h : heldCalls) {
        h.answer("holder");
      }
      for (Socket socket : holding) {
        assertThat(RawHttp.read(socket).status()).isEqualTo(200);
      }
      close(holding);
      atRest();
    }
    Resources during = Resources.now();

    // Mid-response leavers, a slot's worth at a time: each reads the start of a 4 MiB body and
    // resets.
    for (int left = 0; left < LEAVERS; left += LIMIT) {
      List<Socket> readers = new ArrayList<>();
      for (int i = 0; i < LIMIT; i++) {
        Socket reader = RawHttp.sendGet(port, "/chat/big");
        readers.add(reader);
        assertThat(readStatusLine(reader.getInputStream())).contains(" 200 "); // the body has begun
      }
      for (Socket reader : readers) {
        reader.setSoLinger(true, 0); // a reset, as a killed client sends
        reader.close();
      }
      atRest();
    }

    assertThat(RawHttp.get(port, "/login/now").status()).isEqualTo(200);
    BulkheadStats stats = atRest();
    assertThat(stats.admitted()).isEqualTo(holders + LEAVERS + LEAVERS);
    assertThat(stats.completed()).isEqualTo(stats.admitted());
    assertThat(stats.cancelled()).isZero(); // HTTP/1.1 gives the filter no way to see them leave
    assertThat(stats.rejected()).isZero();
    await().atMost(30, SECONDS).until(() -> Resources.now().fds <= before.fds + FD_SLACK);
    Resources after = Resources.now();
    print(container + " leavers", before, during, after);
    assertThat(after.threads).isLessThanOrEqualTo(before.threads + THREAD_SLACK);
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void hugeHead_isRefusedByTheContainer_withoutTakingASlot(Container container) throws Exception {
    start(container);
    String huge =
        "GET /chat/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: " + "a".repeat(64 * 1024) + "\r\n\r\n";
    String status;
    try (Socket socket = RawHttp.connect(port)) {
      // Sent from another thread: the server may answer and stop reading before the head is all in.
      CompletableFuture<Void> sent =
          CompletableFuture.runAsync(
              () -> {
                try {
                  OutputStream out = socket.getOutputStream();
                  out.write(huge.getBytes(StandardCharsets.US_ASCII));
                  out.flush();
                } catch (IOException serverStoppedReading) {
                  // expected once the server has answered and closed
                }
              });
      status = readStatusLine(socket.getInputStream());
      sent.get(10, SECONDS);
    }
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

  private static String readStatusLine(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int b;
    while ((b = in.read()) != -1 && b != '\n') {
      line.append((char) b);
    }
    return line.toString();
  }

  private static void close(List<Socket> sockets) throws IOException {
    for (Socket socket : sockets) {
      socket.close();
    }
  }

  private static void print(String test, Resources before, Resources during, Resources after) {
    System.out.printf(
        "hostile %s: heap MiB %d/%d/%d, threads %d/%d/%d, fds %d/%d/%d"
            + " (before/during/after)%n",
        test,
        before.heapMib,
        during.heapMib,
        after.heapMib,
        before.threads,
        during.threads,
        after.threads,
        before.fds,
        during.fds,
        after.fds);
  }

  /** What the process holds at one moment: used heap, live threads, open file descriptors. */
  private record Resources(long heapMib, int threads, long fds) {
    static Resources now() throws IOException {
      long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() >> 20;
      int threads = ManagementFactory.getThreadMXBean().getThreadCount();
      try (Stream<Path> open = Files.list(Path.of("/proc/self/fd"))) {
        return new Resources(heap, threads, open.count());
      }
    }
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
