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
import java.util.concurrent.atomic.AtomicLong;

/**
 * One process of a test fleet, launched by {@link FleetProcessTest} in its own JVM.
 *
 * <pre>
 * hammer REDIS_URI COMPARTMENT TTL_MS DEPENDENCY_PORT THREADS CALLS_PER_THREAD
 * hold   REDIS_URI COMPARTMENT TTL_MS SLOTS
 * </pre>
 */
public final class FleetWorker {

  static final int LIMIT = 10;

  private FleetWorker() {}

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    RedisCompartments fleet = RedisCompartments.settings()
        .leaseTtl(Duration.ofMillis(Long.parseLong(args[3])))
        .pollInterval(Duration.ofMillis(100))
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
    FleetBulkhead compartment = fleet.builder(args[2]).limit(LIMIT).maxQueue(100)
        .maxWait(Duration.ofSeconds(20)).build();
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
    int calls = Integer.parseInt(args[6]);
    AtomicLong admitted = new AtomicLong();
    AtomicLong refused = new AtomicLong();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w = new Thread(() -> {
        for (int i = 0; i < calls; i++) {
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
    System.out.println("DONE " + admitted.get() + " " + refused.get() + " "
        + compartment.fleetStats().leasesHeld() + " " + compartment.fleetStats().fallbackSwitches());
    fleet.close();
  }

  private static String callDependency(int port) throws Exception {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      OutputStream out = s.getOutputStream();
      out.write("call\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
          .readLine();
    }
  }
}
