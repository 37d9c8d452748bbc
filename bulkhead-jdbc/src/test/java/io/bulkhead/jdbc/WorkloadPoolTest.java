package io.bulkhead.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadListener;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

/**
 * The compartment in front of a HikariCP pool, on a real PostgreSQL: admission, bounded waiting,
 * and the release-once path for every way a borrowed connection can end. The leak checks of {@link
 * PostgresTestSupport} run after each test.
 */
class WorkloadPoolTest extends PostgresTestSupport {

  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() throws InterruptedException {
    threads.shutdownNow();
    assertThat(threads.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
  }

  private WorkloadPool onePool(PoolConfig config) throws SQLException {
    return open(pools().pool(config)).pool(config.name());
  }

  @Test
  void fullPoolRejectsAtOnceInsteadOfJoiningHikarisWaitLine() throws Exception {
    // HikariCP alone would make the third caller wait its connectionTimeout of 30 s.
    WorkloadPool pool =
        onePool(PoolConfig.builder("w").limit(2).connectionTimeout(Duration.ofSeconds(30)).build());
    try (Connection a = pool.getConnection();
        Connection b = pool.getConnection()) {
      // At once: a QUEUE_FULL rejection is decided without waiting (one that joined HikariCP's line
      // would fail after its 30 s with HikariCP's own exception), and nobody waits inside HikariCP.
      assertThatThrownBy(pool::getConnection)
          .isInstanceOfSatisfying(
              BulkheadFullException.class,
              e -> {
                assertThat(e.reason()).isEqualTo(BulkheadFullException.Reason.QUEUE_FULL);
                assertThat(e.bulkheadName()).isEqualTo(prefix + ".w");
              });
      PoolStats st = pool.stats();
      assertThat(st.active()).isEqualTo(2);
      assertThat(st.idle()).isZero();
      assertThat(st.waiting()).as("nobody waits inside HikariCP").isZero();
      assertThat(st.rejected()).isEqualTo(1);
      assertThat(selectOne(a) + selectOne(b)).isEqualTo(2);
    }
    try (Connection c = pool.getConnection()) {
      assertThat(selectOne(c)).isEqualTo(1);
    }
    assertThat(pool.stats().idle()).isEqualTo(2);
  }

  @Test
  void aWaiterIsRejectedAfterMaxWait() throws Exception {
    Duration maxWait = Duration.ofMillis(300);
    WorkloadPool pool =
        onePool(PoolConfig.builder("w").limit(1).maxQueue(1).maxWait(maxWait).build());
    try (Connection held = pool.getConnection()) {
      long start = System.nanoTime();
      assertThatThrownBy(pool::getConnection)
          .isInstanceOfSatisfying(
              BulkheadFullException.class,
              e -> assertThat(e.reason()).isEqualTo(BulkheadFullException.Reason.WAIT_TIMEOUT));
      // Never early (a loaded machine can only make it later).
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(maxWait);
      PoolStats st = pool.stats();
      assertThat(st.bulkhead().rejected(BulkheadFullException.Reason.WAIT_TIMEOUT)).isEqualTo(1);
      assertThat(st.queued()).isZero();
      assertThat(st.waiting()).as("nobody waited inside HikariCP").isZero();
      assertThat(selectOne(held)).isEqualTo(1);
    }
  }

  @Test
  void closingAConnectionHandsItToTheWaiterAndAFullQueueRejectsAtOnce() throws Exception {
    WorkloadPool pool =
        onePool(
            PoolConfig.builder("w").limit(1).maxQueue(1).maxWait(Duration.ofSeconds(30)).build());
    Connection held = pool.getConnection();
    Future<Integer> waiter =
        threads.submit(
            () -> {
              try (Connection c = pool.getConnection()) {
                return selectOne(c);
              }
            });
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.stats().queued() == 1);
    // The queue is full: refused at once (QUEUE_FULL, not a wait), while the waiter still waits.
    assertThatThrownBy(pool::getConnection)
        .isInstanceOfSatisfying(
            BulkheadFullException.class,
            e -> assertThat(e.reason()).isEqualTo(BulkheadFullException.Reason.QUEUE_FULL));
    assertThat(pool.stats().bulkhead().rejected(BulkheadFullException.Reason.WAIT_TIMEOUT))
        .isZero();
    assertThat(waiter.isDone()).isFalse();
    held.close();
    assertThat(waiter.get(30, TimeUnit.SECONDS)).isEqualTo(1);
    assertThat(pool.stats().bulkhead().admitted()).isEqualTo(2);
  }

