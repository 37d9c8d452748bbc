package io.bulkhead.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.BulkheadFullException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * A database whose connection limit this library cannot read (H2, in memory): the budget must then
 * be given, and the pools work the same.
 */
class OtherDatabaseTest {

  private static final String URL = "jdbc:h2:mem:other-database-test;DB_CLOSE_DELAY=-1";

  @Test
  void withoutABudgetItFailsSayingWhy() {
    assertThatThrownBy(
            () ->
                DatabasePools.builder("h2")
                    .jdbcUrl(URL)
                    .pool(PoolConfig.builder("w").limit(1).build())
                    .open())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "database 'h2' is H2, whose connection limit this library cannot read (it"
                + " knows PostgreSQL): call capacity(int) with how many connections these pools may"
                + " hold together");
  }

  @Test
  void withABudgetThePoolsWorkAndNoServerLimitIsClaimed() throws Exception {
    try (DatabasePools db =
        DatabasePools.builder("h2")
            .jdbcUrl(URL)
            .capacity(3)
            .pool(PoolConfig.builder("a").limit(2).build())
            .pool(PoolConfig.builder("b").limit(1).build())
            .open()) {
      assertThat(db.serverLimit()).isEmpty();
      assertThat(db.budget().capacity()).isEqualTo(3);
      WorkloadPool b = db.pool("b");
      try (Connection c = b.getConnection();
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT 1")) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(1);
        assertThatThrownBy(b::getConnection).isInstanceOf(BulkheadFullException.class);
      }
      assertThat(b.stats().bulkhead().inFlight()).isZero();
      assertThat(b.stats().active()).isZero();
    }
  }
}
