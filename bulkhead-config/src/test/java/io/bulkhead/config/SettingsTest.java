package io.bulkhead.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.QueueSettings;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

/**
 * The settings model beyond one compartment: the {@code defaults} every compartment inherits key by
 * key, {@code datasources}, the edge keys ({@code paths}, {@code upstream}), and the map front end
 * that reads the same keys as the file.
 */
class SettingsTest {

  private static BulkheadFile parse(String yaml) {
    return BulkheadFile.parse(yaml, "app.yml");
  }

  private static AbstractThrowableAssert<?, ? extends Throwable> failsWith(String yaml) {
    return assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class);
  }

  private static CompartmentSpec only(String yaml) {
    return parse(yaml).compartments().get(0);
  }

  @Test
  void defaults_areInheritedKeyByKey_andAKeyGivenWins() {
    BulkheadFile f =
        parse(
            String.join(
                "\n",
                "budgets: {postgres: 10}",
                "defaults:",
                "  limit: 2",
                "  max-queue: 5",
                "  max-wait: 100ms",
                "  budget: postgres",
                "  cpu-bound: true",
                "compartments:",
                "  a: {}",
                "  b: {limit: 3, max-wait: 1s, cpu-bound: false}",
                "worker-pools:",
                "  w: {max-queue: unbounded}",
                ""));
    CompartmentSpec a = f.compartments().get(0);
    assertThat(a.limit()).isEqualTo(2);
    assertThat(a.queue())
        .isEqualTo(QueueSettings.DEFAULT.withMaxQueue(5).withMaxWait(Duration.ofMillis(100)));
    assertThat(a.budget()).contains("postgres");
    assertThat(a.cpuBound()).isTrue();
    CompartmentSpec b = f.compartments().get(1);
    assertThat(b.limit()).isEqualTo(3);
    assertThat(b.queue())
        .as("max-queue inherited, max-wait its own")
        .isEqualTo(QueueSettings.DEFAULT.withMaxQueue(5).withMaxWait(Duration.ofSeconds(1)));
    assertThat(b.cpuBound()).isFalse();
    CompartmentSpec w = f.compartments().get(2);
    assertThat(w.queue())
        .isEqualTo(QueueSettings.DEFAULT.withUnboundedQueue().withMaxWait(Duration.ofMillis(100)));
    assertThat(f.budgetUse().get(0).describe())
        .isEqualTo("budget 'postgres': a 2 + b 3 + w 2 = 7, within its capacity of 10");
  }

  @Test
  void aLimitOfItsOwnOrDerivedFromItsOwnRateAndLatency_beatsTheDefaultLimit() {
    String base = "defaults: {limit: 9, criticality: optional}\ncompartments:\n  a: ";
    assertThat(only(base + "{rate: 40/s, latency: 50ms}\n").limit())
        .as("need 2 x 4/3 from the inherited criticality, not the default limit 9")
        .isEqualTo(3);
    assertThat(only(base + "{rate: 40/s, latency: 50ms}\n").limitDerived()).isTrue();
    assertThat(only(base + "{limit: 1}\n").limit()).isEqualTo(1);
    assertThat(only(base + "{}\n").limit()).isEqualTo(9);
    assertThat(only(base + "{}\n").limitDerived()).isFalse();
  }

  @Test
  void criticalityAndHeadroom_areInheritedTogether() {
    String base = "defaults: {headroom: 2}\ncompartments:\n  a: {rate: 10/s, latency: 100ms";
    assertThat(only(base + "}\n").limit()).as("need 1 x the inherited headroom 2").isEqualTo(2);
    assertThat(only(base + ", criticality: critical}\n").limit())
        .as("its own criticality's x3, not the inherited headroom")
        .isEqualTo(3);
    assertThat(only(base + ", criticality: critical}\n").criticality())
        .contains(Criticality.CRITICAL);
  }

  @Test
  void theQueueRules_holdWithDefaults() {
    failsWith("defaults: {max-queue: 5}\ncompartments: {a: {limit: 1}}\n")
        .hasMessage(
            "app.yml:1: defaults.max-queue: lets 5 callers wait but there is no max-wait: add"
                + " max-wait (how long one may wait, like 100ms, or unbounded)");
    assertThat(only("defaults: {max-wait: 1s}\ncompartments: {a: {limit: 1}}\n").queue())
        .as("an inherited max-wait may go unused")
        .isEqualTo(QueueSettings.DEFAULT.withMaxWait(Duration.ofSeconds(1)));
    failsWith(
            "defaults: {max-queue: 5, max-wait: 1s}\ncompartments: {a: {limit: 1, max-queue: 0,"
                + " max-wait: 2s}}\n")
        .hasMessageStartingWith(
            "app.yml:2: compartments.a.max-wait: has no effect without a queue");
    failsWith("defaults: {limit: 0}\ncompartments: {a: {}}\n")
        .hasMessage("app.yml:1: defaults.limit: must be at least 1 but was 0");
    failsWith("defaults: {budget: gpu}\ncompartments: {a: {limit: 1}}\n")
        .hasMessage("app.yml:1: defaults.budget: no budget named 'gpu' (no budgets are declared)");
  }

  @Test
  void defaults_holdOnlyKeysEveryCompartmentTakes() {
    failsWith("defaults: {paths: [/a]}\ncompartments: {a: {limit: 1}}\n")
        .hasMessage(
            "app.yml:1: defaults.paths: unknown key (expected one of: budget, cpu-bound,"
                + " criticality, headroom, limit, max-queue, max-wait)");
  }

  @Test
  void paths_andUpstream_areCompartmentKeys() {
    CompartmentSpec llm =
        only(
            "compartments:\n  llm:\n    limit: 2\n    paths: [/chat/**, /complete]\n"
                + "    upstream: https://llm.internal:8443/v1\n");
    assertThat(llm.paths()).containsExactly("/chat/**", "/complete");
    assertThat(llm.upstream()).contains("https://llm.internal:8443/v1");
    assertThat(only("compartments: {a: {limit: 1, paths: '/a, /b/**'}}\n").paths())
        .as("one value with commas, as Spring reads a list from one property")
        .containsExactly("/a", "/b/**");
    failsWith("compartments: {a: {limit: 1, paths: [/a, chat/**]}}\n")
        .hasMessage(
            "app.yml:1: compartments.a.paths[1]: a path pattern starts with / (/login, /chat/**)"
                + " but was 'chat/**'");
    failsWith("worker-pools: {w: {limit: 1, upstream: x}}\n")
        .hasMessageContaining("worker-pools.w.upstream: unknown key");
  }

  @Test
  void datasources_declareDatabasesAndTheirPools_whichInheritLimitAndQueue() {
    BulkheadFile f =
        parse(
            String.join(
                "\n",
                "defaults: {limit: 2, max-queue: 4, max-wait: 250ms}",
                "datasources:",
                "  orders:",
                "    url: jdbc:postgresql://db:5432/orders",
                "    username: app",
                "    password: secret",
                "    reserve: 10",
                "    capacity: 30",
                "    pools:",
                "      checkout: {limit: 6, connection-timeout: 2s}",
                "      reports: {max-queue: 0}",
                ""));
    assertThat(f.compartments()).isEmpty();
    DatabaseSpec orders = f.datasources().get(0);
    assertThat(orders)
        .isEqualTo(
            new DatabaseSpec(
                "orders",
                "datasources.orders",
                3,
                "jdbc:postgresql://db:5432/orders",
                Optional.of("app"),
                Optional.of("secret"),
                10,
                OptionalInt.of(30),
                List.of(
                    new PoolSpec(
                        "checkout",
                        "datasources.orders.pools.checkout",
                        10,
                        6,
                        QueueSettings.DEFAULT.withMaxQueue(4).withMaxWait(Duration.ofMillis(250)),
                        Optional.of(Duration.ofSeconds(2))),
                    new PoolSpec(
                        "reports",
                        "datasources.orders.pools.reports",
                        11,
                        2,
                        QueueSettings.DEFAULT.withMaxWait(Duration.ofMillis(250)),
                        Optional.empty()))));
    assertThat(orders.toString()).contains("password=(hidden)").doesNotContain("secret");
  }

  @Test
  void datasources_errors() {
    failsWith("datasources: {orders: {pools: {a: {limit: 1}}}}\n")
        .hasMessage(
            "app.yml:1: datasources.orders: has no url: add url, the database's JDBC URL"
                + " (jdbc:postgresql://db:5432/orders)");
    failsWith("datasources: {orders: {url: 'postgres://db', pools: {a: {limit: 1}}}}\n")
        .hasMessageStartingWith("app.yml:1: datasources.orders.url: must start with 'jdbc:'");
    failsWith("datasources: {orders: {url: 'jdbc:x:y'}}\n")
        .hasMessageStartingWith("app.yml:1: datasources.orders: has no pools");
    failsWith("datasources: {orders: {url: 'jdbc:x:y', pools: {a: {}}}}\n")
        .hasMessage(
            "app.yml:1: datasources.orders.pools.a: needs a limit: the number of connections its"
                + " workload may hold");
    failsWith("datasources: {orders: {url: 'jdbc:x:y', budget: 3, pools: {a: {limit: 1}}}}\n")
        .hasMessageStartingWith("app.yml:1: datasources.orders.budget: unknown key");
    failsWith("datasources: {orders: {url: 'jdbc:x:y', pools: {a: {limit: 1, size: 2}}}}\n")
        .hasMessageStartingWith("app.yml:1: datasources.orders.pools.a.size: unknown key");
  }

  @Test
  void theMapFrontEnd_readsTheSameKeysAsTheFile() {
    Map<String, Object> llm = new LinkedHashMap<>();
    llm.put("limit", 10);
    llm.put("max-queue", "20");
    llm.put("max-wait", "1s");
    llm.put("budget", "llm-api");
    llm.put("paths", List.of("/chat/**"));
    llm.put("cpu-bound", true);
    Map<String, Object> settings = new LinkedHashMap<>();
    settings.put("budgets", Map.of("llm-api", Map.of("capacity", 20)));
    settings.put("compartments", Map.of("llm", llm));

    BulkheadFile fromMap = BulkheadFile.fromMap(settings, "props");
    BulkheadFile fromFile =
        parse(
            "budgets: {llm-api: {capacity: 20}}\ncompartments:\n  llm: {limit: 10, max-queue: 20,"
                + " max-wait: 1s, budget: llm-api, paths: [/chat/**], cpu-bound: true}\n");
    assertThat(fromMap.compartments())
        .usingRecursiveComparison()
        .withComparatorForType(Double::compare, Double.class) // rate: NaN when not given
        .ignoringFields("line")
        .isEqualTo(fromFile.compartments());
    assertThat(fromMap.budgets())
        .usingRecursiveComparison()
        .ignoringFields("line")
        .isEqualTo(fromFile.budgets());
    assertThat(BulkheadFile.fromMap(Map.of(), "props").compartments()).isEmpty();

    llm.put("max-queue", "many");
    assertThatThrownBy(() -> BulkheadFile.fromMap(settings, "props"))
        .isInstanceOf(ConfigException.class)
        .hasMessage("props: compartments.llm.max-queue: expected a whole number but was 'many'");
  }

  @Test
  void keys_areEveryKeyOfEverySection() {
    assertThat(BulkheadFile.keys())
        .contains(
            "defaults.limit",
            "defaults.max-queue",
            "defaults.max-wait",
            "headroom.critical",
            "budgets.*.capacity",
            "compartments.*.paths",
            "compartments.*.upstream",
            "compartments.*.adaptive.controller",
            "compartments.*.adaptive.interval",
            "worker-pools.*.threads",
            "datasources.*.capacity",
            "datasources.*.pools.*.limit",
            "datasources.*.pools.*.connection-timeout")
        .doesNotContain(
            "datasources.*.pools",
            "datasources.*.budget",
            "worker-pools.*.workers",
            "compartments.*.adaptive")
        .hasSize(7 + 2 + 1 + 11 + 4 + 10 + 5 + 4);
  }
}
