package io.bulkhead.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Sizing;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class QuantitiesTest {

  @Test
  void durations_parseAndFormat() {
    assertThat(Quantities.duration("50ms")).isEqualTo(Duration.ofMillis(50));
    assertThat(Quantities.duration("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(Quantities.duration(" 30 s ")).isEqualTo(Duration.ofSeconds(30));
    assertThat(Quantities.duration("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(Quantities.duration("2min")).isEqualTo(Duration.ofMinutes(2));
    assertThat(Quantities.duration("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(Quantities.duration("250us")).isEqualTo(Duration.ofNanos(250_000));
    assertThat(Quantities.duration("7ns")).isEqualTo(Duration.ofNanos(7));
    assertThatThrownBy(() -> Quantities.duration("50")).hasMessageContaining("with a unit").hasMessageContaining("'50'");
    assertThatThrownBy(() -> Quantities.duration("-5ms")).hasMessageContaining("'-5ms'");
    assertThatThrownBy(() -> Quantities.duration("99999999999h")).hasMessageContaining("too long");

    assertThat(Quantities.duration(Duration.ofMillis(50))).isEqualTo("50ms");
    assertThat(Quantities.duration(Duration.ofMillis(1500))).isEqualTo("1.5s");
    assertThat(Quantities.duration(Duration.ofSeconds(30))).isEqualTo("30s");
    assertThat(Quantities.duration(Duration.ofSeconds(90))).isEqualTo("90s");
    assertThat(Quantities.duration(Duration.ofMinutes(2))).isEqualTo("2m");
    assertThat(Quantities.duration(Duration.ofHours(3))).isEqualTo("3h");
    assertThat(Quantities.duration(Duration.ofNanos(1_250_000))).isEqualTo("1.25ms");
  }

  @Test
  void rates_parseAndFormat() {
    assertThat(Quantities.ratePerSecond("40/s")).isEqualTo(40.0);
    assertThat(Quantities.ratePerSecond("2400 / min")).isEqualTo(40.0);
    assertThat(Quantities.ratePerSecond("36/h")).isEqualTo(0.01);
    assertThat(Quantities.ratePerSecond("0.5/s")).isEqualTo(0.5);
    assertThatThrownBy(() -> Quantities.ratePerSecond("40")).hasMessageContaining("like 40/s");
    assertThatThrownBy(() -> Quantities.ratePerSecond("40/day")).hasMessageContaining("'40/day'");
    assertThat(Quantities.rate(40)).isEqualTo("40/s");
    assertThat(Quantities.rate(0.5)).isEqualTo("0.5/s");
    assertThat(Quantities.number(4.0 / 3.0)).isEqualTo("1.33");
    assertThat(Quantities.number(12.345)).isEqualTo("12.3");
    assertThat(Quantities.number(0.004)).isEqualTo("0.0040");
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
    List<String> keys = List.of("limit", "queue", "wait", "budget", "criticality", "rate", "latency");
    assertThat(DidYouMean.closest("latncy", keys)).contains("latency");
    assertThat(DidYouMean.closest("ltaency", keys)).as("a swap is one edit").contains("latency");
    assertThat(DidYouMean.closest("Limit", keys)).contains("limit");
    assertThat(DidYouMean.closest("queu", keys)).contains("queue");
    assertThat(DidYouMean.closest("critcality", keys)).contains("criticality");
    assertThat(DidYouMean.closest("timeout", keys)).isEmpty();
    assertThat(DidYouMean.closest("x", keys)).isEmpty();
    assertThat(DidYouMean.distance("kitten", "sitting")).isEqualTo(3);
  }
}
