package io.bulkhead.httpclient;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/*
 * A fake upstream that counts the connections its clients hold open, exactly.
 *
 * Why not Jetty with a Connection.Listener: Jetty does not read an HTTP/1.1 connection while a request
 * on it is being handled, so a client that closes the connection of an unanswered request stays
 * "open" for Jetty until the answer is written; and even when it does notice, it notices on a thread
 * other than the one that accepts the next connection, so a count taken at accept time can include a
 * connection whose client closed it first. This server runs on one thread and, before it counts a
 * newly accepted connection, reads every connection it has open: the client closed a connection before
 * it connected the next one (that is what UpstreamClient guarantees), so that close is already in this
 * side's socket and the probe sees it. The count is then the number of connections the clients really
 * hold, measured at the upstream.
 *
 * HTTP: reads GET requests (headers only), answers each after `delay` with `status` and "ok\n", keeps
 * the connection open for the next request. With a null delay it never answers.
 */
final class CountingUpstream implements AutoCloseable {

  private static final class Conn {
    final SocketChannel channel;
    final StringBuilder pending = new StringBuilder();

    Conn(SocketChannel channel) {
      this.channel = channel;
    }
  }

  private static final class Due implements Comparable<Due> {
    final long at;
    final Conn conn;

    Due(long at, Conn conn) {
      this.at = at;
      this.conn = conn;
    }

    @Override
    public int compareTo(Due o) {
      return Long.compare(at, o.at);
    }
  }

  private final Duration delay;
  private final int status;
  private final Selector selector;
  private final ServerSocketChannel server;
  private final Thread thread;
  private final Map<SocketChannel, Conn> open = new LinkedHashMap<>(); // loop thread only
  private final PriorityQueue<Due> due = new PriorityQueue<>(); // loop thread only
  private final ConcurrentLinkedQueue<CompletableFuture<Integer>> probes =
      new ConcurrentLinkedQueue<>();
  private volatile boolean running = true;
  private volatile int openNow;
  private volatile int maxOpen;
  private volatile int totalOpened;
  private volatile int requests;

  private CountingUpstream(Duration delay, int status) throws IOException {
    this.delay = delay;
    this.status = status;
    this.selector = Selector.open();
    this.server = ServerSocketChannel.open();
    server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
    server.configureBlocking(false);
    server.register(selector, SelectionKey.OP_ACCEPT);
    this.thread = new Thread(this::loop, "counting-upstream");
    thread.setDaemon(true);
    thread.start();
  }

  /** Answers every request with {@code status} after {@code delay}. */
  static CountingUpstream answeringAfter(Duration delay, int status) throws IOException {
    return new CountingUpstream(delay, status);
  }

  /** Never answers. */
  static CountingUpstream silent() throws IOException {
    return new CountingUpstream(null, 0);
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.socket().getLocalPort() + path);
  }

  int maxOpen() {
    return maxOpen;
  }

  int totalOpened() {
    return totalOpened;
  }

  int openNow() {
    return openNow;
  }

  int requests() {
    return requests;
  }

  /**
   * Reads every open connection now, on the server's thread, and returns how many are still open: a
   * connection its client has closed is no longer counted.
   */
  int probe() throws Exception {
    CompletableFuture<Integer> result = new CompletableFuture<>();
    probes.add(result);
    selector.wakeup();
    return result.get(5, TimeUnit.SECONDS);
  }

  private void loop() {
    ByteBuffer buffer = ByteBuffer.allocate(8192);
    try {
      while (running) {
        long wait = 0;
        Due first = due.peek();
        if (first != null) {
          wait = Math.max(1, (first.at - System.nanoTime()) / 1_000_000 + 1);
        }
        selector.select(wait);
        for (SelectionKey key : selector.selectedKeys()) {
          if (!key.isValid()) {
            continue;
          }
          if (key.isAcceptable()) {
            SocketChannel accepted;
            while ((accepted = server.accept()) != null) {
              probeAll(buffer);
              accepted.configureBlocking(false);
              accepted.register(selector, SelectionKey.OP_READ);
              open.put(accepted, new Conn(accepted));
              totalOpened++;
              openNow = open.size();
              maxOpen = Math.max(maxOpen, open.size());
            }
          } else if (key.isReadable()) {
            Conn conn = open.get((SocketChannel) key.channel());
            if (conn != null) {
              read(conn, buffer);
            }
          }
        }
        selector.selectedKeys().clear();
        answerDue();
        CompletableFuture<Integer> probe;
        while ((probe = probes.poll()) != null) {
          probeAll(buffer);
          probe.complete(open.size());
        }
      }
    } catch (IOException e) {
      if (running) {
        throw new IllegalStateException("counting upstream failed", e);
      }
    }
  }

  /**
   * Reads every open connection once: a client that closed one is seen before the next is counted.
   */
  private void probeAll(ByteBuffer buffer) {
    for (Conn conn : new ArrayList<>(open.values())) {
      read(conn, buffer);
    }
  }

  private void read(Conn conn, ByteBuffer buffer) {
    int n;
    try {
      buffer.clear();
      n = conn.channel.read(buffer);
    } catch (IOException reset) {
      n = -1;
    }
    if (n < 0) {
      closeConn(conn);
      return;
    }
    if (n > 0) {
      conn.pending.append(new String(buffer.array(), 0, n, StandardCharsets.US_ASCII));
      int end;
      while ((end = conn.pending.indexOf("\r\n\r\n")) >= 0) {
        conn.pending.delete(0, end + 4);
        requests++;
        if (delay != null) {
          due.add(new Due(System.nanoTime() + delay.toNanos(), conn));
        }
      }
    }
  }

  private void answerDue() {
    long now = System.nanoTime();
    while (!due.isEmpty() && due.peek().at <= now) {
      Conn conn = due.poll().conn;
      if (!open.containsKey(conn.channel)) {
        continue; // the client left before its answer
      }
      String answer =
          "HTTP/1.1 "
              + status
              + " Test\r\nContent-Type: text/plain\r\n"
              + "Content-Length: 3\r\n\r\nok\n";
      try {
        conn.channel.write(ByteBuffer.wrap(answer.getBytes(StandardCharsets.US_ASCII)));
      } catch (IOException e) {
        closeConn(conn);
      }
    }
  }

  private void closeConn(Conn conn) {
    open.remove(conn.channel);
    openNow = open.size();
    try {
      conn.channel.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  @Override
  public void close() throws Exception {
    running = false;
    selector.wakeup();
    thread.join(5000);
    List<SocketChannel> channels = new ArrayList<>(open.keySet());
    for (SocketChannel c : channels) {
      c.close();
    }
    server.close();
    selector.close();
  }
}
