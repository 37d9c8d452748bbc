package io.bulkhead.redis;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.Permit;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One process of a test fleet, launched by {@link FleetFaultTest} in its own JVM: {@code REDIS_URI
 * COMPARTMENT DEPENDENCY_PORT TAG}.
 *
 * <p>It calls the dependency through one fleet compartment from four threads, each its own way:
 * {@code tryAcquire}, {@code submit} and two {@code call}s, and measures how long each admission
 * kept its caller waiting: until {@code call} ran its task or threw, until {@code tryAcquire} and
 * {@code submit} returned, until a refused {@code submit} failed. Commands on standard input, one a
 * line: {@code SERVICE MILLIS} (each call's service time at the dependency), {@code PAUSE} (no new
 * call starts; the calls admitted are held at the dependency until the test releases them; prints
 * {@code HOLDING} once no call is between its admission and its request), {@code RESUME MILLIS},
 * {@code STATE} (prints the state, resets nothing), {@code REPORT} (prints the longest waits since
 * the last report and resets them), {@code STOP}.
 */
public final class FleetWorker {

  static final int LIMIT = 6;
  static final Duration MAX_WAIT = Duration.ofMillis(200);
  static final Duration LEASE_TTL = Duration.ofSeconds(3);
  static final Duration MAX_CALL = Duration.ofSeconds(1);

  private static volatile String service = "20";
  private static volatile boolean paused;
  // Loop threads parked by PAUSE, plus calls held at the dependency after their request was sent:
  // when it counts every loop thread, no call of this process is between admission and sending.
  private static final AtomicInteger quiet = new AtomicInteger();
  private static final AtomicLong callWait = new AtomicLong();
  private static final AtomicLong tryWait = new AtomicLong();
  private static final AtomicLong submitReturn = new AtomicLong();
  private static final AtomicLong submitRefusal = new AtomicLong();
  private static final AtomicLong admitted = new AtomicLong();
  private static final AtomicLong refused = new AtomicLong();

  private FleetWorker() {}

