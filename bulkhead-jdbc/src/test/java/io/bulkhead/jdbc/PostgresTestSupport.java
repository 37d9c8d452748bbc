package io.bulkhead.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.localdb.LocalPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * Tests against a real PostgreSQL: the server on 127.0.0.1:5432 (database test) when it answers,
 * otherwise an embedded one started once for the whole test run. Nothing is ever skipped: if
 * neither can be had, every test fails with the reason (and so does CI).
 *
 * <p>Every test gets its own name prefix; the pools it opens through {@link #open} name their
 * connections {@code prefix.pool} in {@code application_name}. After each test: no pool has a
 * connection handed out or a caller queued, the compartments hold no slot, the server has no busy
 * backend with the prefix, and once the pools are closed no backend with the prefix is left.
 */
public abstract class PostgresTestSupport {

  /**
   * How long the server may take to notice closed connections; generous, for a loaded 2-core box.
   */
  public static final Duration SERVER_SETTLES = Duration.ofSeconds(20);

  private static final ReentrantLock DB_LOCK = new ReentrantLock();
  private static LocalPostgres db; // guarded by DB_LOCK

  public static LocalPostgres db() throws SQLException {
    DB_LOCK.lock();
    try {
      if (db == null) {
        db = LocalPostgres.findOrStart(); // an embedded one stops with its own shutdown hook
      }
      return db;
    } finally {
      DB_LOCK.unlock();
    }
  }

  protected String prefix;
  private final List<DatabasePools> opened = new ArrayList<>();

  @BeforeEach
  void namePrefix(TestInfo info) {
    String method = info.getTestMethod().map(m -> m.getName()).orElse("test");
    String shortName = method.replaceAll("[^A-Za-z0-9]", "").toLowerCase(Locale.ROOT);
    if (shortName.length() > 24) {
      shortName = shortName.substring(0, 24);
    }
    prefix =
        "bht-"
            + shortName
            + "-"
            + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
  }

  /** A builder for pools named after this test, pointing at the test server. */
  DatabasePools.Builder pools() throws SQLException {
    DatabasePools.Builder b = DatabasePools.builder(prefix).jdbcUrl(db().jdbcUrl());
    db().username().ifPresent(b::username);
    return b;
  }

  /** Opens {@code builder} and remembers the pools for the leak checks after the test. */
  DatabasePools open(DatabasePools.Builder builder) throws SQLException {
    DatabasePools pools = builder.open();
    opened.add(pools);
    return pools;
  }

  @AfterEach
  void noLeaks() throws SQLException {
    try {
      for (DatabasePools pools : opened) {
        for (WorkloadPool pool : pools.pools()) {
          PoolStats st = pool.stats();
          assertThat(st.active()).as("connections still handed out by %s", st).isZero();
          assertThat(st.queued()).as("callers still queued in %s", st).isZero();
          assertThat(st.bulkhead().inFlight()).as("slots still held in %s", st).isZero();
          assertThat(st.bulkhead().admitted())
              .as("admitted vs completed in %s", st)
              .isEqualTo(st.bulkhead().completed());
        }
      }
      await("no busy backend named " + prefix + "*")
          .atMost(SERVER_SETTLES)
          .until(() -> busyBackends(prefix), n -> n == 0);
    } finally {
      for (DatabasePools pools : opened) {
        pools.close();
      }
    }
    await("no backend named " + prefix + "* after close")
        .atMost(SERVER_SETTLES)
        .until(() -> backends(prefix), n -> n == 0);
  }

  /** Backends whose application_name starts with {@code namePrefix}. */
  public static int backends(String namePrefix) throws SQLException {
    return count(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE ?", namePrefix + "%");
  }

  /** Such backends that are running something (not idle). */
  static int busyBackends(String namePrefix) throws SQLException {
    return count(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE ?"
            + " AND state IS DISTINCT FROM 'idle'",
        namePrefix + "%");
  }

  /** Backends with exactly this application_name. */
  static int backendsNamed(String applicationName) throws SQLException {
    return count(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", applicationName);
  }

  /** Backends named {@code applicationName} that are running {@code pg_sleep}. */
  static int sleepingBackends(String applicationName) throws SQLException {
    return count(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?"
            + " AND state = 'active' AND query LIKE '%pg_sleep%'",
        applicationName);
  }

  private static int count(String sql, String arg) throws SQLException {
    try (Connection c = db().connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, arg);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** The value of a server setting, as the server reports it. */
  static int setting(String name) throws SQLException {
    try (Connection c = db().connect();
        PreparedStatement ps = c.prepareStatement("SELECT current_setting(?, true)")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        String v = rs.getString(1);
        return v == null ? 0 : Integer.parseInt(v);
      }
    }
  }

  /** Runs {@code SELECT 1} on {@code c} and returns the result, to prove the connection works. */
  static int selectOne(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT 1");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
