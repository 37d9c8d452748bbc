package io.bulkhead.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Opening the pools of a database on a real PostgreSQL: the budget against the server's real limit,
 * and clear errors for bad input. No failed open may leave a connection behind.
 */
class DatabasePoolsTest extends PostgresTestSupport {

  private static PoolConfig pool(String name, int size) {
    return PoolConfig.builder(name).limit(size).build();
  }

  /** What the server lets one application hold with no reserve for others. */
  private static int serverUsable() throws SQLException {
    return setting("max_connections")
        - setting("superuser_reserved_connections")
        - setting("reserved_connections");
  }

  @Test
  void opensEveryConnectionOfEveryPoolAndNamesThem() throws Exception {
    DatabasePools db = open(pools().reserve(5).pool(pool("checkout", 3)).pool(pool("reports", 2)));

    assertThat(backendsNamed(prefix + ".checkout")).isEqualTo(3);
    assertThat(backendsNamed(prefix + ".reports")).isEqualTo(2);
    assertThat(db.stats())
        .extracting(PoolStats::name, PoolStats::limit, PoolStats::idle, PoolStats::total)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("checkout", 3, 3, 3),
            org.assertj.core.groups.Tuple.tuple("reports", 2, 2, 2));

    ServerLimit limit = db.serverLimit().orElseThrow();
    assertThat(limit.maxConnections()).isEqualTo(setting("max_connections"));
    assertThat(limit.superuserReservedConnections())
        .isEqualTo(setting("superuser_reserved_connections"));
    assertThat(limit.reservedConnections()).isEqualTo(setting("reserved_connections"));
    assertThat(limit.usable()).isEqualTo(serverUsable() - 5);
    assertThat(db.budget().capacity()).isEqualTo(serverUsable() - 5);
    assertThat(db.budget().shares())
        .containsExactly(
            org.assertj.core.api.Assertions.entry(prefix + ".checkout", 3),
            org.assertj.core.api.Assertions.entry(prefix + ".reports", 2));
    assertThat(limit.explain())
        .contains("max_connections " + limit.maxConnections())
        .contains("reserve for other clients 5")
        .endsWith("= " + limit.usable());
    assertThat(backendsNamed(prefix + ".limit-check"))
        .as("the check's connection is closed")
        .isZero();
  }

  @Test
  void poolsBeyondWhatTheServerAllowsFailWithTheArithmetic() throws Exception {
    int usable = serverUsable();
    assertThatThrownBy(
            () ->
                pools()
                    .reserve(usable - 4)
                    .pool(pool("checkout", 3))
                    .pool(pool("reports", 2))
                    .open())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "pools of database '"
                + prefix
                + "' need checkout 3 + reports 2 = 5"
                + " connections, more than its capacity of 4")
        .hasMessageContaining("max_connections " + setting("max_connections"))
        .hasMessageContaining("reserve for other clients " + (usable - 4) + " = 4");
    assertThat(backends(prefix)).isZero();
  }

  @Test
  void poolsBeyondAnExplicitBudgetFail() {
    assertThatThrownBy(
            () -> pools().capacity(4).pool(pool("checkout", 3)).pool(pool("reports", 2)).open())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "need checkout 3 + reports 2 = 5 connections, more than its capacity"
                + " of 4 (set by capacity(4)");
  }

  @Test
  void aBudgetLargerThanTheServerAllowsFails() throws Exception {
    int usable = serverUsable();
    assertThatThrownBy(() -> pools().capacity(usable + 1).pool(pool("w", 1)).open())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "capacity of database '"
                + prefix
                + "' is "
                + (usable + 1)
                + " connections but the server allows only "
                + usable);
  }

  @Test
  void aReserveThatLeavesNothingFails() throws Exception {
    int usable = serverUsable();
    assertThatThrownBy(() -> pools().reserve(usable).pool(pool("w", 1)).open())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaves no connections for these pools")
        .hasMessageContaining("= 0");
  }

  @Test
  void anUnreachableDatabaseFailsWithTheUrlAndTheCauseButNotThePassword() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    String url = "jdbc:postgresql://127.0.0.1:" + closedPort + "/test?password=hunter2";
    assertThatThrownBy(
            () ->
                DatabasePools.builder(prefix)
                    .jdbcUrl(url)
                    .username("postgres")
                    .pool(pool("w", 1))
                    .open())
        .isInstanceOf(SQLException.class)
        .hasMessageContaining(
            "cannot connect to database '"
                + prefix
                + "' at jdbc:postgresql://"
                + "127.0.0.1:"
                + closedPort
                + "/test?password=***")
        .hasMessageContaining("as user 'postgres'")
        .hasMessageContaining("refused")
        .hasMessageNotContaining("hunter2");
  }

  @Test
  void wrongCredentialsFailNamingTheUser() throws Exception {
    assertThatThrownBy(
            () ->
                pools()
                    .username("no_such_role_" + prefix.replace('-', '_'))
                    .pool(pool("w", 1))
                    .open())
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("the server refused the credentials of user 'no_such_role_")
        .hasMessageContaining("database '" + prefix + "'");
    assertThat(backends(prefix)).isZero();
  }

  @Test
  void aMissingDatabaseFailsSayingSo() throws Exception {
    String url = db().jdbcUrl().replaceFirst("/(\\w+)(\\?|$)", "/no_such_db_here$2");
    DatabasePools.Builder b = DatabasePools.builder(prefix).jdbcUrl(url).pool(pool("w", 1));
    db().username().ifPresent(b::username);
    assertThatThrownBy(b::open)
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("has no such database")
        .hasMessageContaining("no_such_db_here");
  }

  @Test
  void registersCompartmentsWhileOpenAndRefusesADuplicateWithoutOpeningAnything() throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    DatabasePools db = open(pools().registry(registry).pool(pool("a", 1)).pool(pool("b", 1)));
    assertThat(registry.all())
        .extracting(Compartment::name)
        .containsExactly(prefix + ".a", prefix + ".b");
    assertThat(registry.find(prefix + ".a")).containsSame(db.pool("a").compartment());
    db.close();
    assertThat(registry.all()).isEmpty();

    registry.register(Bulkhead.builder(prefix + ".b").limit(1).build());
    assertThatThrownBy(
            () -> pools().registry(registry).pool(pool("a", 1)).pool(pool("b", 1)).open())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(prefix + ".b");
    assertThat(registry.all()).extracting(Compartment::name).containsExactly(prefix + ".b");
    await().atMost(SERVER_SETTLES).until(() -> backends(prefix), n -> n == 0);
  }

  @Test
  void looksUpPoolsByNameAndSaysWhichExist() throws Exception {
    DatabasePools db = open(pools().pool(pool("a", 1)).pool(pool("b", 1)));
    assertThat(db.pools()).extracting(WorkloadPool::name).containsExactly("a", "b");
    assertThat(db.pool("b").qualifiedName()).isEqualTo(prefix + ".b");
    assertThatThrownBy(() -> db.pool("c"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("database '" + prefix + "' has no pool named 'c'; its pools are [a, b]");
  }

  @Test
  void builderRejectsBadInputNamingTheFieldAndTheValue() {
    assertThatThrownBy(() -> DatabasePools.builder(" ")).hasMessageContaining("must not be blank");
    DatabasePools.Builder b = DatabasePools.builder("orders");
    assertThatThrownBy(() -> b.jdbcUrl("postgresql://x/y?password=pw"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "jdbcUrl of database 'orders' must start with 'jdbc:' but was"
                + " 'postgresql://x/y?password=***'");
    // A password in the URL's user info (MySQL, MariaDB, SQL Server style) is masked as well.
    assertThatThrownBy(() -> b.jdbcUrl("mysql://app:s3cr%3At@db:3306/orders"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "jdbcUrl of database 'orders' must start with 'jdbc:' but was"
                + " 'mysql://***@db:3306/orders'");
    assertThatThrownBy(() -> b.reserve(-1))
        .hasMessage("reserve of database 'orders' must not be negative but was -1");
    assertThatThrownBy(() -> b.capacity(0))
        .hasMessage("capacity of database 'orders' must be at least 1 but was 0");
    assertThatThrownBy(b::open)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("jdbcUrl of database 'orders' was not set");
    b.jdbcUrl("jdbc:postgresql://127.0.0.1:5432/test");
    assertThatThrownBy(b::open)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("database 'orders' has no pools");
    b.pool(pool("a", 1));
    assertThatThrownBy(() -> b.pool(pool("a", 2)))
        .hasMessage("database 'orders' already has a pool named 'a' (limit 1)");
  }

  @Test
  void poolConfigRejectsBadInputNamingTheFieldAndTheValue() {
    assertThatThrownBy(() -> PoolConfig.builder("")).hasMessageContaining("must not be blank");
    PoolConfig.Builder b = PoolConfig.builder("reports");
    assertThatThrownBy(() -> b.limit(0))
        .hasMessage("limit of pool 'reports' must be at least 1 but was 0");
    assertThatThrownBy(() -> b.maxQueue(-2)).hasMessage("maxQueue must not be negative but was -2");
    assertThatThrownBy(() -> b.maxWait(Duration.ofMillis(-1)))
        .hasMessage("maxWait must not be negative but was PT-0.001S");
    assertThatThrownBy(() -> b.connectionTimeout(Duration.ofMillis(100)))
        .hasMessage(
            "connectionTimeout of pool 'reports' must be at least 250ms (HikariCP's floor)"
                + " but was PT0.1S");
    assertThatThrownBy(b::build).hasMessageStartingWith("limit of pool 'reports' was not set");
    b.limit(4).maxQueue(3);
    assertThatThrownBy(b::build)
        .hasMessageStartingWith(
            "pool 'reports' lets 3 callers wait but its maxWait is 0, so each would be rejected");

    PoolConfig config = b.maxWait(Duration.ofMillis(250)).build();
    b.limit(9); // build() copied: the config keeps its values
    assertThat(config.limit()).isEqualTo(4);
    assertThat(config.maxQueue()).hasValue(3);
    assertThat(config.maxWait()).contains(Duration.ofMillis(250));
    assertThat(config.connectionTimeout()).isEqualTo(PoolConfig.DEFAULT_CONNECTION_TIMEOUT);
    assertThat(
            PoolConfig.builder("x")
                .limit(1)
                .unboundedQueue()
                .maxWait(Duration.ofSeconds(1))
                .build()
                .maxQueue())
        .isEmpty();
  }
}
