package io.bulkhead.scenarios;

import io.bulkhead.internal.DaemonThreads;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

/**
 * The child JVMs of the runaway-report experiment ({@link ProcessIsolation}), started by it with
 * {@code java -cp <its classpath> io.bulkhead.scenarios.ProcessChild ROLE LEAK_BYTES_PER_SECOND
 * LEAK_CAP_BYTES}:
 *
 * <ul>
 *   <li>{@code api}: the checkout API, {@code /login} (answers at once) and {@code /checkout} (a
 *       millisecond or so of hashing), on a loopback port it prints as {@code ready PORT};
 *   <li>{@code api-with-worker}: the same API with the report worker running in its JVM;
 *   <li>{@code worker}: the report worker alone; prints {@code ready 0}.
 * </ul>
 *
 * <p>It reads commands on standard input: {@code rogue} makes the report worker's current report go
 * rogue (spin one thread per available processor and allocate without freeing, up to
 * LEAK_CAP_BYTES, at LEAK_BYTES_PER_SECOND, then print {@code leak held BYTES} should the process
 * still be alive). When standard input ends — the parent is gone — the process exits, so that a
 * parent killed without a chance to clean up leaves nothing running.
 *
 * <p>Not an API: its own main class, so that it runs from the demo's jar or classpath as is.
 */
public final class ProcessChild {

  static final String API = "api";
  static final String API_WITH_WORKER = "api-with-worker";
  static final String WORKER = "worker";
  static final String ROGUE = "rogue";
  static final String READY = "ready ";

  /** What the child prints when the rogue report starts, followed by how many threads spin. */
  static final String ROGUE_STARTED = "rogue threads ";

  /**
   * What the child prints when its leak reached LEAK_CAP_BYTES and the process is still alive,
   * followed by the bytes held: the runaway's end when it did not kill the process.
   */
  static final String LEAK_HELD = "leak held ";

  /** A checkout's work: hashing this many bytes (about a millisecond on a laptop core). */
  private static final int CHECKOUT_BYTES = 256 * 1024;

  private static final Duration HANDLING_IDLE_TIMEOUT = Duration.ofSeconds(30);

  private ProcessChild() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 3) {
      System.err.println(
          "usage: ProcessChild api|api-with-worker|worker LEAK_BYTES_PER_SECOND"
              + " LEAK_CAP_BYTES");
      System.exit(2);
    }
    String role = args[0];
    ReportWorker worker =
        role.equals(API)
            ? null
            : new ReportWorker(Long.parseLong(args[1]), Long.parseLong(args[2]));
    Server server = null;
    int port = 0;
    if (!role.equals(WORKER)) {
      server = Servers.create("checkout-api", 0, HANDLING_IDLE_TIMEOUT);
      server.setHandler(new CheckoutApi());
      port = Servers.start(server, "checkout API", "none");
    }
    if (worker != null) {
      worker.start();
    }
    System.out.println(READY + port);
    System.out.flush();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.equals(ROGUE) && worker != null) {
        // Said before it starts: once the leak runs, the process may die at any moment.
        int threads = Runtime.getRuntime().availableProcessors();
        System.out.println(ROGUE_STARTED + threads);
        System.out.flush();
        worker.goRogue(threads);
      }
    }
    // The parent closed our standard input, or died: nothing is watching, stop.
    System.exit(0);
  }

  /** {@code /login} answers at once; {@code /checkout} hashes a buffer first; anything else 404. */
  private static final class CheckoutApi extends Handler.Abstract {
    private final byte[] cart = new byte[CHECKOUT_BYTES];

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
      String path = Request.getPathInContext(request);
      int status = HttpStatus.OK_200;
      String body = "ok\n";
      if (path.equals("/checkout")) {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        body = String.format("%x%n", sha.digest(cart)[0]);
      } else if (!path.equals("/login")) {
        status = HttpStatus.NOT_FOUND_404;
        body = "not found\n";
      }
      response.setStatus(status);
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
      Content.Sink.write(response, true, body, callback);
      return true;
    }
  }

  /**
   * Runs a small report every {@link #REPORT_PERIOD}; {@link #goRogue} turns the current one into
   * the runaway. The runaway's threads only ever add to their own list and spin: nothing else reads
   * their state, so they share nothing but the {@code rogue} flag that makes it happen once.
   */
  static final class ReportWorker {
    private static final Duration REPORT_PERIOD = Duration.ofMillis(100);
    private static final int REPORT_BYTES = 64 * 1024;

    /** The leak grows by chunks of this size, each filled so that its pages are really used. */
    private static final int CHUNK_BYTES = 1024 * 1024;

    private final long leakBytesPerSecond;
    private final long leakCapBytes;
    private final AtomicBoolean rogue = new AtomicBoolean();
    private final ScheduledExecutorService reports =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.numbered("report-"));
    private final byte[] data = new byte[REPORT_BYTES];

    ReportWorker(long leakBytesPerSecond, long leakCapBytes) {
      this.leakBytesPerSecond = leakBytesPerSecond;
      this.leakCapBytes = leakCapBytes;
    }

    void start() {
      reports.scheduleAtFixedRate(this::report, 0, REPORT_PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void report() {
      try {
        MessageDigest.getInstance("SHA-256").digest(data);
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    }

    /** Starts the runaway, once: {@code spinners} spinning threads and the leak. */
    void goRogue(int spinners) {
      if (!rogue.compareAndSet(false, true)) {
        return;
      }
      for (int i = 0; i < spinners; i++) {
        DaemonThreads.start("rogue-spin-" + i, ReportWorker::spin);
      }
      DaemonThreads.start("rogue-leak", this::leak);
    }

    private static void spin() {
      long x = 1;
      while (!Thread.currentThread().isInterrupted()) {
        x = x * 6_364_136_223_846_793_005L + 1; // busy work the JIT cannot drop: x is published
        if (x == 0) {
          System.out.println(x);
        }
      }
    }

    /**
     * Adds a chunk on schedule until the cap, never frees one, and says so once at the cap. A leak
     * that falls behind its schedule catches up without pausing.
     */
    private void leak() {
      List<byte[]> kept = new ArrayList<>();
      long nanosPerChunk =
          Math.max(1, TimeUnit.SECONDS.toNanos(1) * CHUNK_BYTES / leakBytesPerSecond);
      long next = System.nanoTime();
      long held = 0;
      for (; held + CHUNK_BYTES <= leakCapBytes; held += CHUNK_BYTES) {
        byte[] chunk = new byte[CHUNK_BYTES];
        Arrays.fill(chunk, (byte) 1);
        kept.add(chunk);
        next += nanosPerChunk;
        for (long left; (left = next - System.nanoTime()) > 0; ) {
          LockSupport.parkNanos(left); // pacing the leak, not waiting for an event
        }
      }
      // At the cap without being stopped: say so (the parent's event that the runaway is over),
      // then hold on to it all.
      System.out.println(LEAK_HELD + held);
      System.out.flush();
      while (!kept.isEmpty()) {
        LockSupport.park();
      }
    }
  }
}
