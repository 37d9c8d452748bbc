package io.bulkhead.edge.testing;

import io.bulkhead.Bulkhead;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Clients that never behave, for the edges' hostile-client tests: silent connections, heads that
 * stop halfway, heads too big to accept, and clients that reset in the middle of a response. Each
 * edge's test asserts what its server must do about them.
 */
public final class HostileClients {

  /** The limit of {@link #chatCompartment()}. */
  public static final int LIMIT = 2;

  /** The queue of {@link #chatCompartment()}. */
  public static final int MAX_QUEUE = 8;

  /** How many silent connections a case opens. */
  public static final int IDLE_CLIENTS = 1_000;

  /** How many half-sent heads a case sends. */
  public static final int SLOW_HEAD_CLIENTS = 200;

  /** How many clients leave in a case, while queued or halfway through a response. */
  public static final int LEAVERS = 100;

  /** The chunks of a big body: 64 of 64 KiB, 4 MiB, far more than the socket buffers hold. */
  public static final int BIG_BODY_CHUNK = 64 * 1024;

  /** How many chunks of {@link #BIG_BODY_CHUNK} a big body has. */
  public static final int BIG_BODY_CHUNKS = 64;

  /** Slack for descriptors a server opens lazily (a jar, a selector). */
  public static final int FD_SLACK = 32;

  private HostileClients() {}

  /**
   * The compartment hostile clients are sent at: {@value #LIMIT} slots, {@value #MAX_QUEUE}
   * waiting.
   */
  public static Bulkhead chatCompartment() {
    return Bulkhead.builder("llm")
        .limit(LIMIT)
        .maxQueue(MAX_QUEUE)
        .maxWait(Duration.ofSeconds(60))
        .build();
  }

  /** {@code count} connections that never send a byte. */
  public static List<Socket> idle(int port, int count) throws IOException {
    List<Socket> sockets = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      sockets.add(RawHttp.connect(port));
    }
    return sockets;
  }

  /** {@code count} connections that send the first bytes of a GET of {@code path}, then nothing. */
  public static List<Socket> slowHeads(int port, int count, String path) throws IOException {
    byte[] partialHead = ("GET " + path + " HTTP/1.1\r\nHo").getBytes(StandardCharsets.US_ASCII);
    List<Socket> sockets = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Socket slow = RawHttp.connect(port);
      slow.getOutputStream().write(partialHead);
      slow.getOutputStream().flush();
      sockets.add(slow);
    }
    return sockets;
  }

  /**
   * Sends a GET of {@code path} with a 64 KiB header and returns the status line of the answer. The
   * head is sent from another thread: the server may answer and stop reading before it is in.
   */
  public static String hugeHead(int port, String path) throws Exception {
    String huge =
        "GET "
            + path
            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: "
            + "a".repeat(64 * 1024)
            + "\r\n\r\n";
    try (Socket socket = RawHttp.connect(port)) {
      CompletableFuture<Void> sent =
          CompletableFuture.runAsync(
              () -> {
                try {
                  OutputStream out = socket.getOutputStream();
                  out.write(huge.getBytes(StandardCharsets.US_ASCII));
                  out.flush();
                } catch (IOException serverStoppedReading) {
                  // expected once the server has answered and closed
                }
              });
      String status = RawHttp.readStatusLine(socket.getInputStream());
      sent.get(10, TimeUnit.SECONDS);
      return status;
    }
  }

  /**
   * Sends {@code count} GETs of {@code path}, reads the status line of each (the body has begun),
   * then resets each connection as a killed client does. Returns the status lines.
   */
  public static List<String> resetMidResponse(int port, String path, int count) throws IOException {
    List<Socket> readers = new ArrayList<>();
    List<String> statuses = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        Socket reader = RawHttp.sendGet(port, path);
        readers.add(reader);
        statuses.add(RawHttp.readStatusLine(reader.getInputStream()));
      }
      for (Socket reader : readers) {
        reader.setSoLinger(true, 0); // a reset
      }
    } finally {
      RawHttp.closeAll(readers);
    }
    return statuses;
  }

  /** What the process holds at one moment: used heap, live threads, open file descriptors. */
  public record Resources(long heapMib, int threads, long fds) {

    /** The figures now. */
    public static Resources now() throws IOException {
      long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() >> 20;
      int threads = ManagementFactory.getThreadMXBean().getThreadCount();
      try (Stream<Path> open = Files.list(Path.of("/proc/self/fd"))) {
        return new Resources(heap, threads, open.count());
      }
    }

    /** Prints the figures before, during and after a test's hostile clients. */
    public static void print(String test, Resources before, Resources during, Resources after) {
      System.out.printf(
          "hostile %s: heap MiB %d/%d/%d, threads %d/%d/%d, fds %d/%d/%d (before/during/after)%n",
          test,
          before.heapMib,
          during.heapMib,
          after.heapMib,
          before.threads,
          during.threads,
          after.threads,
          before.fds,
          during.fds,
          after.fds);
    }
  }
}
