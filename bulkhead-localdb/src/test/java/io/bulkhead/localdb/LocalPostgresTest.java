package io.bulkhead.localdb;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * The embedded PostgreSQL the demo falls back to when nothing answers on 127.0.0.1:5432. On this
 * machine the tests run as root, which PostgreSQL refuses; the embedded server must still start.
 */
class LocalPostgresTest {

  @Test
  void startsAnEmbeddedServerEvenAsRootAndStopsIt() throws Exception {
    String url;
    try (LocalPostgres pg = LocalPostgres.startEmbedded()) {
      assertThat(pg.isEmbedded()).isTrue();
      assertThat(pg.description()).startsWith("PostgreSQL ").contains("embedded");
      url = pg.jdbcUrl();
      try (Connection c = pg.connect();
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT current_setting('max_connections')::int")) {
        rs.next();
        assertThat(rs.getInt(1)).isPositive();
      }
    }
    try {
      LocalPostgres.at(url).close();
      throw new AssertionError("the embedded server still answers at " + url + " after close");
    } catch (java.sql.SQLException expected) {
      assertThat(expected.getMessage()).startsWith("cannot use the PostgreSQL server at");
    }
  }
}
