package io.bulkhead.redis;

import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.PoolConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One instance of a service in {@link FleetFullTest}, in its own JVM: two pools (checkout and
 * reports, one connection each at least) whose total is its share of a fleet budget that cannot
 * give every instance two.
 *
 * <pre>
 * REDIS_URI BUDGET TTL_MS JDBC_URL USERNAME|- DATABASE_NAME CAPACITY
 * </pre>
 *
 * Prints {@code PARKED} when the fleet has no room for it (and then waits for room), {@code OPEN
 * share} once its pools are open, {@code SHARE share} after each resize, {@code RESIZE FAILED} when
 * its pools could not follow the share; a line {@code leave} on stdin closes the pools and leaves
 * ({@code LEFT}, with how many of its heartbeats came later than the TTL).
 */
public final class FleetFullWorker {

  static final int POOLS = 2;
  private static final Duration ROOM_WITHIN = Duration.ofSeconds(60);

  private FleetFullWorker() {}

  public static void main(String[] args) throws Exception {
    FleetBudget fleet =
        FleetBudget.builder(args[1])
            .capacity(Integer.parseInt(args[6]))
            .minimumShare(POOLS)
            .ttl(Duration.ofMillis(Long.parseLong(args[2])))
            .join(args[0]);
    CountDownLatch room = new CountDownLatch(1);
    FleetBudget.Listener waiting =
        (budget, before, share) -> {
          if (share >= POOLS) {
            room.countDown();
          }
        };
    fleet.addListener(waiting);
    long began = System.nanoTime();
    int share = fleet.awaitShare(POOLS, ROOM_WITHIN);
    if (share < POOLS) {
      System.out.println(
          "PARKED after "
              + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began)
              + " ms: "
              + fleet);
      System.out.flush();
      if (!room.await(ROOM_WITHIN.toSeconds(), TimeUnit.SECONDS)) {
        System.out.println("NO ROOM " + fleet);
        System.exit(2);
      }
    }
    fleet.removeListener(waiting);
    DatabasePools.Builder builder =
        DatabasePools.builder(args[5])
            .jdbcUrl(args[3])
            .pool(PoolConfig.builder("checkout").limit(6).build())
            .pool(PoolConfig.builder("reports").limit(4).build())
            .total(fleet::share);
    if (!args[4].equals("-")) {
      builder.username(args[4]);
    }
    DatabasePools db = builder.open();
    ReentrantLock bursts = new ReentrantLock();
    fleet.addListener(
        (budget, before, now) -> {
          try {
            FleetPoolsWorker.resizeAndUseEveryConnection(db, bursts);
            System.out.println("SHARE " + now);
          } catch (RuntimeException e) {
            System.out.println("RESIZE FAILED to " + now + ": " + e.getMessage());
            throw e;
          }
        });
    FleetPoolsWorker.resizeAndUseEveryConnection(db, bursts);
    System.out.println("OPEN " + fleet.share());
    System.out.flush();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.equals("leave")) {
        break;
      }
    }
    db.close();
    fleet.close();
    System.out.println("LEFT late heartbeats: " + fleet.lateHeartbeats());
  }
}
