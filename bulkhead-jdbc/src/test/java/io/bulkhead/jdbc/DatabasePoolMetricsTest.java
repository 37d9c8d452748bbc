package io.bulkhead.jdbc;

import static io.bulkhead.jdbc.micrometer.DatabasePoolMetrics.CONNECTIONS_ACTIVE;
import static io.bulkhead.jdbc.micrometer.DatabasePoolMetrics.CONNECTIONS_IDLE;
import static io.bulkhead.jdbc.micrometer.DatabasePoolMetrics.CONNECTIONS_OPEN;
import static io.bulkhead.jdbc.micrometer.DatabasePoolMetrics.THREADS_AWAITING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.jdbc.micrometer.DatabasePoolMetrics;
import io.bulkhead.micrometer.BulkheadMetrics;
import io.bulkhead.testing.Closer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The pools' gauges, read against {@link PoolStats} at every step of a scripted load on a real
 * PostgreSQL, next to the compartments' own meters (which come from {@code bulkhead-micrometer}
 * through the registry the pools join), and as Prometheus text. The leak checks of {@link
 * PostgresTestSupport} run after each test.
 */
class DatabasePoolMetricsTest extends PostgresTestSupport {

  private static final Pattern URL =
      Pattern.compile("jdbc:postgresql://([^:/?]+)(?::(\\d+))?(/.*)");

  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final BulkheadRegistry registry = BulkheadRegistry.create();
  @RegisterExtension final Closer closer = new Closer();

  @AfterEach
  void stop() throws Exception {
    threads.shutdownNow();
    assertThat(threads.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
  }

  private DatabasePools checkoutAndReports() throws SQLException {
    return open(
        pools()
            .registry(registry)
            .pool(
                PoolConfig.builder("checkout")
                    .limit(3)
                    .maxQueue(1)
                    .maxWait(Duration.ofSeconds(30))
                    .build())
            .pool(PoolConfig.builder("reports").limit(2).build()));
  }

  private static double gauge(MeterRegistry meters, String name, String pool) {
    return meters.get(name).tag("name", pool).gauge().value();
  }

  /**
   * Each gauge of {@code pool} equals the pool's own stats read right after, and the expected
   * figure: nothing moves between the two reads, because every step of the load is held.
   */
  private static void assertGauges(
      MeterRegistry meters, WorkloadPool pool, int active, int idle, int open, int awaiting) {
    String q = pool.qualifiedName();
    double[] read = {
      gauge(meters, CONNECTIONS_ACTIVE, q),
      gauge(meters, CONNECTIONS_IDLE, q),
      gauge(meters, CONNECTIONS_OPEN, q),
      gauge(meters, THREADS_AWAITING, q)
    };
    PoolStats st = pool.stats();
    assertThat(read)
        .as("active, idle, open, awaiting of %s", st)
        .containsExactly(st.active(), st.idle(), st.total(), st.waiting())
        .containsExactly(active, idle, open, awaiting);
  }

  private static double compartment(MeterRegistry meters, String name, String pool) {
    var search = meters.get(name).tag("name", pool);
    return name.equals(BulkheadMetrics.REJECTED) || name.equals(BulkheadMetrics.ADMITTED)
        ? search.functionCounters().stream().mapToDouble(c -> c.count()).sum()
        : search.gauge().value();
  }

  @Test
  void gaugesFollowPoolStats_throughAScriptedLoad_besideTheCompartmentsMeters() throws Exception {
    DatabasePools db = checkoutAndReports();
    WorkloadPool checkout = db.pool("checkout");
    WorkloadPool reports = db.pool("reports");
    MeterRegistry meters = new SimpleMeterRegistry();
    BulkheadMetrics compartments = BulkheadMetrics.of(registry);
    closer.closeLater(compartments);
    compartments.bindTo(meters);
    DatabasePoolMetrics poolMetrics = DatabasePoolMetrics.of(db);
    closer.closeLater(poolMetrics);
    poolMetrics.bindTo(meters);
    String c = checkout.qualifiedName();
    String r = reports.qualifiedName();

    // Idle: every connection open (the pools are fixed and opened in full).
    assertGauges(meters, checkout, 0, 3, 3, 0);
    assertGauges(meters, reports, 0, 2, 2, 0);
    assertThat(compartment(meters, BulkheadMetrics.LIMIT, c)).isEqualTo(3);
    assertThat(compartment(meters, BulkheadMetrics.LIMIT, r)).isEqualTo(2);

    Connection c1 = checkout.getConnection();
    Connection c2 = checkout.getConnection();
    assertGauges(meters, checkout, 2, 1, 3, 0);
    assertThat(compartment(meters, BulkheadMetrics.IN_FLIGHT, c)).isEqualTo(2);

    // Full, one caller queued in the compartment (not inside HikariCP), one more turned away.
    Connection c3 = checkout.getConnection();
    Future<Integer> queued =
        threads.submit(
            () -> {
              try (Connection conn = checkout.getConnection()) {
                return selectOne(conn);
              }
            });
    await().atMost(Duration.ofSeconds(10)).until(() -> checkout.stats().queued() == 1);
    assertThatThrownBy(checkout::getConnection)
        .isInstanceOfSatisfying(
            BulkheadFullException.class,
            e -> assertThat(e.reason()).isEqualTo(BulkheadFullException.Reason.QUEUE_FULL));
    assertGauges(meters, checkout, 3, 0, 3, 0);
    assertThat(compartment(meters, BulkheadMetrics.WAITING, c))
        .isEqualTo(checkout.stats().queued())
        .isEqualTo(1);
    assertThat(
            meters
                .get(BulkheadMetrics.REJECTED)
                .tag("name", c)
                .tag("reason", "queue_full")
                .functionCounter()
                .count())
        .isEqualTo(checkout.stats().rejected())
        .isEqualTo(1);

    // Reports: both connections held, the third rejected at once (no queue).
    Connection r1 = reports.getConnection();
    Connection r2 = reports.getConnection();
    assertThatThrownBy(reports::getConnection).isInstanceOf(BulkheadFullException.class);
    assertGauges(meters, reports, 2, 0, 2, 0);
    assertThat(compartment(meters, BulkheadMetrics.REJECTED, r)).isEqualTo(1);
    assertGauges(meters, checkout, 3, 0, 3, 0); // one pool's load shows in its own gauges only

    // Release: the queued caller gets its connection, runs and gives it back.
    c1.close();
    assertThat(queued.get(30, TimeUnit.SECONDS)).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> checkout.stats().active() == 2);
    assertGauges(meters, checkout, 2, 1, 3, 0);
    c2.close();
    c3.close();
    r1.close();
    r2.close();
    assertGauges(meters, checkout, 0, 3, 3, 0);
    assertGauges(meters, reports, 0, 2, 2, 0);
    assertThat(compartment(meters, BulkheadMetrics.ADMITTED, c)).isEqualTo(4);
    assertThat(meters.get(BulkheadMetrics.CALL_DURATION).tag("name", c).timer().count())
        .as("every connection held is timed")
        .isEqualTo(4);
  }

