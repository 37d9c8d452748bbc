package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.localdb.LocalPostgres;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Per-workload DataSources from {@code bulkhead.datasources.*} against a real PostgreSQL (the
 * server on 127.0.0.1:5432, database test, or an embedded one), and against a closed port.
 */
@ExtendWith(OutputCaptureExtension.class)
class DataSourcesTest {

  private static LocalPostgres db;

  @BeforeAll
  static void database() throws SQLException {
    db = LocalPostgres.findOrStart();
  }

  private static ApplicationContextRunner runner(String url, String... properties) {
    List<String> all = new ArrayList<>(List.of("bulkhead.datasources.orders.url=" + url));
    db.username().ifPresent(user -> all.add("bulkhead.datasources.orders.username=" + user));
    all.addAll(List.of(properties));
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                BulkheadAutoConfiguration.class, BulkheadDataSourceAutoConfiguration.class))
        .withPropertyValues(all.toArray(String[]::new));
  }

  private static int selectOne(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("select 1")) {
      rows.next();
      return rows.getInt(1);
    }
  }

  @Test
  void eachWorkloadGetsADataSourceBeanOfItsOwnSize() {
    runner(
            db.jdbcUrl(),
            "bulkhead.datasources.orders.pools.checkout.limit=2",
            "bulkhead.datasources.orders.pools.reports.limit=1")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBeansOfType(DataSource.class))
                  .containsOnlyKeys("orders.checkout", "orders.reports");
              DataSource checkout = context.getBean("orders.checkout", DataSource.class);
              DataSource reports = context.getBean("orders.reports", DataSource.class);
              BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);
              assertThat(registry.find("orders.checkout").orElseThrow().config().limit())
                  .isEqualTo(2);

              try (Connection first = checkout.getConnection();
                  Connection second = checkout.getConnection();
                  Connection report = reports.getConnection()) {
                assertThat(selectOne(first) + selectOne(second) + selectOne(report)).isEqualTo(3);
                assertThatThrownBy(checkout::getConnection)
                    .isInstanceOf(BulkheadFullException.class)
                    .hasMessageContaining("orders.checkout");
                assertThatThrownBy(reports::getConnection)
                    .isInstanceOf(BulkheadFullException.class)
                    .hasMessageContaining("orders.reports");
              }
              assertThat(registry.find("orders.checkout").orElseThrow().stats().inFlight())
                  .isZero();
              try (Connection again = checkout.getConnection()) {
                assertThat(selectOne(again)).isEqualTo(1);
              }
            });
  }

  @Test
  void poolsThatDoNotFitTheServersLimitStopStartUpNamingTheKey() throws SQLException {
    int usable;
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rows =
            s.executeQuery(
                "select current_setting('max_connections')::int"
                    + " - current_setting('superuser_reserved_connections')::int"
                    + " - coalesce(current_setting('reserved_connections', true)::int, 0)")) {
      rows.next();
      usable = rows.getInt(1);
    }
    // Leaves these pools 2 connections of the server's; they ask for 3.
    runner(
            db.jdbcUrl(),
            "bulkhead.datasources.orders.reserve=" + (usable - 2),
            "bulkhead.datasources.orders.pools.checkout.limit=2",
            "bulkhead.datasources.orders.pools.reports.limit=1")
        .run(
            context -> {
              assertThat(context).hasFailed();
              FailureAnalysis analysis =
                  new BulkheadFailureAnalyzer().analyze(context.getStartupFailure());
              assertThat(analysis).isNotNull();
              assertThat(analysis.getDescription())
                  .startsWith(
                      "bulkhead.datasources.orders.pools={checkout=2, reports=1}: pools of"
                          + " database 'orders' need checkout 2 + reports 1 = 3 connections, more than its"
                          + " capacity of 2")
                  .contains("bulkhead.datasources.orders.reserve")
                  .doesNotContain("\n");
            });
  }

  @Test
  void theServiceStartsWhileTheDatabaseIsDownAndTheDataSourcesSayWhy(CapturedOutput output)
      throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    runner(
            "jdbc:postgresql://127.0.0.1:" + closedPort + "/orders",
            "bulkhead.datasources.orders.pools.checkout.limit=2")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              DataSource checkout = context.getBean("orders.checkout", DataSource.class);
              assertThatThrownBy(checkout::getConnection)
                  .isInstanceOf(SQLException.class)
                  .hasMessageStartingWith(
                      "the pools of bulkhead.datasources.orders could not open: ")
                  .hasMessageContaining("127.0.0.1:" + closedPort);
              assertThat(output.getAll())
                  .containsOnlyOnce(
                      "The service starts without its database: the pools of"
                          + " bulkhead.datasources.orders could not open: ");
            });
  }

  @Test
  void poolsThatCouldNotOpenAtStartUpOpenWhenTheDatabaseFirstAnswers() throws Exception {
    URI server = URI.create(db.jdbcUrl().substring("jdbc:".length()));
    int port;
    try (ServerSocket socket = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort(); // nothing listens there until the forwarder below
    }
    runner(
            "jdbc:postgresql://127.0.0.1:" + port + server.getRawPath(),
            "bulkhead.datasources.orders.pools.checkout.limit=1")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              DataSource checkout = context.getBean("orders.checkout", DataSource.class);
              BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);
              assertThatThrownBy(checkout::getConnection).isInstanceOf(SQLException.class);
              assertThat(registry.find("orders.checkout")).isEmpty();

              try (Forwarder up = new Forwarder(port, server.getHost(), server.getPort())) {
                try (Connection connection = checkout.getConnection()) {
                  assertThat(selectOne(connection)).isEqualTo(1);
                  assertThat(registry.find("orders.checkout").orElseThrow().stats().inFlight())
                      .isEqualTo(1);
                  assertThatThrownBy(checkout::getConnection)
                      .isInstanceOf(BulkheadFullException.class);
                }
                context.close(); // closes the pools while the forwarder still carries their
                // connections
              }
            });
  }

  /** Forwards a loopback port to the test database: the database "comes up" there. */
  private static final class Forwarder implements AutoCloseable {
    private final ServerSocket server;
    private final ExecutorService threads = Executors.newCachedThreadPool();

    Forwarder(int port, String host, int targetPort) throws IOException {
      server = new ServerSocket();
      server.setReuseAddress(true);
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      threads.execute(
          () -> {
            while (!server.isClosed()) {
              try {
                Socket client = server.accept();
                Socket target = new Socket(host, targetPort);
                threads.execute(() -> pump(client, target));
                threads.execute(() -> pump(target, client));
              } catch (IOException e) {
                return; // closed
              }
            }
          });
    }

    private static void pump(Socket from, Socket to) {
      try (from;
          to) {
        from.getInputStream().transferTo(to.getOutputStream());
      } catch (IOException e) {
        // one side went away; closing both ends the other pump too
      }
    }

    @Override
    public void close() throws IOException {
      server.close();
      threads.shutdownNow();
    }
  }

  @Test
  void aPoolWithoutASizeStopsStartUpNamingTheKey() {
    runner(db.jdbcUrl(), "bulkhead.datasources.orders.pools.checkout.max-queue=3")
        .run(
            context -> {
              FailureAnalysis analysis =
                  new BulkheadFailureAnalyzer().analyze(context.getStartupFailure());
              assertThat(analysis).isNotNull();
              assertThat(analysis.getDescription())
                  .isEqualTo(
                      "bulkhead.datasources.orders.pools.checkout: needs a limit: the number of"
                          + " connections its workload may hold");
            });
  }

  @Test
  void wrongPoolValuesStopStartUpNamingTheKeyAndTheValue() {
    runner(db.jdbcUrl(), "bulkhead.datasources.orders.pools.checkout.limit=0")
        .run(
            context ->
                assertThat(analysis(context.getStartupFailure()))
                    .isEqualTo(
                        "bulkhead.datasources.orders.pools.checkout.limit: must be at least 1 but was"
                            + " 0"));
    runner(
            db.jdbcUrl(),
            "bulkhead.datasources.orders.pools.checkout.limit=2",
            "bulkhead.datasources.orders.pools.checkout.max-queue=5")
        .run(
            context ->
                assertThat(analysis(context.getStartupFailure()))
                    .isEqualTo(
                        "bulkhead.datasources.orders.pools.checkout.max-queue: lets 5 callers wait"
                            + " but there is no max-wait: add max-wait (how long one may wait, like"
                            + " 100ms, or unbounded)"));
  }

  @Test
  void aValueThatCannotBeReadStopsStartUpNamingTheKey() {
    runner(db.jdbcUrl(), "bulkhead.datasources.orders.pools.checkout.limit=six")
        .run(
            context ->
                assertThat(analysis(context.getStartupFailure()))
                    .startsWith(
                        "bulkhead.datasources.orders.pools.checkout.limit=six: cannot be read as an"
                            + " Integer"));
  }

  private static String analysis(Throwable failure) {
    FailureAnalysis analysis = new BulkheadFailureAnalyzer().analyze(failure);
    assertThat(analysis).as("analysed: %s", failure).isNotNull();
    return analysis.getDescription();
  }
}
