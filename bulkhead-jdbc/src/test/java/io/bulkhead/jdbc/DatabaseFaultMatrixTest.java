package io.bulkhead.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadListener;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Compartment;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Faults at the database edge, each against the real PostgreSQL: a backend terminated, a query
 * timed out, and, through a {@link TcpProxy}, the database unreachable, blackholed, or restarted as
 * the client sees it (every connection dropped, new ones accepted). For each: what the caller gets
 * (a typed {@link SQLException}) and how soon, the {@code reports} pool's slot and connection given
 * back exactly once with every count back to zero, and another workload ({@code login}, a pool of
 * its own straight to the server; for the faults of one backend also {@code checkout}, a sibling
 * pool of the same budget) answering while the fault is in progress. The README's "Faults at every
 * edge" table lists these test names. The leak checks of {@link PostgresTestSupport} run after each
 * case too.
 */
class DatabaseFaultMatrixTest extends PostgresTestSupport {

  private static final int SIZE = 2;

  /** HikariCP's wait for a connection it must open: what an unreachable database costs a caller. */
  private static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(1);

  /** pgjdbc's read timeout on the proxied pools, in its unit (seconds): what a blackhole costs. */
  private static final int SOCKET_TIMEOUT_SECONDS = 1;

  /** How long HikariCP may take to check an idle connection it is about to hand out. */
  private static final Duration VALIDATION_TIMEOUT = Duration.ofMillis(500);

  /** The query timeout, in seconds (JDBC's unit). */
  private static final int QUERY_TIMEOUT_SECONDS = 1;

  /** What a loaded machine may add to a configured timeout; only a bug exceeds it. */
  private static final Duration SLACK = Duration.ofSeconds(3);

  /** Enough borrows to go through every dead pooled connection and reach a fresh attempt. */
  private static final int ATTEMPTS = 2 * SIZE + 2;

  private static final Duration AWAIT = Duration.ofSeconds(20);
  private static final Pattern URL =
      Pattern.compile("jdbc:postgresql://([^:/?]+)(?::(\\d+))?(/.*)");

  private final ExecutorService callers = Executors.newCachedThreadPool();
  private final AtomicInteger releases = new AtomicInteger();
  private WorkloadPool login;

  @BeforeEach
  void anotherWorkload() throws SQLException {
    login = open(pools().pool(PoolConfig.builder("login").limit(SIZE).build())).pool("login");
  }

  @AfterEach
  void stopCallers() {
    callers.shutdownNow();
  }

