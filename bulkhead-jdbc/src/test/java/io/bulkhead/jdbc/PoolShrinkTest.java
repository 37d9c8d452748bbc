package io.bulkhead.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

/**
 * A pool that shrinks gives up only its surplus: the connections that stay keep their server
 * backends (same PostgreSQL pids), and no connection is opened while the surplus leaves, so the
 * server never sees more than the old size, under load or not.
 */
class PoolShrinkTest extends PostgresTestSupport {

  private static final long PATIENCE_SECONDS = 60;

  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() throws InterruptedException {
    threads.shutdownNow();
    assertThat(threads.awaitTermination(PATIENCE_SECONDS, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void anIdlePoolThatShrinksBySixToFiveKeepsFiveOfItsBackends() throws Exception {
    WorkloadPool pool = onePool(6);
    Set<Integer> before = holdAllAtOnce(pool, 6);
    assertThat(before).hasSize(6);

    pool.compartment().setLimit(5);

    Set<Integer> after = holdAllAtOnce(pool, 5);
    System.out.println("shrink 6 -> 5: backends before " + before + ", after " + after);
    assertThat(before).as("the backends kept").containsAll(after);
    await("the surplus backend gone")
        .atMost(SERVER_SETTLES)
        .until(() -> backendPids(pool.qualifiedName()), pids -> pids.size() == 5);
    assertThat(before).containsAll(backendPids(pool.qualifiedName()));
    assertThat(pool.stats().total()).isEqualTo(5);
  }

  @Test
  void aShrinkUnderLoadOpensNoConnectionAndTheServerNeverSeesMoreThanTheOldSize() throws Exception {
    int callers = 12;
    int size = 10;
    int smaller = 8;
    WorkloadPool pool = onePool(size);
    String name = pool.qualifiedName();
    await("all " + size + " connections open")
        .atMost(SERVER_SETTLES)
        .until(() -> backendPids(name), pids -> pids.size() == size);
    Set<Integer> before = backendPids(name);

    AtomicBoolean shrunk = new AtomicBoolean();
    AtomicBoolean stop = new AtomicBoolean();
    Set<Integer> seenAfter = ConcurrentHashMap.newKeySet();
    AtomicInteger mostSeen = new AtomicInteger();
    CountDownLatch enoughAfter = new CountDownLatch(callers * 20);
    Future<?> sampler =
        threads.submit(
            () -> {
              while (!stop.get()) {
                mostSeen.accumulateAndGet(backendsNamed(name), Math::max);
              }
              return null;
            });
    List<Future<?>> load = new ArrayList<>();
    for (int i = 0; i < callers; i++) {
      load.add(
          threads.submit(
              () -> {
                while (!stop.get()) {
                  try (Connection c = pool.getConnection();
                      PreparedStatement ps = c.prepareStatement("SELECT pg_sleep(0.002)")) {
                    ps.execute();
                    if (shrunk.get()) {
                      seenAfter.add(c.unwrap(PGConnection.class).getBackendPID());
                      enoughAfter.countDown();
                    }
                  }
                }
                return null;
              }));
    }
    pool.compartment().setLimit(smaller);
    shrunk.set(true);
    assertThat(enoughAfter.await(PATIENCE_SECONDS, TimeUnit.SECONDS)).isTrue();
    stop.set(true);
    for (Future<?> f : load) {
      f.get(PATIENCE_SECONDS, TimeUnit.SECONDS);
    }
    sampler.get(PATIENCE_SECONDS, TimeUnit.SECONDS);

    System.out.println(
        "shrink 10 -> 8 under load: most backends seen "
            + mostSeen.get()
            + ", backends used after the shrink "
            + seenAfter.size()
            + ", new ones "
            + seenAfter.stream().filter(p -> !before.contains(p)).count());
    assertThat(before).as("backends used after the shrink: only old ones").containsAll(seenAfter);
    assertThat(mostSeen.get()).as("backends the server counted at once").isLessThanOrEqualTo(size);
    await("the surplus gone")
        .atMost(SERVER_SETTLES)
        .until(() -> backendPids(name), pids -> pids.size() == smaller);
    assertThat(before).containsAll(backendPids(name));
  }

  private WorkloadPool onePool(int size) throws SQLException {
    PoolConfig config =
        PoolConfig.builder("w").limit(size).maxQueue(64).maxWait(Duration.ofSeconds(30)).build();
    return open(pools().pool(config)).pool("w");
  }

  /** Takes {@code n} connections at once and returns their backends' pids. */
  private static Set<Integer> holdAllAtOnce(WorkloadPool pool, int n) throws SQLException {
    List<Connection> held = new ArrayList<>();
    try {
      Set<Integer> pids = new HashSet<>();
      for (int i = 0; i < n; i++) {
        Connection c = pool.getConnection();
        held.add(c);
        pids.add(c.unwrap(PGConnection.class).getBackendPID());
      }
      return pids;
    } finally {
      for (Connection c : held) {
        c.close();
      }
    }
  }

  /** The pids of the backends named {@code applicationName}. */
  private static Set<Integer> backendPids(String applicationName) throws SQLException {
    Set<Integer> pids = new HashSet<>();
    try (Connection c = db().connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT pid FROM pg_stat_activity WHERE application_name = ?")) {
      ps.setString(1, applicationName);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          pids.add(rs.getInt(1));
        }
      }
    }
    return pids;
  }
}
