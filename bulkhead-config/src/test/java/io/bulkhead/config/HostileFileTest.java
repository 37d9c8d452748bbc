package io.bulkhead.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bulkhead.config.internal.DidYouMean;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files written to break the loader (the config half of issue 14's D5–D8, D10, D11): each is
 * refused with one {@link ConfigException} line naming the file, the line and the key, in bounded
 * memory and time, and never with an {@link Error}.
 */
class HostileFileTest {

  /**
   * Far longer than any of these needs on a loaded machine (each reads at most a MiB); only there
   * so that a regression to reading a 2 GB file whole fails instead of hanging the build.
   */
  private static final Duration NO_HANG = Duration.ofMinutes(1);

  /**
   * The most a message may grow to from echoing what the file holds: a line a terminal can show.
   */
  private static final int LONGEST_MESSAGE = 400;

  private static ConfigException refused(String yaml) {
    Throwable t =
        org.assertj.core.api.Assertions.catchThrowable(() -> BulkheadFile.parse(yaml, "app.yml"));
    assertThat(t).isInstanceOf(ConfigException.class);
    assertOneLine(t.getMessage());
    return (ConfigException) t;
  }

  private static void assertOneLine(String message) {
    assertThat(message).hasSizeLessThan(LONGEST_MESSAGE);
    message
        .codePoints()
        .forEach(
            c ->
                assertThat(Character.isISOControl(c))
                    .as("control character U+%04X in %s", c, message)
                    .isFalse());
  }

  // --- D5: a name of 40,000 characters
  // --------------------------------------------------------------

  @Test
  void aHugeUnknownBudgetName_isRefusedInBoundedMemory_withoutEchoingIt() {
    String declared = "a".repeat(40_000);
    String referenced = "b".repeat(40_000);
    // An explicit key ("? name"): YAML allows a plain key of at most 1,024 characters.
    ConfigException e =
        refused(
            "budgets:\n  ? "
                + declared
                + "\n  : 10\ncompartments:\n  c: {budget: "
                + referenced
                + ", limit: 1}\n");
    assertThat(e.getMessage()).startsWith("app.yml:2: budgets.aaaa").contains("characters");
  }

  @Test
  void aHugeReferenceToAShortBudget_getsNoSuggestion_andIsCutShort() {
    ConfigException e =
        refused(
            "budgets:\n  postgres: 10\ncompartments:\n  c: {budget: "
                + "p".repeat(40_000)
                + ", limit: 1}\n");
    assertThat(e.getMessage())
        .startsWith("app.yml:4: compartments.c.budget: no budget named 'ppp")
        .contains("…");
  }

  @Test
  void aHugeUnknownKey_isCutShort() {
    ConfigException e =
        refused("compartments:\n  c:\n    limit: 1\n    ? " + "x".repeat(40_000) + "\n    : 1\n");
    assertThat(e.getMessage()).startsWith("app.yml:4: compartments.c.xxx").contains("unknown key");
  }

  @Test
  void didYouMean_skipsWordsTooFarApartInLength_inConstantMemory() {
    String huge = "q".repeat(1_000_000);
    assertThat(DidYouMean.closest(huge, java.util.List.of(huge + "z"))).isEmpty();
    assertThat(DidYouMean.distance("budgte", "budget")).isEqualTo(1);
    assertThat(DidYouMean.distance("", "abc")).isEqualTo(3);
  }

  // --- D6: nesting
  // ----------------------------------------------------------------------------------

  @Test
  void flowNesting200000Deep_isRefusedWithItsLine() {
    ConfigException e = refused("compartments:\n  c: " + "[".repeat(200_000) + "\n");
    assertThat(e.getMessage()).startsWith("app.yml:2: ").contains("nested");
  }

  @Test
  void blockMappingsNested1400Deep_areRefusedWithTheirLine() {
    StringBuilder yaml = new StringBuilder();
    for (int i = 0; i < 1_400; i++) {
      yaml.append(" ".repeat(i)).append("k").append(i).append(":\n");
    }
    ConfigException e = refused(yaml.toString());
    assertThat(e.getMessage()).startsWith("app.yml:").contains("nested");
    assertThat(e.line()).isPresent();
  }

  // --- D7: huge and endless files
  // ------------------------------------------------------------------

  @Test
  void aSparseFileOf2GB_isRefusedBeforeItIsRead(@TempDir Path dir) throws Exception {
    Path huge = dir.resolve("huge.yml");
    try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
      f.setLength(2_200_000_000L);
    }
    ConfigException e =
        assertTimeoutPreemptively(
            NO_HANG,
            () ->
                (ConfigException)
                    org.assertj.core.api.Assertions.catchThrowable(() -> BulkheadFile.load(huge)));
    assertThat(e).isNotNull();
    assertThat(e.getMessage())
        .isEqualTo(
            huge
                + ": is larger than "
                + BulkheadFile.MAX_FILE_BYTES
                + " bytes (1 MiB): a configuration file is a few kilobytes");
  }

  @Test
  void devZero_isRefusedAfterTheCap() {
    Path zero = Path.of("/dev/zero");
    assumeTrue(Files.isReadable(zero), "a Linux /dev/zero");
    ConfigException e =
        assertTimeoutPreemptively(
            NO_HANG,
            () ->
                (ConfigException)
                    org.assertj.core.api.Assertions.catchThrowable(() -> BulkheadFile.load(zero)));
    assertThat(e).isNotNull();
    assertThat(e.getMessage()).startsWith("/dev/zero: is larger than");
  }

  @Test
  void aTextOverTheCap_isRefusedByParseToo() {
    String yaml =
        "# " + "x".repeat(BulkheadFile.MAX_FILE_BYTES) + "\ncompartments: {c: {limit: 1}}\n";
    ConfigException e = refused(yaml);
    assertThat(e.getMessage()).startsWith("app.yml: is larger than");
  }

  // --- D8: check applies the builders' bounds
  // ------------------------------------------------------

  @Test
  void aQueueTheBuilderRefuses_isRefusedByTheLoader_withItsLineAndKey() {
    ConfigException e =
        refused(
            "compartments:\n  c:\n    limit: 1\n    max-queue: 2000000000\n"
                + "    max-wait: 1s\n");
    assertThat(e.getMessage())
        .startsWith("app.yml:4: compartments.c.max-queue: ")
        .contains("16777215");
  }

  @Test
  void aWorkerQueueTheBuilderRefuses_isRefusedByTheLoader() {
    ConfigException e = refused("worker-pools:\n  w:\n    limit: 1\n    max-queue: 2000000000\n");
    assertThat(e.getMessage())
        .startsWith("app.yml:4: worker-pools.w.max-queue: ")
        .contains("16777215");
  }

  // --- D10: control characters and escapes
  // ---------------------------------------------------------

  @Test
  void aKeyWithANewline_givesOneLine() {
    ConfigException e = refused("compartments:\n  c:\n    limit: 1\n    \"li\\nmit\": 2\n");
    assertThat(e.getMessage()).startsWith("app.yml:4: compartments.c.li\\u000Amit: unknown key");
  }

  @Test
  void terminalEscapesInNamesAndValues_areShownEscaped() {
    ConfigException value = refused("compartments:\n  c: {limit: \"\\e[2J\\e]0;pwned\\a\"}\n");
    assertThat(value.getMessage()).contains("'\\u001B[2J\\u001B]0;pwned\\u0007'");
    ConfigException name = refused("compartments:\n  \"\\e[31mred\": {limit: 1}\n");
    assertThat(name.getMessage()).startsWith("app.yml:2: compartments.\\u001B[31mred: ");
    ConfigException c1 = refused("compartments:\n  \"\\x9b31m\": {limit: 1}\n");
    assertThat(c1.getMessage()).contains("\\u009B31m");
  }

  // --- D11: sums beyond int
  // ------------------------------------------------------------------------

  @Test
  void twoCompartmentsOfIntMax_overSubscribeABudgetOfIntMax() {
    int max = Integer.MAX_VALUE;
    BulkheadFile f =
        BulkheadFile.parse(
            "budgets:\n  b: "
                + max
                + "\ncompartments:\n  x: {budget: b, limit: "
                + max
                + "}\n  y: {budget: b, limit: "
                + max
                + "}\n",
            "app.yml");
    assertThat(f.budgetUse().get(0).allocated()).isEqualTo(2L * max);
    assertThat(f.budgetUse().get(0).overSubscribed()).isTrue();
    assertThatThrownBy(f::build)
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("= 4294967294");
  }
}
