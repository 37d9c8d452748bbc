package io.bulkhead.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Budget;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadBuilder;
import io.bulkhead.WorkerPool;
import io.bulkhead.WorkerPoolBuilder;
import io.bulkhead.config.internal.Printable;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Property-based fuzzing of the loader and the builders behind it (issue 14, deliver 4): random
 * structures, types, sizes, nesting, Unicode and control characters, numbers at the edges of {@code
 * int}, {@code long} and {@link Duration}. The loader answers with a {@link ConfigException} of one
 * line or a file that {@link BulkheadFile#build()} builds; a builder builds or refuses with an
 * {@link IllegalArgumentException} or {@link NullPointerException} naming its field. Try counts are
 * set so the whole class runs in seconds on a loaded machine.
 */
class LoaderFuzzTest {

  private static final List<String> KEYS =
      List.of(
          "headroom",
          "budgets",
          "compartments",
          "worker-pools",
          "defaults",
          "datasources",
          "pools",
          "url",
          "paths",
          "upstream",
          "connection-timeout",
          "unbounded",
          "critical",
          "optional",
          "capacity",
          "limit",
          "max-queue",
          "max-wait",
          "budget",
          "criticality",
          "rate",
          "latency",
          "threads",
          "workers",
          "queue",
          "wait",
          "b",
          "c",
          "postgres");

  private static final List<String> EDGE_SCALARS =
      List.of(
          "0",
          "1",
          "-1",
          "2147483647",
          "2147483648",
          "-2147483648",
          "9223372036854775807",
          "9223372036854775808",
          "16777215",
          "16777216",
          "99999999999999999999999",
          "1e308",
          "NaN",
          ".inf",
          "-.inf",
          "0x10",
          "1_000",
          "+5",
          "1.5",
          "0ns",
          "1ns",
          "9223372036854775807ns",
          "9223372036854775808ns",
          "106751d",
          "2562047h",
          "2562048h",
          "PT0S",
          "PT-1S",
          "PT2562047H",
          "PT2562048H",
          "PT999999999H",
          "PT2000000000000000H",
          "P106751DT23H47M16.854775807S",
          "0.0000000001ns",
          "1.5s",
          "40/s",
          "0/s",
          "1e400/s",
          "3/h",
          "4/3",
          "1/0",
          "x3",
          "0.5",
          "critical",
          "optional",
          "virtual",
          "platform",
          "~",
          "null",
          "true",
          "\"\"",
          "''",
          "\"\\e[31m\"",
          "\"a\\nb\"",
          "\"\\x9b\"",
          "\"\\u202e\"",
          "\"\\ud800\"",
          "*a",
          "&a x",
          "!!binary AAAA",
          "!!map {}",
          "{",
          "[",
          "]",
          "}",
          "? ",
          ": ",
          "- ",
          "#",
          "|",
          ">");

  // --- the loader
  // ----------------------------------------------------------------------------------

  @Property(tries = 400)
  void anyStructure_isLoadedOrRefusedWithOneLine(@ForAll("documents") String yaml) {
    checkLoader(yaml);
  }

  @Property(tries = 400)
  void anyText_isLoadedOrRefusedWithOneLine(@ForAll("texts") String yaml) {
    checkLoader(yaml);
  }

  @Property(tries = 60)
  void deepOrWideStructures_areRefusedWithOneLine(@ForAll("deep") String yaml) {
    checkLoader(yaml);
  }

  /** Refused with one line, or loaded; and a loaded file whose budgets hold builds. */
  static void checkLoader(String yaml) {
    BulkheadFile file;
    try {
      file = BulkheadFile.parse(yaml, "fuzz.yml");
    } catch (ConfigException e) {
      assertOneLine(e.getMessage());
      return;
    }
    CheckTable.assertRenders(file);
    boolean holds = file.budgetUse().stream().noneMatch(BudgetUse::overSubscribed);
    try {
      Compartments built = file.build();
      assertThat(holds).as("build() refuses only over-subscribed budgets").isTrue();
      for (WorkerPool pool : built.workerPools().values()) {
        pool.shutdown(Duration.ZERO);
      }
    } catch (ConfigException e) {
      assertOneLine(e.getMessage());
      // Over-subscription, or virtual threads on a Java release without them: nothing else.
      assertThat(!holds || e.getMessage().contains("virtual")).as(e.getMessage()).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static void assertOneLine(String message) {
    assertThat(message).hasSizeLessThan(600);
    message
        .codePoints()
        .forEach(c -> assertThat(Printable.unsafe(c)).as("U+%04X in %s", c, message).isFalse());
  }

  @Provide
  Arbitrary<String> documents() {
    Arbitrary<String> scalar =
        Arbitraries.oneOf(
            Arbitraries.of(EDGE_SCALARS),
            Arbitraries.of(KEYS),
            Arbitraries.integers().map(String::valueOf),
            Arbitraries.longs().map(String::valueOf),
            Arbitraries.strings().all().ofMaxLength(12).map(s -> "\"" + escapeForYaml(s) + "\""));
    Arbitrary<String> key =
        Arbitraries.oneOf(
            Arbitraries.of(KEYS),
            Arbitraries.strings().all().ofMaxLength(8).map(s -> "\"" + escapeForYaml(s) + "\""));
    Arbitrary<String> entry = Combinators.combine(key, scalar).as((k, v) -> k + ": " + v);
    Arbitrary<String> flowMap =
        entry.list().ofMaxSize(4).map(l -> "{" + String.join(", ", l) + "}");
    Arbitrary<String> value =
        Arbitraries.oneOf(
            scalar, flowMap, scalar.list().ofMaxSize(3).map(l -> "[" + String.join(", ", l) + "]"));
    Arbitrary<String> name =
        Arbitraries.oneOf(
            Arbitraries.of("c", "d", "b", "postgres"),
            Arbitraries.strings().all().ofMaxLength(6).map(s -> "\"" + escapeForYaml(s) + "\""));
    Arbitrary<String> field =
        Combinators.combine(Arbitraries.of(KEYS), value).as((k, v) -> "    " + k + ": " + v);
    Arbitrary<String> compartment =
        Combinators.combine(name, field.list().ofMaxSize(6))
            .as((n, fs) -> "  " + n + ":\n" + String.join("\n", fs));
    Arbitrary<String> section =
        Combinators.combine(Arbitraries.of(KEYS), compartment.list().ofMaxSize(4))
            .as((s, cs) -> s + ":\n" + String.join("\n", cs));
    return section.list().ofMaxSize(4).map(l -> String.join("\n", l) + "\n");
  }

  @Provide
  Arbitrary<String> texts() {
    return Arbitraries.oneOf(
        Arbitraries.strings().all().ofMaxLength(200),
        Arbitraries.strings().withChars("{}[]:,-?&*!|>'\"#%@` \n\t\\abc019").ofMaxLength(200));
  }

  @Provide
  Arbitrary<String> deep() {
    Arbitrary<Integer> depth = Arbitraries.integers().between(1, 5_000);
    return Arbitraries.oneOf(
        depth.map(d -> "compartments:\n  c: " + "[".repeat(d) + "]".repeat(d) + "\n"),
        depth.map(d -> "compartments:\n  c: " + "{a: ".repeat(d) + "1" + "}".repeat(d) + "\n"),
        depth.map(
            d -> {
              StringBuilder sb = new StringBuilder();
              for (int i = 0; i < Math.min(d, 400); i++) {
                sb.append(" ".repeat(i)).append("k").append(i).append(":\n");
              }
              return sb.toString();
            }),
        depth.map(d -> "compartments:\n" + "  c%d: {limit: 1}\n".repeat(d).replace("%d", "")),
        depth.map(d -> "compartments:\n  ? " + "n".repeat(d * 20) + "\n  : {limit: 1}\n"));
  }

  private static String escapeForYaml(String s) {
    StringBuilder sb = new StringBuilder();
    s.codePoints()
        .forEach(
            c -> {
              if (c == '"' || c == '\\') {
                sb.append('\\').appendCodePoint(c);
              } else if (c < 0x20
                  || (c >= 0x7f && c <= 0x9f)
                  || (c >= 0xd800 && c <= 0xdfff)
                  || c == 0xfeff
                  || c >= 0xfffe && c <= 0xffff) {
                sb.append(String.format("\\u%04x", c));
              } else {
                sb.appendCodePoint(c);
              }
            });
    return sb.toString();
  }

  // --- the builders
  // ---------------------------------------------------------------------------------

  @Provide
  Arbitrary<Integer> edgeInts() {
    return Arbitraries.oneOf(
        Arbitraries.of(
            Integer.MIN_VALUE,
            -1,
            0,
            1,
            2,
            16_777_215,
            16_777_216,
            Integer.MAX_VALUE - 1,
            Integer.MAX_VALUE),
        Arbitraries.integers());
  }

  @Provide
  Arbitrary<Duration> edgeDurations() {
    return Arbitraries.oneOf(
        Arbitraries.of(
            Duration.ZERO,
            Duration.ofNanos(1),
            Duration.ofNanos(-1),
            Duration.ofNanos(Long.MAX_VALUE),
            Duration.ofNanos(Long.MAX_VALUE).plusNanos(1),
            Duration.ofNanos(Long.MIN_VALUE),
            Duration.ofSeconds(Long.MAX_VALUE, 999_999_999),
            Duration.ofSeconds(Long.MIN_VALUE),
            Duration.ofDays(1)),
        Arbitraries.longs().map(Duration::ofNanos),
        Arbitraries.longs().map(Duration::ofSeconds));
  }

  @Property(tries = 300)
  void bulkheadBuilder_buildsOrNamesTheField(
      @ForAll("edgeInts") int limit,
      @ForAll("edgeInts") int maxQueue,
      @ForAll("edgeDurations") Duration maxWait,
      @ForAll("edgeInts") int capacity) {
    try {
      Budget budget = Budget.of("b", capacity);
      BulkheadBuilder b = Bulkhead.builder("x");
      refusedNaming("limit", () -> b.limit(limit));
      refusedNaming("maxQueue", () -> b.maxQueue(maxQueue));
      refusedNaming("maxWait", () -> b.maxWait(maxWait));
      refusedNaming("", () -> b.budget(budget).build());
      refusedNaming(
          "", () -> Bulkhead.builder("y").limit(Math.max(1, limit)).budget(budget).build());
    } catch (IllegalArgumentException e) {
      assertThat(e).hasMessageContaining("capacity");
    }
  }

  @Property(tries = 200)
  void workerPoolBuilder_buildsOrNamesTheField(
      @ForAll("edgeInts") int limit,
      @ForAll("edgeInts") int maxQueue,
      @ForAll("edgeDurations") Duration maxWait)
      throws Exception {
    WorkerPoolBuilder b = WorkerPool.builder("w");
    refusedNaming("limit", () -> b.limit(limit));
    refusedNaming("maxQueue", () -> b.maxQueue(maxQueue));
    refusedNaming("maxWait", () -> b.maxWait(maxWait));
    WorkerPool[] built = new WorkerPool[1];
    refusedNamingAny(List.of("limit", "maxWait"), () -> built[0] = b.build());
    if (built[0] != null) {
      built[0].shutdown(Duration.ZERO);
    }
  }

  @Property(tries = 200)
  void aLoadedCompartmentOfEdgeNumbers_buildsOrIsRefusedWithOneLine(
      @ForAll("edgeInts") int limit,
      @ForAll("edgeInts") int maxQueue,
      @ForAll("edgeDurations") Duration maxWait,
      @ForAll("edgeInts") int capacity,
      @ForAll boolean pool) {
    String wait =
        maxWait.isNegative()
            ? maxWait.toString()
            : Quantities.formatDuration(
                maxWait.compareTo(Duration.ofNanos(Long.MAX_VALUE)) > 0
                    ? Duration.ofNanos(Long.MAX_VALUE)
                    : maxWait);
    checkLoader(
        "budgets: {b: "
            + capacity
            + "}\n"
            + (pool ? "worker-pools" : "compartments")
            + ":\n  x:\n"
            + "    budget: b\n    limit: "
            + limit
            + "\n    max-queue: "
            + maxQueue
            + "\n    max-wait: "
            + wait
            + "\n");
  }

  /**
   * Runs {@code setter}; if it refuses, the refusal is an IllegalArgumentException naming {@code
   * field}.
   */
  private static void refusedNaming(String field, ThrowingRunnable setter) {
    try {
      setter.run();
    } catch (IllegalArgumentException | NullPointerException e) {
      assertThat(e.getMessage()).contains(field);
      assertOneLine(e.getMessage());
    } catch (Exception e) {
      throw new AssertionError("unexpected " + e, e);
    }
  }

  private static void refusedNamingAny(List<String> fields, ThrowingRunnable setter) {
    try {
      setter.run();
    } catch (IllegalArgumentException e) {
      assertThat(e.getMessage()).containsAnyOf(fields.toArray(new String[0]));
      assertOneLine(e.getMessage());
    } catch (Exception e) {
      throw new AssertionError("unexpected " + e, e);
    }
  }

  @FunctionalInterface
  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  /**
   * Renders the pieces check prints, so a loaded file's numbers are exercised the way check uses
   * them.
   */
  static final class CheckTable {
    static void assertRenders(BulkheadFile file) {
      for (CompartmentSpec c : file.compartments()) {
        assertOneLine(c.name());
        c.need();
        c.effectiveHeadroom();
        c.latency().map(Quantities::formatDuration);
        c.rate().ifPresent(Quantities::formatRate);
      }
      for (BudgetUse use : file.budgetUse()) {
        assertOneLine(use.describe());
      }
      file.advisor();
    }
  }
}
