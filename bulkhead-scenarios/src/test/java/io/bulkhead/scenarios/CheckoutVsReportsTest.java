package io.bulkhead.scenarios;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.PostgresTestSupport;
import io.bulkhead.jdbc.WorkloadPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The shape of the checkout-vs-reports outage on a real PostgreSQL, with the degraded report time
 * shortened to 8 s and reports arriving at 4/s (so the shared pool fills in about 2 s instead of 5)
 * to keep the test near half a minute.
 */
class CheckoutVsReportsTest {

  /** A figure to a tenth: whole ones without a fraction, as the JSON writer writes them. */
  static final String TENTHS = "\\d+(\\.\\d)?";

  /** The JSON the demo prints, key for key. */
  static final String D =
      "\\{\"checkout\":\\{\"p50_ms\":"
          + TENTHS
          + ",\"p99_ms\":"
          + TENTHS
          + ",\"errors\":\\d+,\"per_s\":"
          + TENTHS
          + "\\},\"reports\":\\{\"ok\":\\d+,"
          + "\"rejected\":\\d+,\"errors\":\\d+\\}\\}";

  static final String JSON = "\\{\"shared\":" + D + ",\"split\":" + D + "\\}";

  @Test
  void sharedPoolStallsCheckoutForMostOfTheReportTimeWhileSplitPoolsKeepItHealthy()
      throws Exception {
    Duration degraded = Duration.ofSeconds(8);
    CheckoutVsReports.Settings settings =
        CheckoutVsReports.Settings.builder()
            .healthyPhase(Duration.ofSeconds(3))
            .degradedPhase(Duration.ofSeconds(10))
            .degradedReportQuery(degraded)
            .reportsPerSecond(4)
            .build();
    List<String> progress = new ArrayList<>();
    BulkheadRegistry registry = BulkheadRegistry.create();
    List<String> watched = new ArrayList<>();
    CheckoutVsReports.Watch watch =
        new CheckoutVsReports.Watch() {
          @Override
          public BulkheadRegistry registry() {
            return registry;
          }

          @Override
          public void opened(DatabasePools pools) {
            // Open in full, and the pools' compartments in the registry, before the load starts.
            for (WorkloadPool p : pools.pools()) {
              assertThat(p.stats().total()).as("%s", p).isEqualTo(p.config().limit());
              assertThat(registry.find(p.qualifiedName())).containsSame(p.compartment());
            }
            watched.add("opened " + names(pools));
          }

          @Override
          public void closing(DatabasePools pools) {
            assertThat(registry.all()).hasSize(pools.pools().size());
            watched.add("closing " + names(pools));
          }
        };
    CheckoutVsReports.Result r =
        CheckoutVsReports.run(PostgresTestSupport.db(), settings, progress::add, watch);

    CheckoutVsReports.CheckoutFigures shared = r.shared().checkout();
    CheckoutVsReports.CheckoutFigures split = r.split().checkout();
    CheckoutVsReports.CheckoutFigures splitHealthy = r.split().healthyCheckout();
    String table = r.table();

    // Shared: checkout waits behind the degraded reports for most of their query time.
    assertThat(shared.p99()).as(table).isGreaterThanOrEqualTo(degraded.dividedBy(2));
    assertThat(r.shared().peakQueued()).as(table).isGreaterThan(10);

    // Split: checkout stays within a small multiple of its healthy p99 (5x: generous, for a loaded
    // 2-core machine) and not one checkout call fails; reports are turned away instead.
    assertThat(split.errors()).as(table).isZero();
    assertThat(split.calls()).as(table).isEqualTo(400); // 40/s for 10 s
    assertThat(split.p99()).as(table).isLessThanOrEqualTo(splitHealthy.p99().multipliedBy(5));
    assertThat(split.perSecond()).as(table).isGreaterThan(30.0).isGreaterThan(shared.perSecond());
    assertThat(r.split().reportsRejected()).as(table).isPositive();
    assertThat(r.split().reportsErrors()).as(table).isZero();
    assertThat(r.shared().reportsErrors()).as(table).isZero();

    assertThat(r.split().checkoutCalls())
        .hasSize(520) // 13 s at 40/s
        .allSatisfy(c -> assertThat(c.ok()).isTrue());
    assertThat(r.shared().checkoutCalls()).extracting(c -> c.latency()).contains(shared.p99());

    assertThat(r.toJson()).matches(JSON);
    assertThat(table)
        .contains("checkout p99")
        .contains("shared pool of 10")
        .contains("split: checkout 6, reports 4");
    assertThat(progress).hasSize(4);
    assertThat(watched)
        .as("the watch follows each run's pools")
        .containsExactly(
            "opened [shared]",
            "closing [shared]",
            "opened [checkout, reports]",
            "closing [checkout, reports]");
    assertThat(registry.all()).as("every run's compartments left the registry").isEmpty();

    // Every connection the runs opened is gone: none was leaked by a rejected, failed or cut-off
    // call.
    await()
        .atMost(PostgresTestSupport.SERVER_SETTLES)
        .until(() -> PostgresTestSupport.backends(r.applicationNamePrefix()), n -> n == 0);
    // And every thread the runs started is gone: the callers, the sampler, HikariCP's own.
    await()
        .atMost(PostgresTestSupport.SERVER_SETTLES)
        .until(() -> liveThreads("demo-db-"), List::isEmpty);
  }

  private static List<String> names(DatabasePools pools) {
    List<String> names = new ArrayList<>();
    for (WorkloadPool p : pools.pools()) {
      names.add(p.name());
    }
    return names;
  }

  private static List<String> liveThreads(String prefix) {
    List<String> names = new ArrayList<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.isAlive() && t.getName().startsWith(prefix)) {
        names.add(t.getName());
      }
    }
    return names;
  }
}
