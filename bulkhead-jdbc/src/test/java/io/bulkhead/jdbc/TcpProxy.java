package io.bulkhead.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * A loopback TCP forwarder to the test database, so a test can make the database vanish for a pool:
 * {@link #cut()} stops accepting and cuts every forwarded connection, as a network partition or a
 * server crash would; {@link #blackhole()} keeps every connection open but forwards nothing more,
 * and accepts new ones that it never connects onwards, as a link that drops packets would; {@link
 * #dropAll()} cuts every forwarded connection but keeps accepting, which is what a restart of the
 * server looks like from the client's side.
 */
final class TcpProxy implements AutoCloseable {

  private final ServerSocket server;
  private final String upstreamHost;
  private final int upstreamPort;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private volatile boolean blackholed; // read by the pumps and the acceptor on every chunk
  private final ExecutorService threads =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "tcp-proxy");
            t.setDaemon(true);
            return t;
          });

  TcpProxy(String upstreamHost, int upstreamPort) throws IOException {
    this.upstreamHost = upstreamHost;
    this.upstreamPort = upstreamPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    threads.execute(this::acceptLoop);
  }

  int port() {
    return server.getLocalPort();
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
        forward(client);
      } catch (RejectedExecutionException e) {
        // cut() ran between the accept and here (a pool reconnecting to a proxy its test closed)
        // and
        // shut the pumps' pool down: cut again, which closes this connection too. Left uncaught,
        // the
        // exception reached the next test through Awaitility's uncaught-exception check.
        cut();
        return;
      }
    }
  }

  /** Starts the pumps of an accepted connection: into nothing while blackholed, else upstream. */
  private void forward(Socket client) {
    if (blackholed) {
      threads.execute(() -> pump(client, null));
      return;
    }
    Socket upstream;
    try {
      upstream = new Socket(upstreamHost, upstreamPort);
    } catch (IOException e) {
      closeQuietly(client);
      return;
    }
    sockets.add(upstream);
    threads.execute(() -> pump(client, upstream));
    threads.execute(() -> pump(upstream, client));
  }

  /**
   * Forwards {@code from} to {@code to}; drops what it reads while blackholed, or if to is null.
   */
  private void pump(Socket from, Socket to) {
    byte[] buffer = new byte[8192];
    try (InputStream in = from.getInputStream();
        OutputStream out = to == null ? OutputStream.nullOutputStream() : to.getOutputStream()) {
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        if (blackholed) {
          continue;
        }
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // one side went away: cut the other too
    } finally {
      closeQuietly(from);
      if (to != null) {
        closeQuietly(to);
      }
    }
  }

  @Override
  public void close() {
    cut();
  }

  /** From now on forwards nothing: connections stay open, and new ones are accepted and ignored. */
  void blackhole() {
    blackholed = true;
  }

  /** Cuts every forwarded connection and keeps accepting new ones, which are forwarded again. */
  void dropAll() {
    for (Socket s : sockets) {
      sockets.remove(s);
      closeQuietly(s);
    }
  }

  /** Stops accepting and cuts every forwarded connection. */
  void cut() {
    closeQuietly(server);
    for (Socket s : sockets) {
      closeQuietly(s);
    }
    threads.shutdownNow();
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // already closed
    }
  }
}
