package io.bulkhead.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Sizing;
import io.bulkhead.config.internal.DidYouMean;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class QuantitiesTest {

  @Test
  void durations_parseAndFormat() {
    assertThat(Quantities.parseDuration("50ms")).isEqualTo(Duration.ofMillis(50));
    assertThat(Quantities.parseDuration("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(Quantities.parseDuration(" 30 s ")).isEqualTo(Duration.ofSeconds(30));
    assertThat(Quantities.parseDuration("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(Quantities.parseDuration("2min")).isEqualTo(Duration.ofMinutes(2));
    assertThat(Quantities.parseDuration("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(Quantities.parseDuration("250us")).isEqualTo(Duration.ofNanos(250_000));
    assertThat(Quantities.parseDuration("7ns")).isEqualTo(Duration.ofNanos(7));
    assertThatThrownBy(() -> Quantities.parseDuration("50"))
        .hasMessageContaining("with a unit")
        .hasMessageContaining("'50'");
    assertThatThrownBy(() -> Quantities.parseDuration("-5ms")).hasMessageContaining("'-5ms'");
    assertThatThrownBy(() -> Quantities.parseDuration("99999999999h"))
        .hasMessageContaining("too long");
    assertThatThrownBy(() -> Quantities.parseDuration("soon"))
        .hasMessage(
            "expected a duration with a unit, like 250ms, 1.5s, 5m, 1h or PT30S, but was 'soon'");

    assertThat(Quantities.formatDuration(Duration.ofMillis(50))).isEqualTo("50ms");
    assertThat(Quantities.formatDuration(Duration.ofMillis(1500))).isEqualTo("1.5s");
    assertThat(Quantities.formatDuration(Duration.ofSeconds(30))).isEqualTo("30s");
    assertThat(Quantities.formatDuration(Duration.ofSeconds(90))).isEqualTo("1m30s");
    assertThat(Quantities.formatDuration(Duration.ofMinutes(2))).isEqualTo("2m");
    assertThat(Quantities.formatDuration(Duration.ofHours(3))).isEqualTo("3h");
    assertThat(Quantities.formatDuration(Duration.ofNanos(1_250_000))).isEqualTo("1.25ms");
    assertThat(Quantities.formatDuration(Duration.ofNanos(850_000))).isEqualTo("850µs");
  }

  @Test
  void durations_readSeveralPartsThatAddUp_asFormatWritesThem() {
    assertThat(Quantities.parseDuration("1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(Quantities.parseDuration("1h 30m")).isEqualTo(Duration.ofMinutes(90));
    assertThat(Quantities.parseDuration("2m5.25s")).isEqualTo(Duration.ofMillis(125_250));
    assertThat(Quantities.parseDuration("850µs")).isEqualTo(Duration.ofNanos(850_000));
    assertThatThrownBy(() -> Quantities.parseDuration("1m30")).hasMessageContaining("'1m30'");
    assertThatThrownBy(() -> Quantities.parseDuration("5mins")).hasMessageContaining("'5mins'");
    assertThatThrownBy(() -> Quantities.parseDuration("2562047h60m"))
        .hasMessageStartingWith("'2562047h60m' is too long");
  }

  @Property(tries = 500)
  void durations_formattedAreReadBack_exactToTheMillisecondAndNeverLonger(
      @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long nanos) {
    Duration d = Duration.ofNanos(nanos);
    Duration back = Quantities.parseDuration(Quantities.formatDuration(d));
    assertThat(back).isLessThanOrEqualTo(d);
    assertThat(d.minus(back)).isLessThan(Duration.ofMillis(1));
    Duration millis = Duration.ofMillis(nanos / 1_000_000);
    assertThat(Quantities.parseDuration(Quantities.formatDuration(millis))).isEqualTo(millis);
  }

  @Test
  void durations_readIso8601AsWell_withTheSameBounds() {
    assertThat(Quantities.parseDuration("PT30S")).isEqualTo(Duration.ofSeconds(30));
    assertThat(Quantities.parseDuration("pt1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(Quantities.parseDuration(" PT0.25S ")).isEqualTo(Duration.ofMillis(250));
    assertThatThrownBy(() -> Quantities.parseDuration("PT-5S"))
        .hasMessage("must not be negative but was 'PT-5S'");
    assertThatThrownBy(() -> Quantities.parseDuration("-PT5S"))
        .hasMessage("must not be negative but was '-PT5S'");
    assertThatThrownBy(() -> Quantities.parseDuration("PT30"))
        .hasMessageContaining("like 250ms, 1.5s, 5m, 1h or PT30S")
        .hasMessageContaining("'PT30'");
    assertThatThrownBy(() -> Quantities.parseDuration("PT2562048H"))
        .hasMessageStartingWith("'PT2562048H' is too long: a duration must fit in");
    assertThat(Quantities.parseDuration("PT2562047H")).isEqualTo(Duration.ofHours(2_562_047));
    assertThatThrownBy(() -> Quantities.parseDuration("2562048h"))
        .hasMessageStartingWith("'2562048h' is too long");
  }

  @Test
  void rates_parseAndFormat() {
    assertThat(Quantities.parseRate("40/s")).isEqualTo(40.0);
    assertThat(Quantities.parseRate("2400 / min")).isEqualTo(40.0);
    assertThat(Quantities.parseRate("36/h")).isEqualTo(0.01);
    assertThat(Quantities.parseRate("0.5/s")).isEqualTo(0.5);
    assertThatThrownBy(() -> Quantities.parseRate("40")).hasMessageContaining("like 40/s");
    assertThatThrownBy(() -> Quantities.parseRate("40/day")).hasMessageContaining("'40/day'");
    assertThat(Quantities.formatRate(40)).isEqualTo("40/s");
    assertThat(Quantities.formatRate(0.5)).isEqualTo("0.5/s");
    assertThat(Quantities.formatNumber(4.0 / 3.0)).isEqualTo("1.33");
    assertThat(Quantities.formatNumber(12.345)).isEqualTo("12.3");
    assertThat(Quantities.formatNumber(0.004)).isEqualTo("0.0040");
  }

  @Test
  void headroom_parsesFactorsAndFractions() {
    assertThat(Headroom.parse("3").factor()).isEqualTo(3.0);
    assertThat(Headroom.parse("x3").toString()).isEqualTo("x3");
    assertThat(Headroom.parse("4/3").factor()).isEqualTo(4.0 / 3.0);
    assertThat(Headroom.parse("4/3").toString()).isEqualTo("x4/3");
    assertThat(Headroom.parse("4/3").limitFor(3)).isEqualTo(4);
    assertThat(Headroom.parse("1.34").limitFor(3)).isEqualTo(5);
    assertThat(Headroom.of(1.5).toString()).isEqualTo("x1.5");
    assertThatThrownBy(() -> Headroom.parse("lots")).hasMessageContaining("like 3, 1.5 or 4/3");
    assertThatThrownBy(() -> Headroom.parse("1/0")).hasMessageContaining("divides by zero");
    assertThatThrownBy(() -> Headroom.parse("2/3")).hasMessageContaining("at least 1");
  }

  @Test
  void criticalityDefaults_areSizingsHeadrooms() {
    assertThat(Criticality.CRITICAL.defaultHeadroom().factor()).isEqualTo(Sizing.CRITICAL_HEADROOM);
    assertThat(Criticality.OPTIONAL.defaultHeadroom().factor()).isEqualTo(Sizing.OPTIONAL_HEADROOM);
    assertThat(Criticality.OPTIONAL.key()).isEqualTo("optional");
  }

  @Test
  void didYouMean_suggestsOnlyCloseWords() {
    List<String> keys =
        List.of("limit", "max-queue", "max-wait", "budget", "criticality", "rate", "latency");
    assertThat(DidYouMean.closest("latncy", keys)).contains("latency");
    assertThat(DidYouMean.closest("ltaency", keys)).as("a swap is one edit").contains("latency");
    assertThat(DidYouMean.closest("Limit", keys)).contains("limit");
    assertThat(DidYouMean.closest("max-queu", keys)).contains("max-queue");
    assertThat(DidYouMean.closest("critcality", keys)).contains("criticality");
    assertThat(DidYouMean.closest("timeout", keys)).isEmpty();
    assertThat(DidYouMean.closest("x", keys)).isEmpty();
    assertThat(DidYouMean.distance("kitten", "sitting")).isEqualTo(3);
  }
}
