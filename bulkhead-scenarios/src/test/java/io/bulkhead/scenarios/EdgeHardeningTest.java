package io.bulkhead.scenarios;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.testing.Closer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The HTTP edge under hostile clients and hostile pages, over plain sockets. */
class EdgeHardeningTest {

  /** Long enough that only the deadline under test, never this one, can end a connection. */
  private static final Duration NEVER = Duration.ofMinutes(10);

  /** How long a test socket waits for the server to answer or close before the test fails. */
  private static final int READ_TIMEOUT_MS = 60_000;

  @RegisterExtension final Closer closer = new Closer();

  // --- the connection cap and the request-head deadline -----------------------------------------

  @Test
  void idleConnectionsBeyondTheCap_stayOutside_andLoginStillAnswers() throws Exception {
    int cap = 64;
    int idle = 100;
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofMillis(10)));
    DemoApp app =
        closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri())));
    app.edgeLimits(new EdgeLimits(cap, NEVER, Duration.ofMillis(500)));
    AtomicInteger open = new AtomicInteger();
    AtomicInteger maxOpen = new AtomicInteger();
    app.start(0);
    ((ServerConnector) app.server().getConnectors()[0])
        .addEventListener(
            new Connection.Listener() {
              @Override
              public void onOpened(Connection connection) {
                maxOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
              }

              @Override
              public void onClosed(Connection connection) {
                open.decrementAndGet();
              }
            });
    List<Socket> sockets = new ArrayList<>();
    try {
      for (int i = 0; i < idle; i++) {
        sockets.add(new Socket(InetAddress.getLoopbackAddress(), port(app)));
      }

      Answer login = Answer.exchange(port(app), "GET", "/login", "127.0.0.1:" + port(app));

      assertThat(login.status).isEqualTo(200);
      assertThat(login.body).isEqualTo("ok\n");
      assertThat(maxOpen.get()).as("connections open at once").isLessThanOrEqualTo(cap);
      // A connection that never sent a request head was closed by the server, not kept.
      assertThat(readUntilClosed(sockets.get(0))).isTrue();
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
    }
  }

  @Test
  void aRequestHeadTrickledByteByByte_isCutOffAtTheDeadline() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofMillis(10)));
    DemoApp app =
        closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri())));
    app.edgeLimits(
        new EdgeLimits(EdgeLimits.defaults().maxConnections(), NEVER, Duration.ofMillis(300)));
    app.start(0);

    try (Socket slow = new Socket(InetAddress.getLoopbackAddress(), port(app))) {
      OutputStream out = slow.getOutputStream();
      out.write(
          ("GET /login HTTP/1.1\r\nHost: 127.0.0.1:" + port(app) + "\r\nX-Slow: ")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      // One byte every 50 ms keeps the connection busy, so its idle timeout never fires; a head of
      // Jetty's 8 KiB limit would take minutes. Only a deadline on the whole head ends it.
      boolean closed = false;
      slow.setSoTimeout(50);
      for (int sent = 0; sent < 2_000 && !closed; sent++) {
        try {
          out.write('a');
          out.flush();
          closed = slow.getInputStream().read() == -1;
        } catch (SocketTimeoutException stillOpen) {
          // the server neither answered nor closed: go on trickling
        } catch (SocketException reset) {
          closed = true;
        }
      }
      assertThat(closed).as("the server closed the trickling connection").isTrue();
    }
  }

  @Test
  void aSecondRequestHeadTrickledOnAKeptAliveConnection_isCutOffToo() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofMillis(10)));
    DemoApp app =
        closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri())));
    app.edgeLimits(
        new EdgeLimits(EdgeLimits.defaults().maxConnections(), NEVER, Duration.ofMillis(300)));
    app.start(0);

    try (Socket slow = new Socket(InetAddress.getLoopbackAddress(), port(app))) {
      OutputStream out = slow.getOutputStream();
      InputStream in = slow.getInputStream();
      out.write(
          ("GET /login HTTP/1.1\r\nHost: 127.0.0.1:" + port(app) + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      slow.setSoTimeout(READ_TIMEOUT_MS);
      assertThat(readUntil(in, "ok\n")).startsWith("HTTP/1.1 200");
      out.write("GET /login HTTP/1.1\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
      boolean closed = false;
      slow.setSoTimeout(50);
      for (int sent = 0; sent < 2_000 && !closed; sent++) {
        try {
          out.write('a');
          out.flush();
          closed = in.read() == -1;
        } catch (SocketTimeoutException stillOpen) {
          // go on trickling
        } catch (SocketException reset) {
          closed = true;
        }
      }
      assertThat(closed).as("the server closed the trickling connection").isTrue();
    }
  }

  // --- Host check, banner, nosniff --------------------------------------------------------------

  @Test
  void adminRoutes_refuseAForeignHost_butAnswerLoopbackNames() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofMillis(10)));
    DemoApp app =
        closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri())));
    app.start(0);
    int port = port(app);

    for (String path : List.of("/bulkheads", "/metrics", "/dashboard", "/dashboard/dashboard.js")) {
      for (String host :
          List.of(
              "evil.example",
              "evil.example:" + port,
              "127.0.0.1.evil.example:" + port,
              "localhost:" + (port == 65_535 ? 1 : port + 1))) {
        Answer refused = Answer.exchange(port, "GET", path, host);
        assertThat(refused.status).as(path + " with Host " + host).isEqualTo(403);
        assertThat(refused.body)
            .as(path + " with Host " + host)
            .isEqualTo(
                "the Host header '"
                    + host
                    + "' is not this server's; admin routes answer"
                    + " only to a loopback name with port "
                    + port
                    + "\n");
        assertThat(refused.header("X-Content-Type-Options")).isEqualTo("nosniff");
      }
      for (String host :
          List.of("127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "LOCALHOST:" + port)) {
        assertThat(Answer.exchange(port, "GET", path, host).status)
            .as(path + " with Host " + host)
            .isEqualTo(200);
      }
    }
    // The app's own routes are not admin routes: what they answer does not depend on the name.
    assertThat(Answer.exchange(port, "GET", "/login", "evil.example").status).isEqualTo(200);
  }

  @Test
  void anExplicitlyAllowedHost_reachesTheAdminRoutes() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofMillis(10)));
    DemoApp app =
        closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri())));
    app.allowHost("bulkheads.internal");
    app.start(0);

    assertThat(Answer.exchange(port(app), "GET", "/bulkheads", "bulkheads.internal").status)
        .isEqualTo(200);
    assertThat(Answer.exchange(port(app), "GET", "/bulkheads", "BULKHEADS.internal:8080").status)
        .isEqualTo(200);
    assertThat(Answer.exchange(port(app), "GET", "/bulkheads", "other.internal").status)
        .isEqualTo(403);
  }

  @Test
  void theDashboardServer_refusesAForeignHostToo() throws Exception {
    DbDashboard dashboard = closer.closeLater(DbDashboard.start(0));
    int port = dashboard.uri().getPort();

    assertThat(Answer.exchange(port, "GET", "/bulkheads", "evil.example").status).isEqualTo(403);
    assertThat(Answer.exchange(port, "GET", "/bulkheads", "localhost:" + port).status)
        .isEqualTo(200);
  }

  @Test
  void noServerBanner_onTheApp_theUpstream_orTheDashboard() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofMillis(10)));
    DemoApp app =
        closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri())));
    app.start(0);
    DbDashboard dashboard = closer.closeLater(DbDashboard.start(0));

    for (URI base : List.of(app.uri(), upstream.uri(), dashboard.uri())) {
      for (String path : List.of("/login", "/bulkheads", "/nowhere")) {
        Answer answer = Answer.exchange(base.getPort(), "GET", path, "127.0.0.1:" + base.getPort());
        assertThat(answer.header("Server")).as(base + path).isNull();
        assertThat(answer.header("X-Powered-By")).as(base + path).isNull();
      }
    }
  }

  @Test
  void textAnswersOfAdminRoutesAndThe503s_sayNosniff() throws Exception {
    HeldUpstream held = closer.closeLater(new HeldUpstream());
    // The llm compartment has one slot and no queue: a second /chat gets the llm's 503.
    DemoApp app =
        closer.closeLater(
            new DemoApp(
                new AppSettings(
                    Mode.BULKHEAD, held.uri(), 10, 1, 0, Duration.ZERO, Duration.ofSeconds(60))));
    app.start(0);
    int port = port(app);
    String host = "127.0.0.1:" + port;
    try (Socket holding = Answer.send(port, "GET", "/chat", host)) {
      held.awaitRequests(1);

      Answer refused = Answer.exchange(port, "GET", "/chat", host);

      assertThat(refused.status).isEqualTo(503);
      assertThat(refused.header("X-Content-Type-Options")).isEqualTo("nosniff");
      for (String path :
          List.of("/bulkheads", "/metrics", "/dashboard", "/dashboard/dashboard.js", "/login")) {
        assertThat(Answer.exchange(port, "GET", path, host).header("X-Content-Type-Options"))
            .as(path)
            .isEqualTo("nosniff");
      }
    } finally {
      held.release();
    }
  }

  // --- a client that leaves after /chat was admitted --------------------------------------------

  @Test
  void aClientLeavingAnAdmittedChat_cancelsTheUpstreamCall_andFreesBothSlots() throws Exception {
    HeldUpstream held = closer.closeLater(new HeldUpstream());
    DemoApp app = closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, held.uri())));
    app.start(0);
    Bulkhead llm = app.registry().bulkhead("llm").orElseThrow();
    Bulkhead server = app.registry().bulkhead("server").orElseThrow();
    try {
      Socket client = Answer.send(port(app), "GET", "/chat", "127.0.0.1:" + port(app));
      held.awaitRequests(1);
      assertThat(llm.stats().inFlight()).isEqualTo(1);

      client.close();

      await().atMost(30, SECONDS).until(() -> server.stats().inFlight() == 0);
      await().atMost(30, SECONDS).until(() -> llm.stats().inFlight() == 0);
      await().atMost(30, SECONDS).until(() -> held.closedConnections() == 1);
      assertThat(held.isHolding()).isTrue();
      assertThat(held.requests()).isEqualTo(1);
    } finally {
      held.release();
    }
    // The app still works afterwards.
    Answer chat = Answer.exchange(port(app), "GET", "/chat", "127.0.0.1:" + port(app));
    assertThat(chat.status).isEqualTo(200);
    assertThat(llm.stats().inFlight()).isZero();
  }

  // --- helpers ----------------------------------------------------------------------------------

  private static int port(DemoApp app) {
    return app.uri().getPort();
  }

  /** Reads until the server closes the connection (true) or the read timeout passes (false). */
  private static boolean readUntilClosed(Socket socket) throws IOException {
    socket.setSoTimeout(READ_TIMEOUT_MS);
    try {
      InputStream in = socket.getInputStream();
      while (in.read() != -1) {
        // discard whatever the server said before closing
      }
      return true;
    } catch (SocketTimeoutException open) {
      return false;
    } catch (SocketException reset) {
      return true;
    }
  }

  private static String readUntil(InputStream in, String end) throws IOException {
    ByteArrayOutputStream seen = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) != -1) {
      seen.write(b);
      if (seen.toString(StandardCharsets.ISO_8859_1).endsWith(end)) {
        break;
      }
    }
    return seen.toString(StandardCharsets.ISO_8859_1);
  }

  /** One HTTP/1.1 exchange over a plain socket with {@code Connection: close}, parsed. */
  record Answer(int status, String head, String body) {

    static Socket send(int port, String method, String path, String host) throws IOException {
      Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
      socket.setSoTimeout(READ_TIMEOUT_MS);
      String request =
          method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
      socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
      socket.getOutputStream().flush();
      return socket;
    }

    static Answer exchange(int port, String method, String path, String host) throws IOException {
      try (Socket socket = send(port, method, path, host)) {
        String all =
            new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        int split = all.indexOf("\r\n\r\n");
        String head = all.substring(0, split);
        String body = all.substring(split + 4);
        if (head.toLowerCase(Locale.ROOT).contains("\r\ntransfer-encoding: chunked")) {
          body = unchunk(body);
        }
        return new Answer(Integer.parseInt(head.substring(9, 12)), head, body);
      }
    }

    String header(String name) {
      for (String line : head.split("\r\n")) {
        int colon = line.indexOf(':');
        if (colon > 0 && line.substring(0, colon).equalsIgnoreCase(name)) {
          return line.substring(colon + 1).trim();
        }
      }
      return null;
    }

    private static String unchunk(String chunked) {
      StringBuilder out = new StringBuilder();
      int at = 0;
      while (true) {
        int lineEnd = chunked.indexOf("\r\n", at);
        int size = Integer.parseInt(chunked.substring(at, lineEnd).trim(), 16);
        if (size == 0) {
          return out.toString();
        }
        out.append(chunked, lineEnd + 2, lineEnd + 2 + size);
        at = lineEnd + 2 + size + 2;
      }
    }
  }

  /**
   * An upstream on a plain server socket that holds every request until {@link #release()} and
   * counts the connections its clients close while held: a thread per connection blocks reading it,
   * so it sees the client's FIN as soon as it comes (Jetty would not read while it holds a
   * request).
   */
  static final class HeldUpstream implements AutoCloseable {
    private static final byte[] ANSWER =
        ("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n" + "Connection: close\r\n\r\nreleased\n")
            .getBytes(StandardCharsets.ISO_8859_1);

    private final ServerSocket listener;
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger closed = new AtomicInteger();
    private final Queue<Socket> held = new ConcurrentLinkedQueue<>();

    HeldUpstream() throws IOException {
      listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread acceptor = new Thread(this::accept, "held-upstream");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    private void accept() {
      while (!listener.isClosed()) {
        try {
          Socket s = listener.accept();
          Thread t = new Thread(() -> serve(s), "held-upstream-connection");
          t.setDaemon(true);
          t.start();
        } catch (IOException closing) {
          return;
        }
      }
    }

    private void serve(Socket s) {
      try (s) {
        InputStream in = s.getInputStream();
        readUntil(in, "\r\n\r\n");
        requests.incrementAndGet();
        held.add(s);
        if (!isHolding()) {
          answer(s);
          return;
        }
        if (in.read() == -1 && isHolding()) {
          closed.incrementAndGet();
        }
      } catch (IOException e) {
        if (isHolding()) {
          closed.incrementAndGet(); // reset by the client
        }
      }
    }

    private static void answer(Socket s) {
      try {
        s.getOutputStream().write(ANSWER);
        s.getOutputStream().flush();
        s.close();
      } catch (IOException gone) {
        // the client left; nothing to answer
      }
    }

    URI uri() {
      return URI.create("http://127.0.0.1:" + listener.getLocalPort());
    }

    void awaitRequests(int n) {
      await().atMost(30, SECONDS).until(() -> requests.get() >= n);
    }

    int requests() {
      return requests.get();
    }

    int closedConnections() {
      return closed.get();
    }

    boolean isHolding() {
      return release.getCount() > 0;
    }

    void release() {
      release.countDown();
      Socket s;
      while ((s = held.poll()) != null) {
        answer(s);
      }
    }

    @Override
    public void close() throws IOException {
      release();
      listener.close();
    }
  }
}
