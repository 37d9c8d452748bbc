package io.bulkhead.scenarios;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * The slow provider of the slow-upstream experiment: every request, on any path, is answered {@code 200 a slow answer}
 * after the same delay. Waiting answers hold no thread (they are scheduled), so the upstream itself is
 * never the bottleneck. It counts its open connections, so a run can report how many the app opened.
 */
public final class FakeUpstream implements AutoCloseable {

  /** What every call gets back, after the delay. */
  public static final String ANSWER = "a slow answer\n";

  private final Server server;
  private final Duration delay;
  private final int port;
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger maxOpen = new AtomicInteger();
  private final AtomicInteger requests = new AtomicInteger();

  private FakeUpstream(int port, Duration delay) {
    this.delay = delay;
    // Connections sit idle for the whole delay while their answer is pending: outlast it.
    this.server = Servers.create("upstream", port, delay.plusSeconds(60));
    ServerConnector connector = (ServerConnector) server.getConnectors()[0];
    connector.addEventListener(new Connection.Listener() {
      @Override
      public void onOpened(Connection connection) {
        maxOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
      }

      @Override
      public void onClosed(Connection connection) {
        open.decrementAndGet();
      }
    });
    server.setHandler(new Handler.Abstract.NonBlocking() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) {
        requests.incrementAndGet();
        request.getComponents().getScheduler().schedule(() -> {
          response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
          Content.Sink.write(response, true, ANSWER, callback);
        }, delay.toNanos(), TimeUnit.NANOSECONDS);
        return true;
      }
    });
    this.port = Servers.start(server, "upstream", "--port");
  }

  /**
   * Starts the upstream on 127.0.0.1:{@code port} (0: any free port).
   *
   * @throws CliException if the port is in use
   */
  public static FakeUpstream start(int port, Duration delay) {
    return new FakeUpstream(port, delay);
  }

  public URI uri() {
    return URI.create("http://127.0.0.1:" + port);
  }

  public int port() {
    return port;
  }

  public Duration delay() {
    return delay;
  }

  /** The most connections that were open at once. */
  public int maxOpenConnections() {
    return maxOpen.get();
  }

  public int requests() {
    return requests.get();
  }

  /** Blocks until the server stops (for the {@code upstream} command). */
  public void join() throws InterruptedException {
    server.join();
  }

  @Override
  public void close() {
    Servers.stopQuietly(server);
  }
}
