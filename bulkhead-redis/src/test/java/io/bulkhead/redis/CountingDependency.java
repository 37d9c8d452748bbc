package io.bulkhead.redis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The oracle: a fake dependency on loopback that counts the requests open on it at once, by itself,
 * whatever the library reports. A request is one line, {@code call [MILLIS [TAG]]}: it is held for
 * its service time ({@code MILLIS}, else the default; {@code hold} to keep it until {@link
 * #releaseHeld()}), counted from the moment its line arrives until its answer is sent, in the total
 * and under its tag.
 */
final class CountingDependency implements AutoCloseable {

  private final ServerSocket server;
  private final ExecutorService handlers = Executors.newCachedThreadPool();
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger maxOpen = new AtomicInteger();
  private final AtomicLong served = new AtomicLong();
  private final Map<String, AtomicInteger> openByTag = new ConcurrentHashMap<>();
  private final AtomicReference<CountDownLatch> held = new AtomicReference<>(new CountDownLatch(1));
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

  /** The most requests open at once since the last reset, and a new count from those open now. */
  int resetMax() {
    return maxOpen.getAndSet(open.get());
  }

  /** Requests of {@code tag} open now. */
  int openWith(String tag) {
    AtomicInteger n = openByTag.get(tag);
    return n == null ? 0 : n.get();
  }

  long served() {
    return served.get();
  }

  /** Answers every request held so far ({@code call hold}); later ones are held anew. */
  void releaseHeld() {
    held.getAndSet(new CountDownLatch(1)).countDown();
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
      String line =
          new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
              .readLine();
      if (line == null) {
        return;
      }
      String[] words = line.trim().split(" ");
      String tag = words.length > 2 ? words[2] : "";
      AtomicInteger mine = openByTag.computeIfAbsent(tag, t -> new AtomicInteger());
      CountDownLatch release = held.get();
      int now = open.incrementAndGet();
      mine.incrementAndGet();
      maxOpen.accumulateAndGet(now, Math::max);
      try {
        if (words.length > 1 && words[1].equals("hold")) {
          release.await();
        } else {
          // the dependency's service time, not an ordering device
          Thread.sleep(words.length > 1 ? Long.parseLong(words[1]) : serviceMillis);
        }
      } finally {
        mine.decrementAndGet();
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
    releaseHeld();
    server.close();
    handlers.shutdownNow();
  }
}
