package io.bulkhead.redis;

import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.PoolConfig;
import io.bulkhead.jdbc.WorkloadPool;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One instance of a service in {@link FleetPoolsTest}, in its own JVM: its database pools take
 * their total from a fleet budget of {@link #CAPACITY}, wired as the README shows.
 *
 * <pre>
 * REDIS_URI BUDGET TTL_MS JDBC_URL USERNAME|- DATABASE_NAME
 * </pre>
 *
 * Prints {@code OPEN share} once its pools are open and {@code SHARE share} after each resize; a
 * line {@code leave} on stdin closes the pools and leaves the fleet.
 */
public final class FleetPoolsWorker {

  static final int CAPACITY = 10;
  private static final Duration ROOM_WITHIN = Duration.ofSeconds(30);

  private FleetPoolsWorker() {}

  public static void main(String[] args) throws Exception {
    FleetBudget fleet =
        FleetBudget.builder(args[1])
            .capacity(CAPACITY)
            .ttl(Duration.ofMillis(Long.parseLong(args[2])))
            .join(args[0]);
    if (fleet.awaitShare(2, ROOM_WITHIN) < 2) { // two pools, one connection each at least
      System.out.println("NO ROOM " + fleet);
      System.exit(2);
    }
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
    // One burst at a time: a resize on the listener's thread that shrank a pool between a burst's
    // reading of its size and its taking of the connections made that burst's getConnection refused
    // (QUEUE_FULL) and the worker exit. The lock is this worker's, not the library's.
    ReentrantLock bursts = new ReentrantLock();
    fleet.addListener(
        (budget, before, share) -> {
          resizeAndUseEveryConnection(db, bursts);
          System.out.println("SHARE " + share);
        });
    resizeAndUseEveryConnection(db, bursts); // a change between open() and addListener
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
    System.out.println("LEFT");
  }

  static void resizeAndUseEveryConnection(DatabasePools db, ReentrantLock bursts) {
    bursts.lock();
    try {
      db.resize();
      useEveryConnection(db);
    } finally {
      bursts.unlock();
    }
  }

  /**
   * A burst that takes every connection of every pool at once, as a busy instance would: a pool
   * that grew opens its new connections on demand (or at HikariCP's next housekeeping), so this is
   * what makes the instance hold its whole share.
   */
  private static void useEveryConnection(DatabasePools db) {
    List<Connection> held = new ArrayList<>();
    try {
      for (WorkloadPool pool : db.pools()) {
        for (int i = 0; i < pool.stats().limit(); i++) {
          held.add(pool.getConnection());
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    } finally {
      for (Connection c : held) {
        try {
          c.close();
        } catch (SQLException e) {
          System.out.println("CLOSE FAILED " + e);
        }
      }
    }
  }
}
