package io.bulkhead.scenarios;

import java.io.IOException;
import java.net.BindException;
import java.time.Duration;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The demo's Jetty servers: loopback only, sized for bursts, capped in connections, deaf to slow
 * clients, without a version banner, quiet, and stopped completely.
 */
final class Servers {

  /** The accept queue of a server that accepts fewer connections than this. */
  private static final int MIN_ACCEPT_QUEUE = 1024;

  private Servers() {}

  /**
   * A server with one loopback connector on {@code port} (0: any free port) and the default {@link
   * EdgeLimits}; not started.
   */
  static Server create(String name, int port, Duration handlingIdleTimeout) {
    return create(name, port, handlingIdleTimeout, EdgeLimits.defaults());
  }

  /**
   * A server with one loopback connector on {@code port} (0: any free port); not started. It
   * accepts at most {@code limits.maxConnections()} connections, closes a connection that is silent
   * for {@code limits.idleTimeout()} between requests or takes longer than {@code
   * limits.requestHeadDeadline()} to send a request head, and lets a request being handled wait
   * {@code handlingIdleTimeout} without any traffic (an answer that is slow to come). It announces
   * no version: no {@code Server} or {@code X-Powered-By} header.
   */
  static Server create(String name, int port, Duration handlingIdleTimeout, EdgeLimits limits) {
    if (port < 0 || port > 65_535) {
      throw new CliException("port " + port + " is not a TCP port (0 to 65535)");
    }
    QueuedThreadPool threads = new QueuedThreadPool(200, 8);
    threads.setName(name);
    Server server = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    // A version in every answer tells a scanner which known flaws to try.
    http.setSendServerVersion(false);
    http.setSendXPoweredBy(false);
    // While a request is handled Jetty swaps the connection's idle timeout for this one, and back
    // when the response is done.
    http.setIdleTimeout(handlingIdleTimeout.toMillis());
    // No cache of header fields per connection. Jetty builds one (a trie of about 100 KB) when a
    // connection parses its second request, to save the strings of headers that repeat on it; the
    // demo's clients open a connection per user and send a request or two on it, so the cache was
    // the largest allocation per request of the slow-upstream experiment and saved nothing.
    http.setHeaderCacheSize(0);
    ServerConnector connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
    connector.setHost("127.0.0.1");
    connector.setPort(port);
    // A burst of connections (the load opens 130 at once, thousands at a hundred times that) must
    // not overflow the accept queue: a dropped SYN is retried a second later and would show up as a
    // second of latency. The kernel caps it at net.core.somaxconn.
    connector.setAcceptQueueSize(Math.max(MIN_ACCEPT_QUEUE, limits.maxConnections()));
    connector.setIdleTimeout(limits.idleTimeout().toMillis());
    connector.addEventListener(new RequestHeadDeadline(connector, limits.requestHeadDeadline()));
    server.addConnector(connector);
    // At the cap Jetty stops accepting: the next clients wait in the accept queue, not in a file
    // descriptor of ours, until the idle timeout or the head deadline frees a connection.
    server.addBean(new NetworkConnectionLimit(limits.maxConnections(), connector));
    server.setStopTimeout(0);
    return server;
  }

  /**
   * Starts {@code server}; a port in use becomes a one-line error naming the port and the option.
   */
  static int start(Server server, String what, String option) {
    ServerConnector connector = (ServerConnector) server.getConnectors()[0];
    try {
      server.start();
      return connector.getLocalPort();
    } catch (IOException e) {
      stopQuietly(server);
      if (e instanceof BindException || e.getCause() instanceof BindException) {
        throw new CliException(
            "cannot start the "
                + what
                + ": port "
                + connector.getPort()
                + " on 127.0.0.1 is already in use ("
                + option
                + ")");
      }
      throw new CliException("cannot start the " + what + ": " + e.getMessage(), e);
    } catch (Exception e) {
      stopQuietly(server);
      throw new CliException("cannot start the " + what + ": " + e, e);
    }
  }

  static void stopQuietly(Server server) {
    try {
      server.stop();
    } catch (Exception e) {
      System.getLogger("io.bulkhead.scenarios")
          .log(System.Logger.Level.DEBUG, "stopping " + server, e);
    }
  }
}