  @Test
  void backendTerminated_sqlException() throws Exception {
    DatabasePools pools =
        open(pools().pool(reportsPool()).pool(PoolConfig.builder("checkout").limit(SIZE).build()));
    WorkloadPool reports = countReleases(pools.pool("reports"));
    Future<SQLException> caller =
        callers.submit(() -> failureOf(reports, "SELECT pg_sleep(60)", 0));
    await().atMost(AWAIT).until(() -> sleepingBackends(reports.qualifiedName()) == 1);
    otherWorkloadsAnswer(pools.pool("checkout"));

    long started = System.nanoTime();
    assertThat(terminateSleeping(reports.qualifiedName())).isEqualTo(1);
    SQLException failure = caller.get(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    long tookMillis = report("backendTerminated", started, failure);

    assertThat((Throwable) failure).isNotNull();
    assertThat(failure.getSQLState()).as("%s", failure).isEqualTo("57P01"); // admin_shutdown
    assertThat(tookMillis).isLessThanOrEqualTo(SLACK.toMillis());
    slotAndConnectionFreedOnce(reports, 1);
    // HikariCP evicted the dead connection and the pool works again, without a new slot leaking.
    try (Connection c = reports.getConnection()) {
      assertThat(selectOne(c)).isEqualTo(1);
    }
    slotAndConnectionFreedOnce(reports, 2);
    await().atMost(AWAIT).until(() -> backendsNamed(reports.qualifiedName()) <= SIZE);
  }

  @Test
  void queryTimesOut_sqlException() throws Exception {
    DatabasePools pools =
        open(pools().pool(reportsPool()).pool(PoolConfig.builder("checkout").limit(SIZE).build()));
    WorkloadPool reports = countReleases(pools.pool("reports"));
    long started = System.nanoTime();
    Future<SQLException> caller =
        callers.submit(() -> failureOf(reports, "SELECT pg_sleep(60)", QUERY_TIMEOUT_SECONDS));
    await()
        .atMost(AWAIT)
        .until(() -> sleepingBackends(reports.qualifiedName()) == 1 || caller.isDone());
    otherWorkloadsAnswer(pools.pool("checkout"));

    SQLException failure = caller.get(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    long tookMillis = report("queryTimesOut", started, failure);

    assertThat((Throwable) failure).isNotNull();
    assertThat(failure.getSQLState()).as("%s", failure).isEqualTo("57014"); // query_canceled
    assertThat(tookMillis)
        .isLessThanOrEqualTo(Duration.ofSeconds(QUERY_TIMEOUT_SECONDS).plus(SLACK).toMillis());
    slotAndConnectionFreedOnce(reports, 1);
    // The connection survived the cancel: back in the pool, idle, and it answers.
    await().atMost(AWAIT).until(() -> busyBackends(reports.qualifiedName()) == 0);
    try (Connection c = reports.getConnection()) {
      assertThat(selectOne(c)).isEqualTo(1);
    }
  }

  @Test
  void databaseUnreachable_sqlTransientConnectionException() throws Exception {
    try (TcpProxy proxy = proxy()) {
      WorkloadPool reports = countReleases(open(throughProxy(proxy)).pool("reports"));
      proxy.cut();
      otherWorkloadsAnswer(null);
      SQLTransientConnectionException gaveUp = borrowUntilTimeout(reports, "databaseUnreachable");
      assertThat(gaveUp.getMessage()).contains(reports.qualifiedName());
      slotAndConnectionFreedOnce(reports, (int) reports.stats().bulkhead().admitted());
    }
  }

  @Test
  void databaseBlackholed_sqlException() throws Exception {
    try (TcpProxy proxy = proxy()) {
      WorkloadPool reports = countReleases(open(throughProxy(proxy)).pool("reports"));
      proxy.blackhole();
      // A caller stuck in the blackhole holds its slot; /login goes on meanwhile.
      long stuckSince = System.nanoTime();
      Future<SQLException> stuck = callers.submit(() -> failureOf(reports, "SELECT 1", 0));
      await()
          .atMost(AWAIT)
          .until(() -> reports.stats().bulkhead().inFlight() == 1 || stuck.isDone());
      otherWorkloadsAnswer(null);
      SQLException stuckFailure = stuck.get(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
      assertThat((Throwable) stuckFailure).isNotNull();
      assertThat(
              report("databaseBlackholed, the caller in the blackhole", stuckSince, stuckFailure))
          .isLessThanOrEqualTo(bound().toMillis());
      SQLTransientConnectionException gaveUp = borrowUntilTimeout(reports, "databaseBlackholed");
      assertThat(gaveUp.getMessage()).contains(reports.qualifiedName());
      slotAndConnectionFreedOnce(reports, (int) reports.stats().bulkhead().admitted());
    }
  }

  @Test
  void databaseRestarts_sqlExceptionThenRecovers() throws Exception {
    try (TcpProxy proxy = proxy()) {
      WorkloadPool reports = countReleases(open(throughProxy(proxy)).pool("reports"));
      proxy.dropAll();
      otherWorkloadsAnswer(null);
      // The pooled connections are dead; HikariCP finds them so on borrow, or the query fails on
      // them. Either way every attempt ends in a typed error or an answer, and the pool comes back.
      boolean recovered = false;
      for (int i = 0; i < ATTEMPTS && !recovered; i++) {
        long started = System.nanoTime();
        SQLException dead = failureOf(reports, "SELECT 1", 0); // a connection the restart killed
        recovered = dead == null;
        assertThat(report("databaseRestarts attempt " + i, started, dead))
            .isLessThanOrEqualTo(bound().toMillis());
        assertThat(reports.stats().bulkhead().inFlight()).isZero();
      }
      assertThat(recovered).as("the pool answered again after the restart").isTrue();
      slotAndConnectionFreedOnce(reports, (int) reports.stats().bulkhead().admitted());
      await().atMost(AWAIT).until(() -> backendsNamed(reports.qualifiedName()) <= SIZE);
    }
  }

  // --- the steps the cases share ---

  private static PoolConfig reportsPool() {
    return PoolConfig.builder("reports").limit(SIZE).connectionTimeout(CONNECTION_TIMEOUT).build();
  }

  private TcpProxy proxy() throws Exception {
    Matcher m = URL.matcher(db().jdbcUrl());
    assertThat(m.matches()).as("parse %s", db().jdbcUrl()).isTrue();
    return new TcpProxy(m.group(1), m.group(2) == null ? 5432 : Integer.parseInt(m.group(2)));
  }

  private DatabasePools.Builder throughProxy(TcpProxy proxy) throws Exception {
    Matcher m = URL.matcher(db().jdbcUrl());
    assertThat(m.matches()).isTrue();
    DatabasePools.Builder b =
        DatabasePools.builder(prefix)
            .jdbcUrl("jdbc:postgresql://127.0.0.1:" + proxy.port() + m.group(3))
            .property("socketTimeout", Integer.toString(SOCKET_TIMEOUT_SECONDS))
            .hikari(c -> c.setValidationTimeout(VALIDATION_TIMEOUT.toMillis()))
            .pool(reportsPool());
    db().username().ifPresent(b::username);
    return b;
  }

  /** The longest one borrow-and-query may take when the network fails under it. */
  private static Duration bound() {
    return CONNECTION_TIMEOUT.plus(Duration.ofSeconds(SOCKET_TIMEOUT_SECONDS)).plus(SLACK);
  }

  /**
   * Borrows until HikariCP gives up opening a connection: a dead pooled connection may be handed
   * out first (its query fails), or found dead and replaced by one that cannot be opened. Each
   * attempt is a typed SQLException within {@link #bound()}, and leaves no slot held.
   */
  private SQLTransientConnectionException borrowUntilTimeout(WorkloadPool pool, String fault) {
    for (int i = 0; i < ATTEMPTS; i++) {
      long started = System.nanoTime();
      SQLException failure = failureOf(pool, "SELECT 1", 0);
      assertThat(report(fault + " attempt " + i, started, failure))
          .isLessThanOrEqualTo(bound().toMillis());
      assertThat((Throwable) failure)
          .as("attempt %d got an answer with the database gone", i)
          .isNotNull();
      assertThat(pool.stats().bulkhead().inFlight()).isZero();
      if (failure instanceof SQLTransientConnectionException) {
        return (SQLTransientConnectionException) failure;
      }
    }
    throw new AssertionError(
        "HikariCP never gave up opening a connection in " + ATTEMPTS + " attempts");
  }

  /** Runs {@code sql} on a connection of {@code pool}: how it failed, or null if it answered. */
  private static SQLException failureOf(WorkloadPool pool, String sql, int queryTimeoutSeconds) {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      st.setQueryTimeout(queryTimeoutSeconds);
      try (ResultSet rs = st.executeQuery(sql)) {
        rs.next();
      }
      return null;
    } catch (SQLException e) {
      return e;
    }
  }

  private void otherWorkloadsAnswer(WorkloadPool sibling) throws SQLException {
    try (Connection c = login.getConnection()) {
      assertThat(selectOne(c)).as("login while the fault is in progress").isEqualTo(1);
    }
    if (sibling != null) {
      try (Connection c = sibling.getConnection()) {
        assertThat(selectOne(c))
            .as("%s while the fault is in progress", sibling.name())
            .isEqualTo(1);
      }
    }
  }

  private WorkloadPool countReleases(WorkloadPool pool) {
    pool.compartment()
        .addListener(
            new BulkheadListener() {
              @Override
              public void onReleased(Compartment compartment, long heldNanos) {
                releases.incrementAndGet();
              }
            });
    return pool;
  }

  /** Every admitted borrow gave its slot back once; no connection is handed out or waited for. */
  private void slotAndConnectionFreedOnce(WorkloadPool pool, int admitted) {
    PoolStats st = pool.stats();
    BulkheadStats slots = st.bulkhead();
    assertThat(slots.inFlight()).as("%s", st).isZero();
    assertThat(slots.admitted()).as("%s", st).isEqualTo(admitted);
    assertThat(slots.completed()).as("%s", st).isEqualTo(admitted);
    assertThat(releases).as("onReleased calls").hasValue(admitted);
    assertThat(st.active()).as("connections handed out by %s", st).isZero();
    assertThat(st.waiting()).as("callers waiting in HikariCP in %s", st).isZero();
  }

  private static int terminateSleeping(String applicationName) throws SQLException {
    try (Connection c = db().connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE application_name = ? AND state = 'active' AND query LIKE '%pg_sleep%'")) {
      ps.setString(1, applicationName);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static long report(String fault, long startedNanos, SQLException outcome) {
    long millis = (System.nanoTime() - startedNanos) / 1_000_000;
    String what =
        outcome == null
            ? "answered"
            : outcome.getClass().getSimpleName() + " (SQLState " + outcome.getSQLState() + ")";
    System.out.printf("database fault matrix %s: %s after %d ms%n", fault, what, millis);
    return millis;
  }
}
