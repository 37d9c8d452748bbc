package io.bulkhead.httpclient;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/*
 * A loopback TCP proxy in front of an upstream that is fine, where the network is not: DELAY
 * forwards the request at once and holds every chunk of the answer for `latency` before passing it
 * on (a slow link); BLACKHOLE accepts and reads but forwards nothing and never connects onwards
 * (packets dropped).
 *
 * Threads: one accepts; per connection, one pumps client -> upstream (or reads and drops, in
 * BLACKHOLE) and one pumps upstream -> client. The client side counts as open until the client ->
 * upstream pump reads end of stream or a reset from the client, or the proxy closes: the pump then
 * closes both sockets, which also ends the other pump, and decrements `open` once, in its finally.
 */
final class FaultProxy implements AutoCloseable {

  enum Mode {
    DELAY,
    BLACKHOLE
  }

  private final Mode mode;
  private final URI target;
  private final Duration latency;
  private final ServerSocket server;
  private final CountDownLatch requested;
  private final AtomicInteger open = new AtomicInteger();
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

  /** {@code requests}: how many connections that sent bytes count down {@link #awaitRequests}. */
  FaultProxy(Mode mode, URI target, Duration latency, int requests) throws IOException {
    this.mode = mode;
    this.target = target;
    this.latency = latency;
    this.requested = new CountDownLatch(requests);
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "fault-proxy-" + mode);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.getLocalPort() + path);
  }

  boolean awaitRequests(Duration atMost) throws InterruptedException {
    return requested.await(atMost.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** Client connections the proxy holds that the client has not closed yet. */
  int openNow() {
    return open.get();
  }

  private void accept() {
    try {
      for (; ; ) {
        Socket client = server.accept();
        open.incrementAndGet();
        sockets.add(client);
        start(() -> serve(client));
      }
    } catch (IOException closed) {
      // the test is over
    }
  }

  private void serve(Socket client) {
    Socket upstream = null;
    try {
      if (mode == Mode.DELAY) {
        upstream = new Socket(target.getHost(), target.getPort());
        sockets.add(upstream);
        Socket from = upstream;
        start(() -> pumpAnswer(from, client));
      }
      InputStream in = client.getInputStream();
      OutputStream out = upstream == null ? null : upstream.getOutputStream();
      byte[] buffer = new byte[8192];
      boolean counted = false;
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        if (out != null) {
          out.write(buffer, 0, n);
          out.flush();
        }
        if (!counted) {
          counted = true;
          requested.countDown();
        }
      }
    } catch (IOException e) {
      // reset by the client, or the proxy closed
    } finally {
      closeQuietly(client);
      if (upstream != null) {
        closeQuietly(upstream);
      }
      open.decrementAndGet();
    }
  }

  private void pumpAnswer(Socket from, Socket to) {
    byte[] buffer = new byte[8192];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        Thread.sleep(latency.toMillis()); // the fault itself: a slow link, not ordering
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException | InterruptedException e) {
      // one side went away
    } finally {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  private static void start(Runnable task) {
    Thread t = new Thread(task, "fault-proxy-conn");
    t.setDaemon(true);
    t.start();
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
    server.close();
    for (Socket s : sockets) {
      closeQuietly(s);
    }
  }
}
