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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One process of a test fleet, launched by {@link FleetProcessTest} in its own JVM.
 *
 * <pre>
 * hammer REDIS_URI COMPARTMENT TTL_MS DEPENDENCY_PORT THREADS CALLS_PER_THREAD
 * hold   REDIS_URI COMPARTMENT TTL_MS SLOTS
 * until  REDIS_URI COMPARTMENT TTL_MS DEPENDENCY_PORT THREADS
 * pause  REDIS_URI COMPARTMENT TTL_MS DEPENDENCY_PORT HELD THREADS CALLS_PER_THREAD
 * </pre>
 *
 * <p>{@code until} hammers like {@code hammer} until a line arrives on its standard input. {@code
 * pause} is the process {@link FleetPauseTest} stops: HELD calls each call the dependency once and
 * then keep their leases without touching it ("HOLDING n"); once the fleet has reported those
 * leases lost ("LOST n", after the test's kill -STOP, kill -CONT and a line on standard input),
 * they end, and the process hammers like {@code hammer}, with new leases.
 */
public final class FleetWorker {

  static final int LIMIT = 10;

  private FleetWorker() {}

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    RedisCompartments fleet =
        RedisCompartments.settings()
            .leaseTtl(Duration.ofMillis(Long.parseLong(args[3])))
            .pollInterval(Duration.ofMillis(100))
            // These tests are about the fleet's limit, not about a slow Redis: a command that takes
            // longer than the default 500 ms on a loaded 2-core host must not switch a worker to
            // its
            // fallback share (RedisOutageTest covers that).
            .commandTimeout(Duration.ofSeconds(5))
            .connect(args[1]);
    // A cold JVM can miss the first connection's short timeout; the oracle needs every process on
    // leases, not on its fallback share, so wait (bounded) until the fleet is connected.
    long connectBy = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!fleet.connected()) {
      if (System.nanoTime() - connectBy > 0) {
        System.out.println("NOT CONNECTED");
        System.exit(2);
      }
      Thread.sleep(50); // polling an observable state, bounded above
    }
    FleetBulkhead compartment =
        fleet.builder(args[2]).limit(LIMIT).maxQueue(100).maxWait(Duration.ofSeconds(20)).build();
    if (mode.equals("pause")) {
      pauseThenHammer(
          fleet,
          compartment,
          Integer.parseInt(args[4]),
          Integer.parseInt(args[5]),
          Integer.parseInt(args[6]),
          Integer.parseInt(args[7]));
      return;
    }
    if (mode.equals("hold")) {
      int slots = Integer.parseInt(args[4]);
      List<Permit> held = new ArrayList<>();
      for (int i = 0; i < slots; i++) {
        held.add(compartment.acquire());
      }
      System.out.println("HELD " + held.size());
      System.out.flush();
      new CountDownLatch(1).await(); // until the test kills this process
      return;
    }
    int port = Integer.parseInt(args[4]);
    int threads = Integer.parseInt(args[5]);
    if (mode.equals("until")) {
      AtomicBoolean stop = new AtomicBoolean();
      Thread stdin =
          new Thread(
              () -> {
                try {
                  new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                      .readLine();
                } catch (java.io.IOException e) {
                  // the test went away: stop as well
                }
                stop.set(true);
              });
      stdin.setDaemon(true);
      stdin.start();
      System.out.println("HAMMERING");
      System.out.flush();
      hammer(fleet, compartment, port, threads, i -> !stop.get(), 0);
      return;
    }
    int calls = Integer.parseInt(args[6]);
    hammer(fleet, compartment, port, threads, i -> i < calls, 0);
  }

  private static void pauseThenHammer(
      RedisCompartments fleet,
      FleetBulkhead compartment,
      int port,
      int heldCalls,
      int threads,
      int calls)
      throws Exception {
    CountDownLatch holding = new CountDownLatch(heldCalls);
    CountDownLatch release = new CountDownLatch(1);
    List<Thread> held = new ArrayList<>();
    for (int i = 0; i < heldCalls; i++) {
      Thread t =
          new Thread(
              () -> {
                try {
                  compartment.call(
                      () -> {
                        callDependency(port); // under its lease
                        holding.countDown();
                        release
                            .await(); // holds the lease, out of the dependency, through the pause
                        return null;
                      });
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      t.start();
      held.add(t);
    }
    holding.await();
    System.out.println("HOLDING " + heldCalls);
    System.out.flush();
    // The test stops this process now, for longer than the lease TTL, resumes it, and then says so
    // on standard input: the bound below starts there, not before the other JVMs start and the stop
    // (both unbounded here, and long on a loaded host). The renewal that runs after the resume
    // finds
    // the leases gone; poll that observable state, bounded above.
    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    long by = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (compartment.fleetStats().leasesLost() < heldCalls) {
      if (System.nanoTime() - by > 0) {
        System.out.println("NOT LOST " + compartment.fleetStats());
        System.exit(3);
      }
      Thread.sleep(20);
    }
    System.out.println("LOST " + compartment.fleetStats().leasesLost());
    System.out.flush();
    release.countDown();
    for (Thread t : held) {
      t.join();
    }
    hammer(fleet, compartment, port, threads, i -> i < calls, heldCalls);
  }

  /** Calls the dependency from {@code threads} threads while {@code more} says so; prints DONE. */
  private static void hammer(
      RedisCompartments fleet,
      FleetBulkhead compartment,
      int port,
      int threads,
      java.util.function.IntPredicate more,
      int calledBefore)
      throws Exception {
    AtomicLong admitted = new AtomicLong(calledBefore);
    AtomicLong refused = new AtomicLong();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w =
          new Thread(
              () -> {
                for (int i = 0; more.test(i); i++) {
                  try {
                    compartment.call(() -> callDependency(port));
                    admitted.incrementAndGet();
                  } catch (BulkheadFullException e) {
                    refused.incrementAndGet();
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                }
              });
      w.start();
      workers.add(w);
    }
    for (Thread w : workers) {
      w.join();
    }
    FleetStats stats = compartment.fleetStats();
    System.out.println(
        "DONE "
            + admitted.get()
            + " "
            + refused.get()
            + " "
            + stats.leasesHeld()
            + " "
            + stats.fallbackSwitches()
            + " "
            + stats.leasesLost());
    fleet.close();
  }

  private static String callDependency(int port) throws Exception {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      OutputStream out = s.getOutputStream();
      out.write("call\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      return new BufferedReader(
              new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
          .readLine();
    }
  }
}
