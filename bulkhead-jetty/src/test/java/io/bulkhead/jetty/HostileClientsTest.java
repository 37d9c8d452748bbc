package io.bulkhead.jetty;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadStats;
import io.bulkhead.edge.RouteTable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.ErrorCode;
import org.eclipse.jetty.http2.api.Session;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.frames.HeadersFrame;
import org.eclipse.jetty.http2.frames.ResetFrame;
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

  private static final int LIMIT = 2;
  private static final int MAX_QUEUE = 8;

  /** The README's connection cap for the demo's servers. */
  private static final int MAX_CONNECTIONS = 512;

  /** Short so the test does not wait the demo's 30 s for silent clients to be dropped. */
  private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(1);

  private static final Duration HANDLING_IDLE_TIMEOUT = Duration.ofSeconds(60);
  private static final int IDLE_CLIENTS = 1_000;
  private static final int SLOW_HEAD_CLIENTS = 200;
  private static final int LEAVERS = 100;
  private static final int BIG_BODY_CHUNK = 64 * 1024;
  private static final int BIG_BODY_CHUNKS = 64; // 4 MiB: far more than the socket buffers hold
  private static final int SERVER_THREADS = 32;

  /**
   * Slack for threads started lazily (the disconnect watcher, a scheduler): with the server's pool
   * grown to its maximum, a thread per connection or per stream would still break the bound.
   */
  private static final int THREAD_SLACK = SERVER_THREADS + 16;

  /** Slack for descriptors opened lazily (a jar, an epoll selector). */
  private static final int FD_SLACK = 32;

  private Server server;
  private HTTP2Client h2client;
  private final HeldRequests held = new HeldRequests();
  private final Bulkhead llm =
      Bulkhead.builder("llm")
          .limit(LIMIT)
          .maxQueue(MAX_QUEUE)
          .maxWait(Duration.ofSeconds(60))
          .build();
  private int port;

  @AfterEach
  void stop() throws Exception {
    if (h2client != null) {
      h2client.stop();
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
    assertThat(RawHttp.get(port, "/login").status).isEqualTo(200); // warm up before measuring
    Resources before = Resources.now();
    List<Socket> hostile = new ArrayList<>();
    List<Socket> chats = new ArrayList<>();
    try {
      for (int i = 0; i < LIMIT + MAX_QUEUE; i++) {
        chats.add(RawHttp.sendGet(port, "/chat?who=" + i));
      }
      await()
          .atMost(10, SECONDS)
          .until(() -> llm.stats().inFlight() == LIMIT && llm.stats().waiting() == MAX_QUEUE);
      for (int i = 0; i < IDLE_CLIENTS; i++) {
        hostile.add(RawHttp.connect(port)); // connects and never sends a byte
      }
      byte[] partialHead = "GET /chat HTTP/1.1\r\nHo".getBytes(StandardCharsets.US_ASCII);
      for (int i = 0; i < SLOW_HEAD_CLIENTS; i++) {
        Socket slow = RawHttp.connect(port);
        slow.getOutputStream().write(partialHead); // a few bytes, then nothing
        slow.getOutputStream().flush();
        hostile.add(slow);
      }
      Resources during = Resources.now();

      // Behind the silent clients in the accept queue, answered once idle timeouts drop them.
      assertThat(RawHttp.get(port, "/login").status).isEqualTo(200);
      assertThat(llm.stats().admitted()).isEqualTo(LIMIT); // no half-sent /chat head took a slot
      assertThat(llm.stats().rejected()).isZero();

      for (int i = 0; i < LIMIT + MAX_QUEUE; i++) {
        held.next().answer("chat");
      }
      for (Socket chat : chats) {
        assertThat(RawHttp.read(chat.getInputStream()).body).isEqualTo("chat");
      }
      await().atMost(10, SECONDS).until(() -> llm.stats().inFlight() == 0);
      BulkheadStats stats = llm.stats();
      assertThat(stats.waiting()).isZero();
      assertThat(stats.admitted()).isEqualTo(LIMIT + MAX_QUEUE);
      assertThat(stats.completed()).isEqualTo(stats.admitted());
      assertThat(stats.cancelled()).isZero();

      close(hostile);
      close(chats);
      await().atMost(30, SECONDS).until(() -> Resources.now().fds <= before.fds + FD_SLACK);
      Resources after = Resources.now();
      print("idle+slow-head", before, during, after);
      assertThat(after.threads).isLessThanOrEqualTo(before.threads + THREAD_SLACK);
    } finally {
      close(hostile);
      close(chats);
    }
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
        close(queued);
        await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 0);
      }
      assertThat(llm.stats().cancelled()).isEqualTo(LEAVERS);
      during = Resources.now();
      assertThat(held.poll(100)).as("no leaver reached the handler").isNull();
      first.answer("h1");
      second.answer("h2");
      assertThat(RawHttp.read(holder1.getInputStream()).status).isEqualTo(200);
      assertThat(RawHttp.read(holder2.getInputStream()).status).isEqualTo(200);
    }
    await().atMost(10, SECONDS).until(() -> llm.stats().inFlight() == 0);

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
      await().atMost(10, SECONDS).until(() -> llm.stats().inFlight() == 0);
    }

    assertThat(RawHttp.get(port, "/login").status).isEqualTo(200);
    BulkheadStats stats = llm.stats();
    assertThat(stats.inFlight()).isZero();
    assertThat(stats.waiting()).isZero();
    assertThat(stats.admitted()).isEqualTo(LIMIT + LEAVERS);
    assertThat(stats.completed()).isEqualTo(stats.admitted());
    assertThat(stats.cancelled())
        .isEqualTo(LEAVERS); // only the queued ones: the others were served
    assertThat(stats.rejected()).isZero();
    await().atMost(30, SECONDS).until(() -> Resources.now().fds <= before.fds + FD_SLACK);
    Resources after = Resources.now();
    print("leavers", before, during, after);
    assertThat(after.threads).isLessThanOrEqualTo(before.threads + THREAD_SLACK);
  }

  @Test
  void hugeHead_gets431_withoutTakingASlot() throws Exception {
    start(false);
    String huge =
        "GET /chat HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: " + "a".repeat(64 * 1024) + "\r\n\r\n";
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
                  // expected once the server has answered 431 and closed
                }
              });
      assertThat(readStatusLine(socket.getInputStream())).contains(" 431 ");
      sent.get(10, SECONDS);
    }
    assertThat(RawHttp.get(port, "/login").status).isEqualTo(200);
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
    h2client = new HTTP2Client();
    h2client.start();
    Session session =
        h2client
            .connect(new InetSocketAddress("127.0.0.1", port), new Session.Listener() {})
            .get(10, SECONDS);
    int flood = 500;
    List<Answer> answers = new ArrayList<>();
    List<org.eclipse.jetty.http2.api.Stream> streams = new ArrayList<>();
    for (int i = 0; i < flood; i++) {
      Answer answer = new Answer();
      answers.add(answer);
      streams.add(session.newStream(get("/chat?who=" + i), answer).get(10, SECONDS));
    }
    int refused = flood - LIMIT - MAX_QUEUE;
    await().atMost(30, SECONDS).until(() -> count503(answers) == refused);
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
      if (!answers.get(i).status.isDone() && !holders.contains("who=" + i)) {
        org.eclipse.jetty.http2.api.Stream stream = streams.get(i);
        stream
            .reset(new ResetFrame(stream.getId(), ErrorCode.CANCEL_STREAM_ERROR.code))
            .get(10, SECONDS);
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
    assertThat(count503(answers)).isEqualTo(refused);

    Answer login = new Answer(); // the same connection still serves the unguarded route
    session.newStream(get("/login"), login).get(10, SECONDS);
    assertThat(login.status.get(10, SECONDS)).isEqualTo(200);
    h2client.stop();
    h2client = null;
    await().atMost(30, SECONDS).until(() -> Resources.now().fds <= before.fds + FD_SLACK);
    Resources after = Resources.now();
    print("h2-flood", before, during, after);
    assertThat(after.threads).isLessThanOrEqualTo(before.threads + THREAD_SLACK);
  }

  private static long count503(List<Answer> answers) {
    return count(answers, 503);
  }

  private static long count(List<Answer> answers, int status) {
    return answers.stream().filter(a -> a.status.isDone() && a.status.getNow(-1) == status).count();
  }

  private HeadersFrame get(String pathAndQuery) {
    MetaData.Request request =
        new MetaData.Request(
            "GET",
            HttpURI.from("http://127.0.0.1:" + port + pathAndQuery),
            HttpVersion.HTTP_2,
            HttpFields.EMPTY);
    return new HeadersFrame(request, null, true);
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

  /** Collects the status of a stream's response and drops its body. */
  private static final class Answer implements org.eclipse.jetty.http2.api.Stream.Listener {
    final CompletableFuture<Integer> status = new CompletableFuture<>();

    @Override
    public void onHeaders(org.eclipse.jetty.http2.api.Stream stream, HeadersFrame frame) {
      if (frame.getMetaData() instanceof MetaData.Response) {
        status.complete(((MetaData.Response) frame.getMetaData()).getStatus());
      }
      stream.demand();
    }

    @Override
    public void onDataAvailable(org.eclipse.jetty.http2.api.Stream stream) {
      org.eclipse.jetty.http2.api.Stream.Data data = stream.readData();
      if (data != null) {
        data.release();
      }
      if (data == null || !data.frame().isEndStream()) {
        stream.demand();
      }
    }
  }
}