  @Test
  void closingTwiceOrThroughTheStatementReleasesTheSlotOnce() throws Exception {
    WorkloadPool pool = onePool(PoolConfig.builder("w").limit(1).build());
    Connection c = pool.getConnection();
    PreparedStatement ps = c.prepareStatement("SELECT 1");
    Statement st = c.createStatement();
    DatabaseMetaData md = c.getMetaData();
    assertThat(ps.getConnection()).isSameAs(c);
    assertThat(st.getConnection()).isSameAs(c);
    assertThat(md.getConnection()).isSameAs(c);

    ps.getConnection().close();
    assertThat(c.isClosed()).isTrue();
    assertThat(pool.stats().bulkhead().inFlight()).isZero();
    c.close();
    st.getConnection().close();
    assertThat(pool.stats().bulkhead().completed()).as("released once").isEqualTo(1);
    assertThat(pool.stats().active()).isZero();
    assertThatThrownBy(() -> selectOne(c)).isInstanceOf(SQLException.class);

    try (Connection again = pool.getConnection()) {
      assertThat(selectOne(again)).isEqualTo(1);
    }
  }

  @Test
  void concurrentClosesReturnTheConnectionOnce() throws Exception {
    WorkloadPool pool = onePool(PoolConfig.builder("w").limit(2).build());
    for (int round = 0; round < 20; round++) {
      Connection c = pool.getConnection();
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> closers = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        closers.add(
            threads.submit(
                () -> {
                  go.await();
                  c.close();
                  return null;
                }));
      }
      go.countDown();
      for (Future<?> f : closers) {
        f.get(30, TimeUnit.SECONDS);
      }
      assertThat(pool.stats().bulkhead().inFlight()).isZero();
    }
    assertThat(pool.stats().bulkhead().completed()).isEqualTo(20);
    PoolStats st = pool.stats();
    assertThat(st.active()).isZero();
    assertThat(st.total()).as("no connection returned twice or lost").isEqualTo(2);
  }

  @Test
  void aFailedQueryLeavesTheConnectionUsableAndReleasesTheSlot() throws Exception {
    WorkloadPool pool = onePool(PoolConfig.builder("w").limit(1).build());
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      assertThatThrownBy(() -> st.execute("SELECT 1/0"))
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("22012"));
    }
    assertThat(pool.stats().bulkhead().inFlight()).isZero();
    try (Connection c = pool.getConnection()) {
      assertThat(selectOne(c)).isEqualTo(1);
    }
  }

  @Test
  void aCancelledQueryReleasesTheSlotAndLeavesNoBusyBackend() throws Exception {
    WorkloadPool pool = onePool(PoolConfig.builder("w").limit(1).build());
    Connection c = pool.getConnection();
    PreparedStatement ps = c.prepareStatement("SELECT pg_sleep(60)");
    Future<String> query =
        threads.submit(
            () -> {
              try {
                ps.execute();
                return "completed";
              } catch (SQLException e) {
                return e.getSQLState();
              } finally {
                c.close();
              }
            });
    await().atMost(Duration.ofSeconds(10)).until(() -> sleepingBackends(prefix + ".w") == 1);
    ps.cancel();
    assertThat(query.get(30, TimeUnit.SECONDS)).isEqualTo("57014"); // query_canceled
    assertThat(pool.stats().bulkhead().inFlight()).isZero();
  }

  @Test
  void aCallerInterruptedWhileQueuedLeavesWithoutASlot() throws Exception {
    WorkloadPool pool =
        onePool(
            PoolConfig.builder("w").limit(1).maxQueue(1).maxWait(Duration.ofSeconds(60)).build());
    try (Connection held = pool.getConnection()) {
      CompletableFuture<BulkheadFullException.Reason> outcome = new CompletableFuture<>();
      Future<?> waiter =
          threads.submit(
              () -> {
                try (Connection c = pool.getConnection()) {
                  outcome.completeExceptionally(new AssertionError("admitted: " + c));
                } catch (BulkheadFullException e) {
                  outcome.complete(e.reason());
                } catch (Throwable t) {
                  outcome.completeExceptionally(t);
                }
              });
      await().atMost(Duration.ofSeconds(10)).until(() -> pool.stats().queued() == 1);
      waiter.cancel(true); // interrupts the waiting thread
      assertThat(outcome.get(30, TimeUnit.SECONDS))
          .isEqualTo(BulkheadFullException.Reason.INTERRUPTED);
      PoolStats st = pool.stats();
      assertThat(st.queued()).isZero();
      assertThat(st.bulkhead().inFlight()).isEqualTo(1);
      assertThat(selectOne(held)).isEqualTo(1);
    }
  }

  @Test
  void abortEvictsTheConnectionAndReleasesTheSlot() throws Exception {
    WorkloadPool pool = onePool(PoolConfig.builder("w").limit(2).build());
    Connection c = pool.getConnection();
    int pid = c.unwrap(PGConnection.class).getBackendPID();
    ExecutorService abortThread = Executors.newSingleThreadExecutor();
    try {
      c.abort(abortThread);
    } finally {
      abortThread.shutdown();
    }
    closeAgain(c); // after abort: nothing more to do
    assertThat(c.isClosed()).isTrue();
    assertThat(pool.stats().bulkhead().inFlight()).isZero();
    assertThat(pool.stats().bulkhead().completed()).isEqualTo(1);
    // HikariCP replaces the evicted connection; the aborted backend goes away.
    await().atMost(SERVER_SETTLES).until(() -> pool.stats().total() == 2 && !backendAlive(pid));
    try (Connection a = pool.getConnection();
        Connection b = pool.getConnection()) {
      assertThat(selectOne(a) + selectOne(b)).isEqualTo(2);
    }
  }

  private static void closeAgain(Connection c) throws SQLException {
    c.close();
  }

  private static boolean backendAlive(int pid) throws SQLException {
    try (Connection c = db().connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE pid = ?")) {
      ps.setInt(1, pid);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1) > 0;
      }
    }
  }

  @Test
  void aGetConnectionThatThrowsReleasesTheSlot() throws Exception {
    DatabasePools pools = open(pools().pool(PoolConfig.builder("w").limit(1).build()));
    WorkloadPool pool = pools.pool("w");
    pools.close();
    assertThatThrownBy(pool::getConnection)
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("closed");
    PoolStats st = pool.stats();
    assertThat(st.bulkhead().admitted()).isEqualTo(1);
    assertThat(st.bulkhead().inFlight()).isZero();
  }

  @Test
  void neverHandsOutTheHikariPoolBehindIt() throws Exception {
    WorkloadPool pool = onePool(PoolConfig.builder("w").limit(1).build());
    assertThat(pool.isWrapperFor(HikariDataSource.class)).isFalse();
    assertThatThrownBy(() -> pool.unwrap(HikariDataSource.class))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining(prefix + ".w");
    assertThat(pool.unwrap(WorkloadPool.class)).isSameAs(pool);
    assertThatThrownBy(() -> pool.getConnection("postgres", "x"))
        .isInstanceOf(java.sql.SQLFeatureNotSupportedException.class);
    try (Connection c = pool.getConnection()) {
      assertThat(c.unwrap(Connection.class)).isSameAs(c);
      assertThat(c.unwrap(PGConnection.class)).isNotNull();
      assertThat(c.toString()).contains(prefix + ".w");
      assertThat(c.isWrapperFor(Connection.class)).isTrue();
      assertThat(c.equals(c)).isTrue();
      assertThat(c.hashCode()).isEqualTo(System.identityHashCode(c));
      // A statement answers for itself the same way, and forwards the rest to the driver's.
      try (Statement st = c.createStatement()) {
        assertThat(st.unwrap(Statement.class)).isSameAs(st);
        assertThat(st.isWrapperFor(Statement.class)).isTrue();
        assertThat(st.unwrap(org.postgresql.PGStatement.class)).isNotNull();
        assertThat(st.equals(st)).isTrue();
        assertThat(st.equals(c)).isFalse();
        assertThat(st.hashCode()).isEqualTo(System.identityHashCode(st));
        assertThat(st.getConnection()).isSameAs(c);
      }
    }
  }

  @Test
  void resizingThroughTheRegistry_resizesHikariWithTheCompartment_withinTheBudget()
      throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    DatabasePools pools =
        open(
            pools()
                .capacity(4)
                .registry(registry)
                .pool(PoolConfig.builder("a").limit(2).build())
                .pool(PoolConfig.builder("b").limit(2).build()));
    WorkloadPool a = pools.pool("a");
    WorkloadPool b = pools.pool("b");
    assertThat(registry.find(prefix + ".a")).containsSame(a.compartment());
    assertThat(a.compartment())
        .as("connections come only from getConnection")
        .isNotInstanceOf(Bulkhead.class);
    assertSized(a, 2);

    // The budget refuses: neither the compartment nor HikariCP changes.
    assertThatThrownBy(() -> registry.find(prefix + ".a").orElseThrow().setLimit(3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("over-subscribed")
        .hasMessageContaining(prefix + ".b 2");
    assertSized(a, 2);
    assertThat(pools.budget().shares()).containsEntry(prefix + ".a", 2);

    // Shrinking while both connections are in use takes neither away; no one else is admitted.
    try (Connection x = a.getConnection();
        Connection y = a.getConnection()) {
      registry.find(prefix + ".a").orElseThrow().setLimit(1);
      assertSized(a, 1);
      assertThat(selectOne(x) + selectOne(y)).isEqualTo(2);
      assertThat(a.stats().active()).isEqualTo(2);
      assertThatThrownBy(a::getConnection).isInstanceOf(BulkheadFullException.class);
    }
    await()
        .atMost(SERVER_SETTLES)
        .until(() -> backendsNamed(prefix + ".a") == 1 && a.stats().total() == 1);
    try (Connection x = a.getConnection()) {
      assertThat(selectOne(x)).isEqualTo(1);
      assertThatThrownBy(a::getConnection).isInstanceOf(BulkheadFullException.class);
    }

    // Growing into the room a left: HikariCP opens the third connection for the third caller.
    registry.find(prefix + ".b").orElseThrow().setLimit(3);
    assertSized(b, 3);
    try (Connection x = b.getConnection();
        Connection y = b.getConnection();
        Connection z = b.getConnection()) {
      assertThat(selectOne(x) + selectOne(y) + selectOne(z)).isEqualTo(3);
      assertThat(backendsNamed(prefix + ".b")).isEqualTo(3);
      assertThatThrownBy(b::getConnection).isInstanceOf(BulkheadFullException.class);
    }
    assertThat(pools.budget().allocated()).isEqualTo(4);
    assertThatThrownBy(() -> b.compartment().setLimit(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("limit of pool '" + prefix + ".b' must be at least 1 but was 0");
    assertSized(b, 3);

    pools.close();
    assertThatThrownBy(() -> b.compartment().setLimit(1))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }

  /** The compartment admits {@code size} callers and HikariCP may open {@code size} connections. */
  private static void assertSized(WorkloadPool pool, int size) {
    assertThat(pool.compartment().config().limit()).as("compartment limit").isEqualTo(size);
    assertThat(pool.hikariSettings().getMaximumPoolSize())
        .as("HikariCP maximumPoolSize")
        .isEqualTo(size);
    assertThat(pool.hikariSettings().getMinimumIdle()).as("HikariCP minimumIdle").isEqualTo(size);
    assertThat(pool.stats().limit()).isEqualTo(size);
  }

  @Test
  void listenersAddedThroughTheView_seeTheViewInEveryEvent_andCanBeRemoved() throws Exception {
    WorkloadPool pool = onePool(PoolConfig.builder("w").limit(1).build());
    Compartment view = pool.compartment();
    List<String> seen = Collections.synchronizedList(new ArrayList<>());
    BulkheadListener listener =
        new BulkheadListener() {
          @Override
          public void onAdmitted(Compartment bulkhead, long waitedNanos) {
            seen.add("admitted " + (bulkhead == view));
          }

          @Override
          public void onRejected(Compartment bulkhead, BulkheadFullException.Reason reason) {
            seen.add("rejected " + (bulkhead == view));
          }

          @Override
          public void onReleased(Compartment bulkhead, long heldNanos) {
            seen.add("released " + (bulkhead == view));
          }
        };
    view.addListener(listener);
    try (Connection c = pool.getConnection()) {
      assertThatThrownBy(pool::getConnection).isInstanceOf(BulkheadFullException.class);
    }
    assertThat(seen).containsExactly("admitted true", "rejected true", "released true");
    assertThat(view.removeListener(listener)).isTrue();
    assertThat(view.removeListener(listener)).isFalse();
    try (Connection c = pool.getConnection()) {
      assertThat(selectOne(c)).isEqualTo(1);
    }
    assertThat(seen).hasSize(3);
  }

  @Test
  void manyCallersEndingEveryWayLeaveNothingBehind() throws Exception {
    WorkloadPool pool =
        onePool(
            PoolConfig.builder("w").limit(3).maxQueue(2).maxWait(Duration.ofMillis(200)).build());
    int callers = 8;
    int rounds = 40;
    AtomicInteger attempts = new AtomicInteger();
    AtomicInteger rejected = new AtomicInteger();
    ExecutorService abortExecutor = Executors.newSingleThreadExecutor();
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < callers; t++) {
      int caller = t;
      futures.add(
          threads.submit(
              () -> {
                for (int i = 0; i < rounds; i++) {
                  attempts.incrementAndGet();
                  Connection c;
                  try {
                    c = pool.getConnection();
                  } catch (BulkheadFullException e) {
                    rejected.incrementAndGet();
                    continue;
                  }
                  switch ((caller + i) % 5) {
                    case 0:
                      try (Connection held = c) {
                        selectOne(held);
                      }
                      break;
                    case 1:
                      try (Connection held = c;
                          Statement st = held.createStatement()) {
                        st.execute("SELECT 1/0");
                      } catch (SQLException expected) {
                        // a failing query
                      }
                      break;
                    case 2:
                      try (PreparedStatement ps = c.prepareStatement("SELECT pg_sleep(0.01)")) {
                        ps.execute();
                        ps.getConnection().close();
                      }
                      break;
                    case 3:
                      selectOne(c);
                      c.close();
                      c.close();
                      break;
                    default:
                      if (i % 10 == 4) {
                        c.abort(abortExecutor);
                      } else {
                        c.close();
                      }
                      break;
                  }
                }
                return null;
              }));
    }
    try {
      for (Future<?> f : futures) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      abortExecutor.shutdown();
    }
    PoolStats st = pool.stats();
    assertThat(st.bulkhead().inFlight()).isZero();
    assertThat(st.bulkhead().admitted() + rejected.get()).isEqualTo(attempts.get());
    assertThat(st.bulkhead().completed()).isEqualTo(st.bulkhead().admitted());
    assertThat(st.rejected()).isEqualTo(rejected.get());
    await()
        .atMost(SERVER_SETTLES)
        .until(() -> pool.stats().total() == 3 && backendsNamed(prefix + ".w") == 3);
  }
}
