package io.bulkhead.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A loopback TCP proxy in front of a Redis of the test's own, whose faults the test switches on and
 * off while connections stay open: {@link #hold()} forwards nothing in either direction until
 * {@link #heal()} (a partition: what was sent arrives afterwards, as TCP would retransmit it),
 * {@link #dropRequests()} silently drops what clients send until healed (lost request bytes: the
 * connection stays up but its commands and replies no longer pair), and {@link #slow} delays every
 * chunk, both ways (a slow link: a round trip takes twice as long more). {@link #cut()} closes
 * every open connection.
 */
final class FaultProxy implements AutoCloseable {

  private final ServerSocket server;
  private final int upstreamPort;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final ExecutorService threads =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "fault-proxy");
            t.setDaemon(true);
            return t;
          });
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition healed = lock.newCondition();
  private volatile boolean held; // guarded by lock for writes; read by the pumps
  private volatile boolean dropping;
  private volatile long delayNanos;

  FaultProxy(int upstreamPort) throws IOException {
    this.upstreamPort = upstreamPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    threads.execute(this::acceptLoop);
  }

  int port() {
    return server.getLocalPort();
  }

  String uri() {
    return "redis://127.0.0.1:" + port();
  }

  /** Forwards nothing, either way, until {@link #heal()}; connections stay open. */
  void hold() {
    lock.lock();
    try {
      held = true;
    } finally {
      lock.unlock();
    }
  }

  /** Drops every byte clients send until {@link #heal()}; replies still flow. */
  void dropRequests() {
    dropping = true;
  }

  /** Delays every chunk, either way, by {@code millis} (0: no delay), in order. */
  void slow(long millis) {
    delayNanos = TimeUnit.MILLISECONDS.toNanos(millis);
  }

  /** Ends every fault: held bytes flow, nothing is dropped or delayed. */
  void heal() {
    dropping = false;
    delayNanos = 0;
    lock.lock();
    try {
      held = false;
      healed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Closes every connection open through the proxy; new ones are accepted. */
  void cut() {
    for (Socket s : sockets) {
      closeQuietly(s);
    }
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      sockets.add(client);
      try {
        threads.execute(() -> connect(client));
      } catch (RejectedExecutionException e) {
        closeQuietly(client); // closed meanwhile
        return;
      }
    }
  }

  private void connect(Socket client) {
    Socket upstream;
    try {
      upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort);
    } catch (IOException e) {
      closeQuietly(client); // Redis is down: the client sees its connection closed
      return;
    }
    sockets.add(upstream);
    try {
      threads.execute(() -> pump(client, upstream, true));
      threads.execute(() -> pump(upstream, client, false));
    } catch (RejectedExecutionException e) {
      closeQuietly(client);
      closeQuietly(upstream);
    }
  }

  /**
   * One direction: a reader that stamps each chunk with when it is due, and a writer that sends it
   * then, once nothing holds the link. Only what clients send is dropped.
   */
  private void pump(Socket from, Socket to, boolean towardsRedis) {
    LinkedBlockingQueue<Object[]> line = new LinkedBlockingQueue<>();
    byte[] end = new byte[0];
    try {
      threads.execute(
          () -> {
            try {
              OutputStream out = to.getOutputStream();
              for (; ; ) {
                Object[] chunk = line.take();
                byte[] bytes = (byte[]) chunk[1];
                if (bytes == end) {
                  break;
                }
                long wait = (long) chunk[0] - System.nanoTime();
                if (wait > 0) {
                  TimeUnit.NANOSECONDS.sleep(
                      wait); // the slow link's latency, not an ordering device
                }
                awaitHealed();
                out.write(bytes);
                out.flush();
              }
            } catch (IOException | InterruptedException e) {
              // closed
            } finally {
              closeQuietly(from);
              closeQuietly(to);
            }
          });
    } catch (RejectedExecutionException e) {
      closeQuietly(from);
      closeQuietly(to);
      return;
    }
    try {
      InputStream in = from.getInputStream();
      byte[] buffer = new byte[16 * 1024];
      for (int n; (n = in.read(buffer)) >= 0; ) {
        if (towardsRedis && dropping) {
          continue;
        }
        line.add(new Object[] {System.nanoTime() + delayNanos, Arrays.copyOf(buffer, n)});
      }
    } catch (IOException e) {
      // closed
    } finally {
      line.add(new Object[] {0L, end});
    }
  }

  private void awaitHealed() throws InterruptedException {
    if (!held) {
      return;
    }
    lock.lock();
    try {
      while (held) {
        healed.await();
      }
    } finally {
      lock.unlock();
    }
  }

  private void closeQuietly(Socket s) {
    sockets.remove(s);
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    heal();
    server.close();
    cut();
    threads.shutdownNow();
  }
}
