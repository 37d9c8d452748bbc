package io.bulkhead.scenarios;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * The slow provider of the slow-upstream experiment: every request, on any path, is answered {@code
 * 200 a slow answer} after the same delay; optionally a fixed fraction of them is answered {@code
 * 500} instead (after the same delay), spread evenly over the requests rather than at random, so
 * that a run is repeatable. Waiting answers hold no thread (they are scheduled), so the upstream
 * itself is never the bottleneck. It counts its open connections, so a run can report how many the
 * app opened.
 */
public final class FakeUpstream implements AutoCloseable {

  /** What every call gets back, after the delay. */
  public static final String ANSWER = "a slow answer\n";

  /** What a failing call gets back, after the delay, with status 500. */
  public static final String FAILURE = "the upstream failed\n";

  private final Server server;
  private volatile Duration
      delay; // read per request: a run may slow the upstream down or speed it up
  private final double failureFraction;
  private final int port;
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger maxOpen = new AtomicInteger();
  private final AtomicInteger requests = new AtomicInteger();

  private FakeUpstream(int port, Duration delay, double failureFraction) {
    if (!(failureFraction >= 0 && failureFraction <= 1)) {
      throw new IllegalArgumentException(
          "failureFraction must be within [0, 1] but was " + failureFraction);
    }
    this.delay = delay;
    this.failureFraction = failureFraction;
    // Connections sit idle for the whole delay while their answer is pending: outlast it.
    // It accepts as many connections as the process may open: an app under ten or a hundred
    // times the experiment's load opens thousands, and the upstream must not be what limits it.
    this.server = Servers.create("upstream", port, delay.plusSeconds(60), EdgeLimits.wide());
    ServerConnector connector = (ServerConnector) server.getConnectors()[0];
    connector.addEventListener(
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
    server.setHandler(
        new Handler.Abstract.NonBlocking() {
          @Override
          public boolean handle(Request request, Response response, Callback callback) {
            boolean fail = fails(requests.incrementAndGet());
            request
                .getComponents()
                .getScheduler()
                .schedule(
                    () -> {
                      response
                          .getHeaders()
                          .put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
                      if (fail) {
                        response.setStatus(HttpStatus.INTERNAL_SERVER_ERROR_500);
                      }
                      Content.Sink.write(response, true, fail ? FAILURE : ANSWER, callback);
                    },
                    FakeUpstream.this.delay.toNanos(),
                    TimeUnit.NANOSECONDS);
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
    return new FakeUpstream(port, delay, 0);
  }

  /**
   * Starts the upstream on 127.0.0.1:{@code port} (0: any free port), answering {@code 500} to the
   * fraction {@code failureFraction} of requests: the n-th request fails when {@code floor(n *
   * failureFraction)} steps up at n, so 0.1 fails the 10th, 20th, 30th and so on.
   *
   * @throws CliException if the port is in use
   * @throws IllegalArgumentException if {@code failureFraction} is outside [0, 1]
   */
  public static FakeUpstream start(int port, Duration delay, double failureFraction) {
    return new FakeUpstream(port, delay, failureFraction);
  }

  private boolean fails(long n) {
    return Math.floor(n * failureFraction) > Math.floor((n - 1) * failureFraction);
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

  /**
   * Answers the requests that arrive from now on after {@code delay} (those already waiting keep
   * theirs): the dependency slows down or recovers during a run. Connections then stay idle for up
   * to the new delay, so a delay beyond the one given at the start plus a minute may see them
   * closed.
   *
   * @throws IllegalArgumentException if {@code delay} is negative
   */
  public void delay(Duration delay) {
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay must not be negative but was " + delay);
    }
    this.delay = delay;
  }

  /** The fraction of requests answered {@code 500}. */
  public double failureFraction() {
    return failureFraction;
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
