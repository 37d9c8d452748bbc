package io.bulkhead.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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
import org.junit.jupiter.api.Test;

/**
 * The database vanishes under open pools (through a {@link TcpProxy} that is cut). Admitted callers
 * then wait inside HikariCP for a connection it cannot open, which the stats show as waiting, and
 * fail after the pool's connectionTimeout with HikariCP's message; every slot comes back.
 */
class DatabaseGoesAwayTest extends PostgresTestSupport {

  private static final Pattern URL =
      Pattern.compile("jdbc:postgresql://([^:/?]+)(?::(\\d+))?(/.*)");

  @Test
  void callersFailAfterTheConnectionTimeoutAndEverySlotComesBack() throws Exception {
    Matcher m = URL.matcher(db().jdbcUrl());
    assertThat(m.matches()).as("parse %s", db().jdbcUrl()).isTrue();
    int port = m.group(2) == null ? 5432 : Integer.parseInt(m.group(2));
    ExecutorService threads = Executors.newCachedThreadPool();
    try (TcpProxy proxy = new TcpProxy(m.group(1), port)) {
      DatabasePools.Builder b =
          DatabasePools.builder(prefix)
              .jdbcUrl("jdbc:postgresql://127.0.0.1:" + proxy.port() + m.group(3))
              .pool(
                  PoolConfig.builder("w")
                      .limit(2)
                      .connectionTimeout(Duration.ofSeconds(3))
                      .build());
      db().username().ifPresent(b::username);
      WorkloadPool pool = open(b).pool("w");
      try (Connection c = pool.getConnection()) {
        assertThat(selectOne(c)).isEqualTo(1);
      }

      proxy.cut();

      // The two pooled connections are dead. Borrowing one either hands it out (its query fails and
      // closing it evicts it) or HikariCP finds it dead and tries to open another, which times out.
      SQLTransientConnectionException timedOut = null;
      for (int i = 0; i < 5 && timedOut == null; i++) {
        try (Connection c = pool.getConnection()) {
          assertThatThrownBy(() -> selectOne(c)).isInstanceOf(SQLException.class);
        } catch (SQLTransientConnectionException e) {
          timedOut = e;
        }
        assertThat(pool.stats().bulkhead().inFlight()).isZero();
      }
      assertThat((Throwable) timedOut).as("HikariCP gave up opening a connection").isNotNull();
      assertThat(timedOut.getMessage()).contains(prefix + ".w").contains("timed out");

      Future<Throwable> caller =
          threads.submit(
              () -> {
                try (Connection c = pool.getConnection()) {
                  return new AssertionError("handed out a connection with the database gone: " + c);
                } catch (SQLException e) {
                  return e;
                }
              });
      await("a caller waiting inside HikariCP")
          .atMost(Duration.ofSeconds(10))
          .until(() -> pool.stats().waiting() == 1 && pool.stats().bulkhead().inFlight() == 1);
      assertThat(caller.get(30, TimeUnit.SECONDS))
          .isInstanceOf(SQLTransientConnectionException.class);
      PoolStats st = pool.stats();
      assertThat(st.waiting()).isZero();
      assertThat(st.bulkhead().inFlight()).isZero();
      assertThat(st.active()).isZero();
    } finally {
      threads.shutdownNow();
    }
  }
}
