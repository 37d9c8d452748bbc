package io.bulkhead.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bulkhead.AdaptiveLimit;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BulkheadFileTest {

  static final Path EXAMPLE = Path.of("../examples/checkout-reports.yml");

  private static BulkheadFile parse(String yaml) {
    return BulkheadFile.parse(yaml, "app.yml");
  }

  private static AbstractThrowableAssert<?, ? extends Throwable> failsWith(String yaml) {
    return assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class);
  }

  private static final String TWO =
      String.join(
          "\n",
          "budgets:",
          "  postgres: 10",
          "compartments:",
          "  checkout:",
          "    budget: postgres",
          "    criticality: critical",
          "    rate: 40/s",
          "    latency: 50ms",
          "");

  // --- the worked example
  // --------------------------------------------------------------------------

  @Test
  void workedExample_derivesSixAndFour_withinTheBudgetOfTen() {
    BulkheadFile f = BulkheadFile.load(EXAMPLE);
    assertThat(f.file()).isEqualTo(EXAMPLE.toString());
    CompartmentSpec checkout = f.compartments().get(0);
    CompartmentSpec reports = f.compartments().get(1);

    assertThat(checkout.name()).isEqualTo("checkout");
    assertThat(checkout.rate()).hasValue(40.0);
    assertThat(checkout.latency()).contains(Duration.ofMillis(50));
    assertThat(checkout.need()).hasValue(2.0);
    assertThat(checkout.headroom().map(Headroom::toString)).contains("x3");
    assertThat(checkout.limit()).isEqualTo(6);
    assertThat(checkout.limitDerived()).isTrue();
    assertThat(checkout.criticality()).contains(Criticality.CRITICAL);

    assertThat(reports.need()).hasValue(3.0);
    assertThat(reports.headroom().map(Headroom::toString)).contains("x4/3");
    assertThat(reports.limit()).isEqualTo(4);
    assertThat(reports.maxQueue()).hasValue(2);
    assertThat(reports.maxWait()).contains(Duration.ofMillis(500));

    BudgetUse postgres = f.budgetUse().get(0);
    assertThat(postgres.allocated()).isEqualTo(10);
    assertThat(postgres.overSubscribed()).isFalse();
    assertThat(postgres.describe())
        .isEqualTo("budget 'postgres': checkout 6 + reports 4 = 10, within its capacity of 10");
    assertThat(f.warnings()).isEmpty();
  }

  @Test
  void workedExample_buildsARegistryWhoseCompartmentsDrawOnTheBudget() {
    Compartments built = BulkheadFile.load(EXAMPLE).build();
    BulkheadRegistry registry = built.registry();
    assertThat(registry.all()).extracting(Compartment::name).containsExactly("checkout", "reports");
    Bulkhead reports = registry.bulkhead("reports").orElseThrow();
    assertThat(reports.config().limit()).isEqualTo(4);
    assertThat(reports.config().maxQueue()).hasValue(2);
    assertThat(reports.config().maxWait()).contains(Duration.ofMillis(500));
    assertThat(built.budget("postgres").orElseThrow().allocated()).isEqualTo(10);
    assertThatThrownBy(() -> registry.find("checkout").orElseThrow().setLimit(7))
        .as("the budget is live: no room for a seventh checkout slot")
        .hasMessageContaining("checkout 7 + reports 4 = 11");
  }

  @Test
  void advisor_usesEachCompartmentsHeadroom() {
    BulkheadFile f = BulkheadFile.load(EXAMPLE);
    assertThat(f.advisor().headroom("checkout")).isEqualTo(3.0);
    assertThat(f.advisor().headroom("reports")).isEqualTo(4.0 / 3.0);
    assertThat(f.advisor().headroom("unknown")).isEqualTo(3.0);
  }

  // --- budgets
  // ----------------------------------------------------------------------------------------

  @Test
  void overSubscribedBudget_isReportedWithEveryCompartment_andRefusedByBuild() {
    BulkheadFile f =
        parse(
            String.join(
                "\n",
                "budgets:",
                "  postgres:",
                "    capacity: 10",
                "compartments:",
                "  checkout: {budget: postgres, limit: 6}",
                "  reports: {budget: postgres, limit: 6}",
                "  exports: {budget: postgres, limit: 2}",
                "  cache: {limit: 100}"));
    BudgetUse use = f.budgetUse().get(0);
    assertThat(use.overSubscribed()).isTrue();
    assertThat(use.shares())
        .containsExactly(
            java.util.Map.entry("checkout", 6),
            java.util.Map.entry("reports", 6),
            java.util.Map.entry("exports", 2));
    assertThatThrownBy(f::build)
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "app.yml:2: budgets.postgres: budget 'postgres' is over-subscribed:"
                + " checkout 6 + reports 6 + exports 2 = 14, more than its capacity of 10");
  }

  @Test
  void headroomOverrides_changeTheDerivedLimits() {
    BulkheadFile f = parse("headroom:\n  critical: 2\n" + TWO);
    assertThat(f.compartments().get(0).limit()).isEqualTo(4);
    assertThat(f.headroom(Criticality.OPTIONAL).toString()).isEqualTo("x4/3");
    BulkheadFile own = parse(TWO + "    headroom: 1.5\n");
    assertThat(own.compartments().get(0).limit()).isEqualTo(3);
    assertThat(own.compartments().get(0).headroom().orElseThrow().factor()).isEqualTo(1.5);
  }

  @Test
  void aGivenLimit_isKept_andALimitBelowTheNeedIsWarnedAbout() {
    BulkheadFile f =
        parse(
            String.join(
                "\n",
                "compartments:",
                "  checkout:",
                "    rate: 40/s",
                "    latency: 50ms",
                "    limit: 1",
                "  reports:",
                "    rate: 2/s",
                "    latency: 1.5s",
                "    limit: 6"));
    assertThat(f.compartments().get(0).limitDerived()).isFalse();
    assertThat(f.compartments().get(1).effectiveHeadroom()).hasValue(2.0);
    assertThat(f.warnings())
        .containsExactly(
            "app.yml:5: compartments.checkout.limit: 1 is below the"
                + " need of 2 (40/s x 50ms): it rejects calls even at the expected rate");
  }

  // --- errors: YAML
  // ----------------------------------------------------------------------------------

  @Test
  void malformedYaml_namesTheFileAndLine() {
    failsWith(
            "budgets:\n  postgres: 10\ncompartments:\n  checkout:\n    limit: 6\n   max-queue: 2\n")
        .hasMessageStartingWith("app.yml:6: invalid YAML: ");
    failsWith("budgets: {postgres: 10\ncompartments: {}\n")
        .hasMessageStartingWith("app.yml:")
        .hasMessageContaining("invalid YAML");
    failsWith("compartments:\n  a: {limit: 1}\n\t b: 2\n").hasMessageContaining("invalid YAML");
  }

  @Test
  void emptyOrShapelessFiles_areRefused() {
    failsWith("").hasMessage("app.yml: the file is empty: expected 'budgets' and 'compartments'");
    failsWith("# only a comment\n").hasMessageContaining("the file is empty");
    failsWith("just words")
        .hasMessage(
            "app.yml:1: expected a mapping (indented key: value lines) but"
                + " found the value 'just words'");
    failsWith("budgets:\n  postgres: 10\n")
        .hasMessage(
            "app.yml:1: compartments: missing: the file declares"
                + " no compartments (nor worker-pools, nor datasources)");
    failsWith("compartments:\n  - checkout\n  - reports\n")
        .hasMessage(
            "app.yml:2: compartments: expected a mapping (indented key: value lines) but found a list");
    failsWith("compartments: {}\n")
        .hasMessage("app.yml:1: compartments: is empty: declare at least one" + " compartment");
  }

  // --- errors: keys
  // -------------------------------------------------------------------------------

  @Test
  void unknownKeys_areErrors_withASuggestion() {
    failsWith(TWO.replace("latency:", "latncy:"))
        .hasMessage(
            "app.yml:8: compartments.checkout.latncy: unknown key (did you mean 'latency'?)");
    failsWith(TWO.replace("compartments:", "compartment:"))
        .hasMessage("app.yml:3: compartment: unknown key (did you mean 'compartments'?)");
    failsWith(TWO + "    timeout: 2s\n")
        .hasMessage(
            "app.yml:9: compartments.checkout.timeout: unknown key (expected one of: adaptive,"
                + " budget,"
                + " cpu-bound, criticality, headroom, latency, limit, max-queue, max-wait, paths,"
                + " rate, upstream)");
    failsWith("headroom:\n  critcal: 2\n" + TWO)
        .hasMessage("app.yml:2: headroom.critcal: unknown key (did you mean 'critical'?)");
    failsWith("budgets:\n  postgres: {capacty: 10}\ncompartments: {a: {limit: 1}}\n")
        .hasMessage("app.yml:2: budgets.postgres.capacty: unknown key (did you mean 'capacity'?)");
  }

  @Test
  void duplicateKeys_areErrors() {
    failsWith(TWO + "    rate: 50/s\n")
        .hasMessage("app.yml:9: compartments.checkout.rate: duplicate key (first given on line 7)");
  }

  // --- errors: values
  // ------------------------------------------------------------------------------

  @Test
  void wrongTypes_nameTheKeyAndTheValue() {
    String base = "compartments:\n  a:\n    ";
    failsWith(base + "limit: six\n")
        .hasMessage("app.yml:3: compartments.a.limit: expected a whole number but was 'six'");
    failsWith(base + "limit: 6.5\n")
        .hasMessage("app.yml:3: compartments.a.limit: expected a whole number but was '6.5'");
    failsWith(base + "limit: 0\n")
        .hasMessage("app.yml:3: compartments.a.limit: must be at least 1 but was 0");
    failsWith(base + "limit: -2\n")
        .hasMessage("app.yml:3: compartments.a.limit: must be at least 1 but was -2");
    failsWith(base + "limit: 99999999999\n")
        .hasMessageContaining("must be at least 1 but was 99999999999");
    failsWith(base + "limit: [6]\n")
        .hasMessage("app.yml:3: compartments.a.limit: expected a single value but found a list");
    failsWith(base + "limit:\n").hasMessage("app.yml:3: compartments.a.limit: has no value");
    failsWith(base + "limit: 2\n    max-queue: many\n    max-wait: 1s\n")
        .hasMessage("app.yml:4: compartments.a.max-queue: expected a whole number but was 'many'");
    failsWith(base + "rate: 40\n    latency: 50ms\n    criticality: critical\n")
        .hasMessage(
            "app.yml:3: compartments.a.rate: expected a rate with a unit, like 40/s, 2400/min"
                + " or 3/h, but was '40'");
    failsWith(base + "rate: 0/s\n    latency: 50ms\n    criticality: critical\n")
        .hasMessage("app.yml:3: compartments.a.rate: must be above zero but was '0/s'");
    failsWith(base + "rate: 40/s\n    latency: fast\n    criticality: critical\n")
        .hasMessage(
            "app.yml:4: compartments.a.latency: expected a duration with a unit, like 250ms, 1.5s,"
                + " 5m, 1h or PT30S, but was 'fast'");
    failsWith(base + "rate: 40/s\n    latency: 0ms\n    criticality: critical\n")
        .hasMessage("app.yml:4: compartments.a.latency: must be above zero but was '0ms'");
    failsWith(base + "rate: 40/s\n    latency: 50ms\n    criticality: critcal\n")
        .hasMessage(
            "app.yml:5: compartments.a.criticality: must be critical or optional but was"
                + " 'critcal' (did you mean 'critical'?)");
    failsWith(base + "rate: 40/s\n    latency: 50ms\n    headroom: 0.5\n")
        .hasMessage(
            "app.yml:5: compartments.a.headroom: headroom must be at least 1 (1 = exactly the"
                + " need) but was '0.5'");
    failsWith("budgets:\n  postgres: ten\ncompartments: {a: {limit: 1}}\n")
        .hasMessage("app.yml:2: budgets.postgres: expected a whole number but was 'ten'");
    failsWith("budgets:\n  postgres: {}\ncompartments: {a: {limit: 1}}\n")
        .hasMessage(
            "app.yml:2: budgets.postgres: has no capacity: add capacity (how many connections"
                + " or concurrent calls the resource takes)");
  }

  @Test
  void durations_takeTheCommandLinesGrammar_andTheirBounds() {
    String base = "compartments:\n  a:\n    criticality: critical\n    rate: 2/s\n    latency: ";
    assertThat(parse(base + "PT1.5S\n").compartments().get(0).latency())
        .hasValue(Duration.ofMillis(1500));
    assertThat(parse(base + "1.5s\n").compartments().get(0).limit()).isEqualTo(9);
    failsWith(base + "2562048h\n")
        .hasMessage(
            "app.yml:5: compartments.a.latency: '2562048h' is too"
                + " long: a duration must fit in 9223372036854775807 nanoseconds (about 292 years)");
    failsWith(base + "PT-1S\n")
        .hasMessage("app.yml:5: compartments.a.latency: must not be negative but was 'PT-1S'");
  }

  @Test
  void keysOfTheOldVocabulary_pointToTheirNewNames() {
    String base = "compartments:\n  a:\n    limit: 4\n    ";
    failsWith(base + "queue: 2\n    max-wait: 1s\n")
        .hasMessage("app.yml:4: compartments.a.queue: unknown key (did you mean 'max-queue'?)");
    failsWith(base + "max-queue: 2\n    wait: 1s\n")
        .hasMessage("app.yml:5: compartments.a.wait: unknown key (did you mean 'max-wait'?)");
    failsWith("worker-pools:\n  exports: {limit: 2, queue: 50}\n")
        .hasMessage(
            "app.yml:2: worker-pools.exports.queue: unknown key (did you mean 'max-queue'?)");
  }

  @Test
  void missingOrConflictingValues_sayWhatToAdd() {
    String base = "compartments:\n  a:\n    ";
    failsWith(base + "max-queue: 0\n")
        .hasMessage(
            "app.yml:2: compartments.a: needs a limit, or a rate and a"
                + " latency to derive one from (Little's law: need = rate x latency)");
    failsWith(base + "rate: 40/s\n    criticality: critical\n")
        .hasMessage(
            "app.yml:2: compartments.a: has a"
                + " rate but no latency: Little's law needs both (add latency, how long one call holds its slot,"
                + " like 50ms)");
    failsWith(base + "rate: 40/s\n    latency: 50ms\n")
        .hasMessage(
            "app.yml:2: compartments.a: derives its"
                + " limit from rate and latency but has no criticality: add criticality: critical (headroom x3)"
                + " or optional (x4/3), or a headroom");
    failsWith(base + "limit: 4\n    headroom: 2\n")
        .hasMessageStartingWith(
            "app.yml:4: compartments.a.headroom:" + " give a headroom or a limit, not both");
    failsWith(base + "limit: 4\n    max-queue: 2\n")
        .hasMessage(
            "app.yml:4: compartments.a.max-queue: lets 2"
                + " callers wait but there is no max-wait: add max-wait (how long one may wait, like 100ms,"
                + " or unbounded)");
    failsWith(base + "limit: 4\n    max-queue: unbounded\n")
        .hasMessageContaining("lets any number of callers wait but there is no max-wait");
    CompartmentSpec unbounded =
        parse(base + "limit: 4\n    max-queue: unbounded\n    max-wait: unbounded\n")
            .compartments()
            .get(0);
    assertThat(unbounded.queue())
        .isEqualTo(io.bulkhead.QueueSettings.DEFAULT.withUnboundedQueue().withUnboundedWait());
    failsWith(base + "limit: 4\n    max-wait: 1s\n")
        .hasMessage(
            "app.yml:4: compartments.a.max-wait: has no"
                + " effect without a queue: add max-queue (how many callers may wait), or remove max-wait");
    failsWith("budgets: {postgres: 10}\n" + base + "limit: 4\n    budget: postgre\n")
        .hasMessage(
            "app.yml:5: compartments.a.budget: no budget named 'postgre' (did you mean 'postgres'?)");
    failsWith(base + "limit: 4\n    budget: postgres\n")
        .hasMessage(
            "app.yml:4: compartments.a.budget: no budget named 'postgres' (no budgets are"
                + " declared)");
  }

  // --- worker pools
  // --------------------------------------------------------------------------------

  private static final String WITH_WORKERS =
      String.join(
          "\n",
          "budgets:",
          "  postgres: 10",
          "compartments:",
          "  checkout: {budget: postgres, criticality: critical, rate: 40/s, latency: 50ms}",
          "worker-pools:",
          "  exports:",
          "    budget: postgres",
          "    criticality: optional",
          "    rate: 1/s",
          "    latency: 2s",
          "    max-queue: 20",
          "    max-wait: unbounded",
          "  emails: {limit: 1, max-queue: 100, max-wait: 1m}",
          "");

  @Test
  void workers_areSizedLikeCompartments_drawOnBudgets_andBuildRunningPools() throws Exception {
    BulkheadFile f = parse(WITH_WORKERS);
    CompartmentSpec exports = f.compartments().get(1);
    assertThat(exports.workerPool()).isTrue();
    assertThat(exports.path()).isEqualTo("worker-pools.exports");
    assertThat(exports.need()).hasValue(2.0);
    assertThat(exports.limit()).as("2 x 4/3 = 2.67, rounded up").isEqualTo(3);
    assertThat(exports.maxWait()).as("max-wait: unbounded").isEmpty();
    assertThat(f.budgetUse().get(0).describe())
        .isEqualTo("budget 'postgres': checkout 6 + exports 3 = 9, within its capacity of 10");

    Compartments built = f.build();
    assertThat(built.registry().all())
        .extracting(Compartment::name)
        .containsExactly("checkout", "exports", "emails");
    io.bulkhead.WorkerPool pool = built.workerPool("exports").orElseThrow();
    assertThat(pool.limit()).isEqualTo(3);
    assertThat(built.registry().find("exports").orElseThrow().config().maxQueue()).hasValue(20);
    assertThat(pool.submit(() -> "exported").get(10, java.util.concurrent.TimeUnit.SECONDS))
        .isEqualTo("exported");
    assertThat(built.budget("postgres").orElseThrow().allocated()).isEqualTo(9);
    for (io.bulkhead.WorkerPool p : built.workerPools().values()) {
      assertThat(p.shutdown(Duration.ofSeconds(10))).isEmpty();
    }
    assertThat(built.budget("postgres").orElseThrow().allocated())
        .as("pools gave their share back")
        .isEqualTo(6);
  }

  @Test
  void workers_overSubscribeTheirBudgetLikeAnyCompartment() {
    BulkheadFile f = parse(WITH_WORKERS.replace("max-queue: 20", "max-queue: 20\n    headroom: 3"));
    assertThatThrownBy(f::build)
        .hasMessage(
            "app.yml:2: budgets.postgres: budget 'postgres' is"
                + " over-subscribed: checkout 6 + exports 6 = 12, more than its capacity of 10");
  }

  @Test
  void workers_errors() {
    failsWith(WITH_WORKERS.replace("  emails:", "  checkout:"))
        .hasMessage(
            "app.yml:13: worker-pools.checkout: the name is taken by the compartment on line 4: names"
                + " must be unique, they are the registry's keys");
    failsWith(WITH_WORKERS.replace("max-queue: 20", "max-queue: 20\n    threads: virtaul"))
        .hasMessage(
            "app.yml:12: worker-pools.exports.threads: must be platform or virtual but was 'virtaul'"
                + " (did you mean 'virtual'?)");
    failsWith(WITH_WORKERS.replace("{limit: 1, max-queue: 100, max-wait: 1m}", "{workers: 1}"))
        .hasMessage(
            "app.yml:13: worker-pools.emails.workers: unknown key (expected one of: budget,"
                + " cpu-bound, criticality, headroom, latency, limit, max-queue, max-wait, rate,"
                + " threads)");
    failsWith(WITH_WORKERS.replace("{limit: 1, max-queue: 100, max-wait: 1m}", "{max-queue: 100}"))
        .hasMessage(
            "app.yml:13: worker-pools.emails: needs a limit, or a rate and a latency to derive one"
                + " from (Little's law: need = rate x latency)");
    failsWith(WITH_WORKERS.replace("{limit: 1, max-queue: 100, max-wait: 1m}", "{limit: 0}"))
        .hasMessage("app.yml:13: worker-pools.emails.limit: must be at least 1 but was 0");
  }

  @Test
  void virtualThreadWorkers_buildOnJava21_orFailWithTheirLineBefore() throws Exception {
    BulkheadFile f =
        parse(WITH_WORKERS.replace("max-queue: 20", "max-queue: 20\n    threads: virtual"));
    assertThat(f.compartments().get(1).virtualThreads()).isTrue();
    if (Runtime.version().feature() >= 21) {
      Compartments built = f.build();
      assertThat(built.workerPool("exports").orElseThrow().virtualThreads()).isTrue();
      for (io.bulkhead.WorkerPool p : built.workerPools().values()) {
        p.shutdown(Duration.ZERO);
      }
    } else {
      assertThatThrownBy(f::build)
          .isInstanceOf(ConfigException.class)
          .hasMessageStartingWith(
              "app.yml:6: worker-pools.exports: worker pool 'exports' asks for virtual"
                  + " threads, which need Java 21 or later");
    }
  }

  @Test
  void load_namesAMissingFile(@TempDir Path dir) throws Exception {
    Path missing = dir.resolve("nope.yml");
    assertThatThrownBy(() -> BulkheadFile.load(missing))
        .isInstanceOf(ConfigException.class)
        .hasMessage(missing + ": no such file");
    assertThatThrownBy(() -> BulkheadFile.load(dir))
        .isInstanceOf(ConfigException.class)
        .hasMessage(dir + ": is a directory, not a file");
    Path bad = dir.resolve("bad.yml");
    Files.write(bad, new byte[] {'a', ':', ' ', (byte) 0xC3, (byte) 0x28});
    assertThatThrownBy(() -> BulkheadFile.load(bad)).hasMessage(bad + ": not UTF-8 text");
  }

  @Test
  void configException_exposesItsParts() {
    ConfigException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ConfigException.class, () -> parse(TWO.replace("latency:", "latncy:")));
    assertThat(e.file()).isEqualTo("app.yml");
    assertThat(e.line()).hasValue(8);
    assertThat(e.key()).contains("compartments.checkout.latncy");
    assertThat(e.problem()).isEqualTo("unknown key (did you mean 'latency'?)");
  }

  @Test
  void cpuBound_isTrueOrFalse_inTheBulkheadFile() {
    BulkheadFile f =
        BulkheadFile.parse(
            "compartments:\n  render: {limit: 2, cpu-bound: true}\n"
                + "  lookup: {limit: 2}\nworker-pools:\n  zip: {limit: 1, cpu-bound: false}\n",
            "f.yml");
    assertThat(f.compartments())
        .extracting(CompartmentSpec::cpuBound)
        .containsExactly(true, false, false);
    Throwable yes =
        catchThrowable(
            () ->
                BulkheadFile.parse(
                    "compartments:\n  render: {limit: 2, cpu-bound: yes}\n", "f.yml"));
    assertThat(yes)
        .isInstanceOf(ConfigException.class)
        .hasMessage("f.yml:2: compartments.render.cpu-bound: expected true or false but was 'yes'");
  }

  // --- adaptive limits

  @Test
  void adaptive_isReadWithTheSameKeys_andBuildsAnAdaptiveCompartment() {
    BulkheadFile f =
        parse(
            "compartments:\n  llm:\n    limit: 10\n"
                + "    adaptive: {controller: aimd, min: 2, max: 20, interval: 500ms}\n");
    AdaptiveLimit a = f.compartments().get(0).adaptive().orElseThrow();
    assertThat(a.controller().name()).isEqualTo("aimd");
    assertThat(a.min()).isEqualTo(2);
    assertThat(a.max()).isEqualTo(20);
    assertThat(a.interval()).isEqualTo(Duration.ofMillis(500));
    AdaptiveLimit.Status s =
        f.build().registry().find("llm").orElseThrow().adaptive().orElseThrow();
    assertThat(s.controller()).isEqualTo("aimd");
    assertThat(s.limit()).isEqualTo(10);
  }

  @Test
  void adaptive_fromProperties_takesTheSameKeys() {
    BulkheadFile f =
        BulkheadFile.fromMap(
            java.util.Map.of(
                "compartments",
                java.util.Map.of(
                    "llm",
                    java.util.Map.of(
                        "limit",
                        "10",
                        "adaptive",
                        java.util.Map.of("controller", "gradient", "min", "2", "max", "20")))),
            "props");
    AdaptiveLimit a = f.compartments().get(0).adaptive().orElseThrow();
    assertThat(a.controller().name()).isEqualTo("gradient");
    assertThat(a.max()).isEqualTo(20);
    assertThat(a.interval()).isEqualTo(AdaptiveLimit.DEFAULT_INTERVAL);
  }

  @Test
  void adaptive_badValues_areNamed() {
    failsWith(
            "compartments:\n  llm:\n    limit: 10\n    adaptive: {controller: pid, min: 1, max: 20}\n")
        .hasMessageContaining("compartments.llm.adaptive.controller")
        .hasMessageContaining("must be gradient or aimd but was 'pid'");
    failsWith("compartments:\n  llm:\n    limit: 10\n    adaptive: {min: 12, max: 20}\n")
        .hasMessageContaining("compartments.llm.adaptive")
        .hasMessageContaining(
            "the limit 10 is where the adaptive limit starts and must lie within");
    failsWith("compartments:\n  llm:\n    limit: 10\n    adaptive: {max: 20}\n")
        .hasMessageContaining("needs a min");
    failsWith("compartments:\n  llm:\n    limit: 10\n    adaptive: {min: 5, max: 4}\n")
        .hasMessageContaining("compartments.llm.adaptive.max")
        .hasMessageContaining("must be at least min (5) but was 4");
  }
}
