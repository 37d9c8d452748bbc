package io.bulkhead.scenarios;

import java.io.IOException;
import java.net.BindException;
import java.time.Duration;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/** The demo's Jetty servers: loopback only, sized for bursts, quiet, and stopped completely. */
final class Servers {

  private Servers() {}

  /** A server with one loopback connector on {@code port} (0: any free port); not started. */
  static Server create(String name, int port, Duration idleTimeout) {
    if (port < 0 || port > 65_535) {
      throw new CliException("port " + port + " is not a TCP port (0 to 65535)");
    }
    QueuedThreadPool threads = new QueuedThreadPool(200, 8);
    threads.setName(name);
    Server server = new Server(threads);
    ServerConnector connector = new ServerConnector(server, 1, 1);
    connector.setHost("127.0.0.1");
    connector.setPort(port);
    // A burst of connections (the load opens 130 at once) must not overflow the accept queue: a
    // dropped SYN is retried a second later and would show up as a second of latency.
    connector.setAcceptQueueSize(1024);
    connector.setIdleTimeout(idleTimeout.toMillis());
    server.addConnector(connector);
    server.setStopTimeout(0);
    return server;
  }

  /** Starts {@code server}; a port in use becomes a one-line error naming the port and the option. */
  static int start(Server server, String what, String option) {
    ServerConnector connector = (ServerConnector) server.getConnectors()[0];
    try {
      server.start();
      return connector.getLocalPort();
    } catch (IOException e) {
      stopQuietly(server);
      if (e instanceof BindException || e.getCause() instanceof BindException) {
        throw new CliException("cannot start the " + what + ": port " + connector.getPort()
            + " on 127.0.0.1 is already in use (" + option + ")");
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
      System.getLogger("io.bulkhead.scenarios").log(System.Logger.Level.DEBUG, "stopping " + server, e);
    }
  }
}
