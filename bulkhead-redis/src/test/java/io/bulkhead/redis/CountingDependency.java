package io.bulkhead.redis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The oracle: a fake dependency on loopback that counts the requests open on it at once, by itself,
 * whatever the library reports. Each request holds for a short service time, so calls overlap.
 */
final class CountingDependency implements AutoCloseable {

  private final ServerSocket server;
  private final ExecutorService handlers = Executors.newCachedThreadPool();
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger maxOpen = new AtomicInteger();
  private final AtomicLong served = new AtomicLong();
  private final long serviceMillis;

  CountingDependency(long serviceMillis) throws IOException {
    this.serviceMillis = serviceMillis;
    this.server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    handlers.execute(this::accept);
  }

  int port() {
    return server.getLocalPort();
  }

  int maxOpen() {
    return maxOpen.get();
  }

  long served() {
    return served.get();
  }

  private void accept() {
    while (!server.isClosed()) {
      Socket s;
      try {
        s = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      try {
        handlers.execute(() -> serve(s));
      } catch (RejectedExecutionException e) {
        // close() ran between the accept and here: the connection goes with the others, rather
        // than an uncaught exception that Awaitility would hand to whichever test awaits next.
        try {
          s.close();
        } catch (IOException ignored) {
          // already closed
        }
        return;
      }
    }
  }

  private void serve(Socket s) {
    try (s) {
      new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
          .readLine();
      int now = open.incrementAndGet();
      maxOpen.accumulateAndGet(now, Math::max);
      try {
        Thread.sleep(serviceMillis); // the dependency's service time, not an ordering device
      } finally {
        open.decrementAndGet();
      }
      served.incrementAndGet();
      OutputStream out = s.getOutputStream();
      out.write("ok\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
    } catch (IOException | InterruptedException e) {
      // the caller went away; nothing to count
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    handlers.shutdownNow();
  }
}