  public static void main(String[] args) throws Exception {
    RedisCompartments fleet =
        RedisCompartments.settings()
            .leaseTtl(LEASE_TTL)
            .rebalanceInterval(Duration.ofMillis(100))
            .commandTimeout(Duration.ofMillis(1500))
            .connectTimeout(Duration.ofSeconds(1))
            .connect(args[0]);
    FleetBulkhead compartment =
        fleet
            .builder(args[1])
            .limit(LIMIT)
            .maxQueue(4)
            .maxWait(MAX_WAIT)
            .maxCallDuration(MAX_CALL)
            .build(); // fails closed while its lease cannot cover a call
    int port = Integer.parseInt(args[2]);
    String tag = args[3];
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService async = Executors.newFixedThreadPool(2);
    List<Thread> threads = new ArrayList<>();
    threads.add(loop(stop, () -> tryOnce(compartment, port, tag)));
    threads.add(loop(stop, () -> submitOnce(compartment, async, port, tag)));
    for (int i = 0; i < 2; i++) {
      threads.add(loop(stop, () -> callOnce(compartment, port, tag)));
    }
    System.out.println("STARTED");
    System.out.flush();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.startsWith("SERVICE ")) {
        service = line.substring("SERVICE ".length());
        System.out.println("SERVICE " + service);
      } else if (line.equals("PAUSE")) {
        service = "hold";
        paused = true;
        long by = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (quiet.get() < threads.size() && System.nanoTime() - by < 0) {
          Thread.sleep(1); // polling an observable count, bounded above
        }
        System.out.println("HOLDING " + quiet.get());
      } else if (line.startsWith("RESUME ")) {
        service = line.substring("RESUME ".length());
        paused = false;
        System.out.println("RESUMED");
      } else if (line.equals("STATE")) {
        System.out.println("STATE " + state(compartment));
      } else if (line.equals("REPORT")) {
        System.out.println(
            "REPORT "
                + callWait.getAndSet(0) / 1000
                + " "
                + tryWait.getAndSet(0) / 1000
                + " "
                + submitReturn.getAndSet(0) / 1000
                + " "
                + submitRefusal.getAndSet(0) / 1000
                + " "
                + state(compartment));
      } else if (line.equals("STOP")) {
        break;
      }
      System.out.flush();
    }
    stop.set(true);
    service = "0";
    for (Thread t : threads) {
      t.join();
    }
    async.shutdown();
    fleet.close();
    System.out.println("STOPPED");
    System.out.flush();
  }

  /**
   * "inFallback admitted refused leasesLost callsOverran reconnects fallbackSwitches syncsAnswered"
   */
  private static String state(FleetBulkhead compartment) {
    FleetStats s = compartment.fleetStats();
    return s.inFallback()
        + " "
        + admitted.get()
        + " "
        + refused.get()
        + " "
        + s.leasesLost()
        + " "
        + s.callsOverran()
        + " "
        + s.reconnects()
        + " "
        + s.fallbackSwitches()
        + " "
        + ((RedisBulkhead) compartment).syncsAnswered();
  }

  private static Thread loop(AtomicBoolean stop, Runnable once) {
    Thread t =
        new Thread(
            () -> {
              while (!stop.get()) {
                if (paused) {
                  quiet.incrementAndGet();
                  while (paused && !stop.get()) {
                    LockSupport.parkNanos(1_000_000); // until RESUME; polled, bounded by the test
                  }
                  quiet.decrementAndGet();
                  continue;
                }
                once.run();
              }
            });
    t.start();
    return t;
  }

  private static void callOnce(FleetBulkhead compartment, int port, String tag) {
    long asked = System.nanoTime();
    try {
      compartment.call(
          () -> {
            record(callWait, asked);
            return callDependency(port, tag);
          });
      admitted.incrementAndGet();
    } catch (BulkheadFullException e) {
      record(callWait, asked);
      refused.incrementAndGet();
      pause();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void tryOnce(FleetBulkhead compartment, int port, String tag) {
    long asked = System.nanoTime();
    Optional<Permit> permit = compartment.tryAcquire();
    record(tryWait, asked);
    if (permit.isEmpty()) {
      refused.incrementAndGet();
      pause();
      return;
    }
    try (Permit p = permit.get()) {
      callDependency(port, tag);
      admitted.incrementAndGet();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void submitOnce(
      FleetBulkhead compartment, ExecutorService async, int port, String tag) {
    long asked = System.nanoTime();
    CompletableFuture<String> f =
        compartment.submit(
            () ->
                CompletableFuture.supplyAsync(
                    () -> {
                      try {
                        return callDependency(port, tag);
                      } catch (Exception e) {
                        throw new IllegalStateException(e);
                      }
                    },
                    async));
    record(submitReturn, asked);
    try {
      f.join();
      admitted.incrementAndGet();
    } catch (java.util.concurrent.CompletionException e) {
      if (!(e.getCause() instanceof BulkheadFullException)) {
        throw e;
      }
      record(submitRefusal, asked);
      refused.incrementAndGet();
      pause();
    }
  }

  private static void record(AtomicLong longest, long since) {
    longest.accumulateAndGet(System.nanoTime() - since, Math::max);
  }

  /** After a refusal, a little while before asking again, as a client backs off. */
  private static void pause() {
    try {
      Thread.sleep(5);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String callDependency(int port, String tag) throws Exception {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      OutputStream out = s.getOutputStream();
      String time = service;
      out.write(("call " + time + " " + tag + "\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      boolean held = time.equals("hold");
      if (held) {
        quiet.incrementAndGet();
      }
      try {
        return new BufferedReader(
                new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
            .readLine();
      } finally {
        if (held) {
          quiet.decrementAndGet();
        }
      }
    }
  }
}
