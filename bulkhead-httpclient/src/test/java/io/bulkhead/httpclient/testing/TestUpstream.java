package io.bulkhead.httpclient.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real HTTP/1.1 upstream on loopback (the JDK's server) for the client edges' tests.
 *
 * <ul>
 *   <li>{@code /ok}: 200 with the body "ok\n" (a fixed length).
 *   <li>{@code /stream}: 200, chunked; sends "first\n" at once, then parks until {@link #release}
 *       lets it send "rest\n" and end. {@link #awaitStreaming} waits until n have sent their first
 *       chunk. A client that closes the body early makes the write fail, which ends the handler.
 *   <li>{@code /busy?status=503&retry-after=7}: that status (503 unless given) with that {@code
 *       Retry-After} (none unless given) and the body "busy\n".
 * </ul>
 *
 * Every handler runs on its own thread, so parked streams do not hold up other requests.
 */
public final class TestUpstream implements AutoCloseable {

  private static final long WAIT_SECONDS = 30;

  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final Semaphore streaming = new Semaphore(0);
  private final Semaphore released = new Semaphore(0);
  private final AtomicInteger requests = new AtomicInteger();
  private final AtomicInteger concurrent = new AtomicInteger();
  private final AtomicInteger maxConcurrent = new AtomicInteger();

  private TestUpstream() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/ok", exchange -> counted(exchange, this::ok));
    server.createContext("/stream", exchange -> counted(exchange, this::stream));
    server.createContext("/busy", exchange -> counted(exchange, this::busy));
    server.setExecutor(threads);
    server.start();
  }

  /** Starts a server on a free loopback port. */
  public static TestUpstream start() throws IOException {
    return new TestUpstream();
  }

  /** The URI of {@code pathAndQuery} on this server. */
  public URI uri(String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + pathAndQuery);
  }

  /** The requests received so far. */
  public int requests() {
    return requests.get();
  }

  /** The most requests that were being answered at once. */
  public int maxConcurrent() {
    return maxConcurrent.get();
  }

  /** Waits until {@code n} more {@code /stream} answers have sent their first chunk. */
  public void awaitStreaming(int n) throws InterruptedException {
    if (!streaming.tryAcquire(n, WAIT_SECONDS, TimeUnit.SECONDS)) {
      throw new AssertionError(
          "fewer than " + n + " streams started within " + WAIT_SECONDS + " s");
    }
  }

  /** Lets {@code n} parked {@code /stream} answers send the rest of their body. */
  public void release(int n) {
    released.release(n);
  }

  private interface Handler {
    void handle(HttpExchange exchange) throws IOException, InterruptedException;
  }

  private void counted(HttpExchange exchange, Handler handler) throws IOException {
    requests.incrementAndGet();
    maxConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
    try (exchange) {
      exchange.getRequestBody().readAllBytes();
      handler.handle(exchange);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      concurrent.decrementAndGet();
    }
  }

  private void ok(HttpExchange exchange) throws IOException {
    byte[] body = "ok\n".getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(200, body.length);
    exchange.getResponseBody().write(body);
  }

  private void stream(HttpExchange exchange) throws IOException, InterruptedException {
    exchange.sendResponseHeaders(200, 0); // chunked
    OutputStream out = exchange.getResponseBody();
    out.write("first\n".getBytes(StandardCharsets.UTF_8));
    out.flush();
    streaming.release();
    if (!released.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS)) {
      return; // the test failed elsewhere; end the answer unfinished
    }
    out.write("rest\n".getBytes(StandardCharsets.UTF_8));
  }

  private void busy(HttpExchange exchange) throws IOException {
    String status = "503";
    String retryAfter = null;
    String query = exchange.getRequestURI().getQuery();
    if (query != null) {
      for (String pair : query.split("&")) {
        String[] kv = pair.split("=", 2);
        if (kv[0].equals("status")) {
          status = kv[1];
        } else if (kv[0].equals("retry-after")) {
          retryAfter = java.net.URLDecoder.decode(kv[1], StandardCharsets.UTF_8);
        }
      }
    }
    if (retryAfter != null) {
      exchange.getResponseHeaders().add("Retry-After", retryAfter);
    }
    byte[] body = "busy\n".getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(Integer.parseInt(status), body.length);
    exchange.getResponseBody().write(body);
  }

  @Override
  public void close() {
    released.release(Integer.MAX_VALUE / 2);
    server.stop(0);
    threads.shutdownNow();
  }
}