  /**
   * The database goes away under the pool: an admitted caller then waits inside HikariCP for a
   * connection it cannot open, HikariCP's {@code waitingCount}, and the gauge shows it.
   */
  @Test
  void threadsAwaitingAConnectionInsideThePool_areCounted() throws Exception {
    Matcher m = URL.matcher(db().jdbcUrl());
    assertThat(m.matches()).as("parse %s", db().jdbcUrl()).isTrue();
    int port = m.group(2) == null ? 5432 : Integer.parseInt(m.group(2));
    try (TcpProxy proxy = new TcpProxy(m.group(1), port)) {
      DatabasePools.Builder b =
          DatabasePools.builder(prefix)
              .jdbcUrl("jdbc:postgresql://127.0.0.1:" + proxy.port() + m.group(3))
              .pool(
                  PoolConfig.builder("w")
                      .limit(2)
                      .connectionTimeout(Duration.ofSeconds(5))
                      .build());
      db().username().ifPresent(b::username);
      DatabasePools db = open(b);
      WorkloadPool pool = db.pool("w");
      MeterRegistry meters = new SimpleMeterRegistry();
      DatabasePoolMetrics metrics = DatabasePoolMetrics.of(db);
      closer.closeLater(metrics);
      metrics.bindTo(meters);
      assertGauges(meters, pool, 0, 2, 2, 0);

      proxy.cut();
      // Use up the two dead connections: borrowing one either hands it out (its query fails and
      // closing it evicts it) or HikariCP finds it dead and gives up opening another.
      boolean timedOut = false;
      for (int i = 0; i < 5 && !timedOut; i++) {
        try (Connection conn = pool.getConnection()) {
          assertThatThrownBy(() -> selectOne(conn)).isInstanceOf(SQLException.class);
        } catch (SQLTransientConnectionException e) {
          timedOut = true;
        }
      }
      assertThat(timedOut).as("HikariCP gave up opening a connection").isTrue();

      Future<Throwable> caller =
          threads.submit(
              () -> {
                try (Connection conn = pool.getConnection()) {
                  return new AssertionError(
                      "handed out a connection with the database gone: " + conn);
                } catch (SQLException e) {
                  return e;
                }
              });
      await("a caller waiting inside HikariCP")
          .atMost(Duration.ofSeconds(10))
          .until(() -> pool.stats().waiting() == 1);
      // The caller waits up to the 5 s connectionTimeout: this read is well inside it.
      assertThat(gauge(meters, THREADS_AWAITING, pool.qualifiedName()))
          .isEqualTo(pool.stats().waiting())
          .isEqualTo(1);
      assertThat(gauge(meters, CONNECTIONS_ACTIVE, pool.qualifiedName())).isZero();
      assertThat(caller.get(30, TimeUnit.SECONDS))
          .isInstanceOf(SQLTransientConnectionException.class);
      assertThat(gauge(meters, THREADS_AWAITING, pool.qualifiedName()))
          .isEqualTo(pool.stats().waiting())
          .isZero();
    }
  }

