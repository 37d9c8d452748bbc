package io.bulkhead.scenarios;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.PoolConfig;
import io.bulkhead.jdbc.PoolStats;
import io.bulkhead.jdbc.WorkloadPool;
import io.bulkhead.localdb.LocalPostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * What {@code demo db --dashboard} serves about a run's pools, on a real PostgreSQL with the
 * connections held still: each pool's figures in {@code /bulkheads} and {@code /metrics} are its
 * {@link PoolStats}, next to its compartment's own numbers; before the pools are announced their
 * compartments show no resource, and once they close both disappear.
 */
class DbDashboardTest {

  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private String get(URI base, String path) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(path).isEqualTo(200);
    return r.body();
  }

  private JsonNode compartments(DbDashboard watch) throws Exception {
    return new ObjectMapper().readTree(get(watch.uri(), "/bulkheads")).get("compartments");
  }

  private static JsonNode named(JsonNode compartments, String name) {
    for (JsonNode c : compartments) {
      if (c.get("name").asText().equals(name)) {
        return c;
      }
    }
    throw new AssertionError("no compartment " + name + " in " + compartments);
  }

  private static List<String> fieldNames(JsonNode node) {
    List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }

  @Test
  void eachPoolsConnections_areItsStats_inBulkheadsAndMetrics_whileItsRunLasts() throws Exception {
    String name = "bhd-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
    try (LocalPostgres db = LocalPostgres.findOrStart();
        DbDashboard watch = DbDashboard.start(0)) {
      DatabasePools.Builder b =
          DatabasePools.builder(name)
              .jdbcUrl(db.jdbcUrl())
              .capacity(5)
              .registry(watch.registry())
              .pool(PoolConfig.builder("checkout").limit(3).build())
              .pool(PoolConfig.builder("reports").limit(2).build());
      db.username().ifPresent(b::username);
      DatabasePools pools = b.open();
      WorkloadPool checkout = pools.pool("checkout");
      WorkloadPool reports = pools.pool("reports");
      try {
        JsonNode before = compartments(watch);
        assertThat(before).hasSize(2);
        assertThat(named(before, name + ".checkout").get("resource").isNull())
            .as("registered, not yet announced: no resource")
            .isTrue();

        watch.opened(pools);
        try (Connection c1 = checkout.getConnection();
            Connection c2 = checkout.getConnection();
            Connection r1 = reports.getConnection()) {
          JsonNode now = compartments(watch);
          PoolStats cs = checkout.stats();
          PoolStats rs = reports.stats();

          JsonNode c = named(now, name + ".checkout");
          assertThat(c.get("limit").asInt()).isEqualTo(3);
          assertThat(c.get("inFlight").asInt()).isEqualTo(cs.bulkhead().inFlight()).isEqualTo(2);
          JsonNode cr = c.get("resource");
          assertThat(cr.get("kind").asText()).isEqualTo("pool");
          assertThat(fieldNames(cr.get("figures")))
              .containsExactly("active", "idle", "total", "awaiting");
          assertThat(cr.get("figures").get("active").asInt()).isEqualTo(cs.active()).isEqualTo(2);
          assertThat(cr.get("figures").get("idle").asInt()).isEqualTo(cs.idle()).isEqualTo(1);
          assertThat(cr.get("figures").get("total").asInt()).isEqualTo(cs.total()).isEqualTo(3);
          assertThat(cr.get("figures").get("awaiting").asInt()).isEqualTo(cs.waiting()).isZero();
          assertThat(cr.get("summary").asText())
              .isEqualTo(
                  "HikariCP pool of 3: 2 connections"
                      + " handed out, 1 idle, 3 open; 0 threads waiting inside it for one");

          JsonNode rr = named(now, name + ".reports").get("resource");
          assertThat(rr.get("figures").get("active").asInt()).isEqualTo(rs.active()).isEqualTo(1);
          assertThat(rr.get("figures").get("idle").asInt()).isEqualTo(rs.idle()).isEqualTo(1);
          assertThat(rr.get("figures").get("total").asInt()).isEqualTo(rs.total()).isEqualTo(2);

          assertThat(get(watch.uri(), "/metrics"))
              .contains(
                  "bulkhead_pool_connections_active{budget=\""
                      + name
                      + "\",name=\""
                      + name
                      + ".checkout\"} 2.0",
                  "bulkhead_pool_connections_idle{budget=\""
                      + name
                      + "\",name=\""
                      + name
                      + ".checkout\"} 1.0",
                  "bulkhead_pool_connections_open{budget=\""
                      + name
                      + "\",name=\""
                      + name
                      + ".checkout\"} 3.0",
                  "bulkhead_pool_threads_awaiting{budget=\""
                      + name
                      + "\",name=\""
                      + name
                      + ".checkout\"} 0.0",
                  "bulkhead_pool_connections_active{budget=\""
                      + name
                      + "\",name=\""
                      + name
                      + ".reports\"} 1.0",
                  "bulkhead_in_flight{name=\"" + name + ".checkout\"} 2.0",
                  "bulkhead_limit{name=\"" + name + ".reports\"} 2.0");
        }
      } finally {
        watch.closing(pools);
        pools.close();
      }

      assertThat(compartments(watch)).as("the run's compartments are gone").isEmpty();
      assertThat(get(watch.uri(), "/metrics"))
          .doesNotContain("bulkhead_pool_")
          .doesNotContain("name=\"" + name);
      await().atMost(Duration.ofSeconds(20)).until(() -> backends(db, name) == 0);
    }
  }

  private static int backends(LocalPostgres db, String prefix) throws Exception {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE ?")) {
      ps.setString(1, prefix + "%");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
