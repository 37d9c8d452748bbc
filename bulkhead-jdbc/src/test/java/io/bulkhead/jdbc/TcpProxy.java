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

/**
 * A loopback TCP forwarder to the test database, so a test can make the database vanish for a pool:
 * {@link #cut()} stops accepting and cuts every forwarded connection, as a network partition or a
 * server crash would.
 */
final class TcpProxy implements AutoCloseable {

  private final ServerSocket server;
  private final String upstreamHost;
  private final int upstreamPort;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
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
      try {
        Socket client = server.accept();
        sockets.add(client);
        Socket upstream;
        try {
          upstream = new Socket(upstreamHost, upstreamPort);
        } catch (IOException e) {
          client.close();
          continue;
        }
        sockets.add(upstream);
        threads.execute(() -> pump(client, upstream));
        threads.execute(() -> pump(upstream, client));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void pump(Socket from, Socket to) {
    byte[] buffer = new byte[8192];
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // one side went away: cut the other too
    } finally {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  @Override
  public void close() {
    cut();
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
