package io.bulkhead.httpclient;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/*
 * An upstream that misbehaves in one chosen way, over a real socket, and counts the connections
 * still open at its end.
 *
 * One thread per connection reads the request head, counts down `requested`, waits for `proceed`
 * (so a test can keep the fault in progress while it checks another route), then commits its fault.
 * A connection counts as open until this side has closed it (the faults that close) or has read end
 * of stream or a reset from the client (the faults that leave the connection to the client): then
 * the client really let go of it. The counter is decremented once per connection (`letGo`): just
 * before this side closes, or in its thread's finally.
 */
final class FaultyUpstream implements AutoCloseable {

  /** What the upstream does once it has read the request head. */
  enum Fault {
    /** Closes with SO_LINGER 0: the client reads a TCP reset. */
    RESET,
    /** Answers 503 with a complete body, and keeps the connection for the next request. */
    SERVER_ERROR,
    /** Announces a 1,000-byte body, sends 10 bytes of it, and closes. */
    CLOSE_MID_BODY,
    /** Announces a long body and sends one byte of it every {@link #TRICKLE_INTERVAL}. */
    TRICKLE,
    /** Never answers, and keeps the connection open. */
    NEVER_ANSWER,
    /** Answers something that is not HTTP (the malformed upstream's invalid status line). */
    GARBAGE
  }

  /** How often the trickling upstream sends one more byte: a body that never ends in time. */
  static final Duration TRICKLE_INTERVAL = Duration.ofMillis(20);

  private static final int TRICKLE_LENGTH = 100_000;
  private static final int MID_BODY_ANNOUNCED = 1_000;
  private static final int MID_BODY_SENT = 10;
  private static final byte[] END_OF_HEAD = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private final Fault fault;
  private final CountDownLatch requested;
  private final CountDownLatch proceed;
  private final ServerSocket server;
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger maxOpen = new AtomicInteger();
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

  /**
   * {@code requests}: how many request heads count down {@link #awaitRequests}. {@code held}:
   * whether the fault waits for {@link #proceed()}.
   */
  FaultyUpstream(Fault fault, int requests, boolean held) throws IOException {
    this.fault = fault;
    this.requested = new CountDownLatch(requests);
    this.proceed = new CountDownLatch(held ? 1 : 0);
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "faulty-upstream-" + fault);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort() + "/fault");
  }

  /** Waits until the expected number of request heads have arrived. */
  boolean awaitRequests(Duration atMost) throws InterruptedException {
    return requested.await(atMost.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** Lets held faults happen. */
  void proceed() {
    proceed.countDown();
  }

  int accepted() {
    return accepted.get();
  }

  int openNow() {
    return open.get();
  }

  /** The most connections open at once. */
  int maxOpen() {
    return maxOpen.get();
  }

  private void accept() {
    try {
      for (; ; ) {
        Socket socket = server.accept();
        accepted.incrementAndGet();
        maxOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
        sockets.add(socket);
        Thread serving = new Thread(() -> serve(socket), "faulty-upstream-conn");
        serving.setDaemon(true);
        serving.start();
      }
    } catch (IOException closed) {
      // the test is over
    }
  }

  private void serve(Socket socket) {
    AtomicBoolean counted = new AtomicBoolean(true);
    Runnable letGo =
        () -> {
          if (counted.getAndSet(false)) {
            open.decrementAndGet();
          }
        };
    try {
      InputStream in = socket.getInputStream();
      OutputStream out = socket.getOutputStream();
      while (readHead(in)) {
        requested.countDown();
        proceed.await();
        if (!commit(socket, out, letGo)) {
          return; // this side closed the connection
        }
        if (fault != Fault.SERVER_ERROR) {
          drain(in);
          return;
        }
      }
    } catch (IOException | InterruptedException e) {
      // reset by the client, or the test is over: closed either way
    } finally {
      letGo.run();
      closeQuietly(socket);
      sockets.remove(socket);
    }
  }

  /** Commits the fault; false if this side closed the connection. */
  private boolean commit(Socket socket, OutputStream out, Runnable letGo)
      throws IOException, InterruptedException {
    switch (fault) {
      case RESET:
        socket.setSoLinger(true, 0);
        letGo.run(); // before the close: a client that reconnects at once must not be counted twice
        socket.close();
        return false;
      case SERVER_ERROR:
        out.write(
            ascii(
                "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
                    + "Content-Length: 5\r\n\r\ndown\n"));
        out.flush();
        return true;
      case CLOSE_MID_BODY:
        out.write(
            ascii(
                "HTTP/1.1 200 OK\r\nContent-Length: "
                    + MID_BODY_ANNOUNCED
                    + "\r\n\r\n"
                    + "x".repeat(MID_BODY_SENT)));
        out.flush();
        letGo.run();
        socket.close();
        return false;
      case TRICKLE:
        out.write(ascii("HTTP/1.1 200 OK\r\nContent-Length: " + TRICKLE_LENGTH + "\r\n\r\n"));
        out.flush();
        // Ends when the client's close makes a write fail.
        for (int i = 0; i < TRICKLE_LENGTH; i++) {
          out.write('x');
          out.flush();
          Thread.sleep(
              TRICKLE_INTERVAL.toMillis()); // the fault itself, a slow sender; not ordering
        }
        return true;
      case NEVER_ANSWER:
        return true;
      case GARBAGE:
        MalformedUpstream.Garbage.INVALID_STATUS_LINE.writeTo(out);
        out.flush();
        return true;
      default:
        throw new AssertionError(fault);
    }
  }

  private static boolean readHead(InputStream in) throws IOException {
    int matched = 0;
    int b;
    while (matched < END_OF_HEAD.length && (b = in.read()) >= 0) {
      matched = b == END_OF_HEAD[matched] ? matched + 1 : (b == END_OF_HEAD[0] ? 1 : 0);
    }
    return matched == END_OF_HEAD.length;
  }

  private static void drain(InputStream in) throws IOException {
    while (in.read() >= 0) {
      // until the client closes
    }
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  @Override
  public void close() throws IOException {
    proceed.countDown();
    server.close();
    for (Socket s : sockets) {
      closeQuietly(s);
    }
  }
}