  @Test
  void prometheusText_namesEveryGaugeWithThePoolsName_andCloseRemovesThem() throws Exception {
    DatabasePools db = checkoutAndReports();
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    closer.closeLater(prometheus::close);
    BulkheadMetrics compartments = BulkheadMetrics.of(registry);
    closer.closeLater(compartments);
    compartments.bindTo(prometheus);
    DatabasePoolMetrics metrics = DatabasePoolMetrics.of(db);
    metrics.bindTo(prometheus);
    String c = prefix + ".checkout";
    String r = prefix + ".reports";
    String b = "budget=\"" + prefix + "\",";
    int capacity = db.budget().capacity();
    int max = db.serverLimit().orElseThrow().maxConnections();

    try (Connection held = db.pool("checkout").getConnection()) {
      assertThat(selectOne(held)).isEqualTo(1);
      String text = prometheus.scrape();
      assertThat(text)
          .contains(
              "# TYPE bulkhead_pool_connections_active gauge",
              "bulkhead_pool_connections_active{" + b + "name=\"" + c + "\"} 1.0",
              "bulkhead_pool_connections_idle{" + b + "name=\"" + c + "\"} 2.0",
              "bulkhead_pool_connections_open{" + b + "name=\"" + c + "\"} 3.0",
              "bulkhead_pool_threads_awaiting{" + b + "name=\"" + c + "\"} 0.0",
              "bulkhead_pool_connections_active{" + b + "name=\"" + r + "\"} 0.0",
              "bulkhead_pool_connections_open{" + b + "name=\"" + r + "\"} 2.0",
              // the database's budget against the server, for sums over every replica
              "bulkhead_budget_capacity{budget=\"" + prefix + "\"} " + capacity + ".0",
              "bulkhead_budget_allocated{budget=\"" + prefix + "\"} 5.0",
              "bulkhead_database_max_connections{budget=\"" + prefix + "\"} " + max + ".0",
              // the compartment in front of each pool, under the same name
              "bulkhead_limit{name=\"" + c + "\"} 3.0",
              "bulkhead_in_flight{name=\"" + c + "\"} 1.0",
              "bulkhead_rejected_total{name=\"" + r + "\",reason=\"queue_full\"} 0.0");
    }

    metrics.close();
    metrics.close(); // idempotent
    assertThat(prometheus.scrape())
        .doesNotContain("bulkhead_pool_", "bulkhead_budget_", "bulkhead_database_")
        .contains("bulkhead_limit{name=\"" + c + "\"} 3.0");
    assertThatThrownBy(() -> metrics.bindTo(prometheus))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");

    db.close(); // the compartments leave the registry, and their meters the scrape
    assertThat(prometheus.scrape()).doesNotContain("name=\"" + prefix);
  }
}
