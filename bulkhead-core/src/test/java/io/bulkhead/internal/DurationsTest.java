package io.bulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

  @Test
  void format_writesTheLargestUnitWithAtMostThreeDecimals() {
    assertThat(Durations.format(0)).isEqualTo("0s");
    assertThat(Durations.format(7)).isEqualTo("7ns");
    assertThat(Durations.format(850_000)).isEqualTo("850µs");
    assertThat(Durations.format(1_500)).isEqualTo("1.5µs");
    assertThat(Durations.format(12_345_678)).isEqualTo("12.345ms");
    assertThat(Durations.format(12_050_000)).isEqualTo("12.05ms");
    assertThat(Durations.format(1_005_000_000)).isEqualTo("1.005s");
    assertThat(Durations.format(1_500_000_000)).isEqualTo("1.5s");
    assertThat(Durations.format(42_000_000_000L)).isEqualTo("42s");
  }

  @Test
  void format_cutsNeverRoundsUp() {
    assertThat(Durations.format(999_999_999)).isEqualTo("999.999ms");
    assertThat(Durations.format(1_999_999_999)).isEqualTo("1.999s");
  }

  @Test
  void format_fromAMinuteOn_writesHoursMinutesAndSecondsLeavingOutZeros() {
    assertThat(Durations.format(Duration.ofSeconds(60))).isEqualTo("1m");
    assertThat(Durations.format(Duration.ofSeconds(125))).isEqualTo("2m5s");
    assertThat(Durations.format(Duration.ofMillis(125_250))).isEqualTo("2m5.25s");
    assertThat(Durations.format(Duration.ofMinutes(90))).isEqualTo("1h30m");
    assertThat(Durations.format(Duration.ofSeconds(3_605))).isEqualTo("1h5s");
    assertThat(Durations.format(Long.MAX_VALUE)).isEqualTo("2562047h47m16.854s");
  }

  @Test
  void format_ofADurationBeyondLongNanos_andANegativeOne() {
    assertThat(Durations.format(Duration.ofHours(3_000_000))).isEqualTo("3000000h");
    assertThat(Durations.format(Duration.ofMillis(-1_500))).isEqualTo("-1.5s");
    assertThat(Durations.format(-7)).isEqualTo("-7ns");
    assertThat(Durations.format(Long.MIN_VALUE)).isEqualTo("-2562047h47m16.854s");
  }

  @Test
  void unitNanos_knowsTheSymbolsTheFormWrites() {
    assertThat(Durations.unitNanos("µs")).isEqualTo(1_000);
    assertThat(Durations.unitNanos("us")).isEqualTo(1_000);
    assertThat(Durations.unitNanos("m")).isEqualTo(60_000_000_000L);
    assertThat(Durations.unitNanos("d")).isZero();
  }

  @Test
  void toNanosSaturated_stopsAtLongMax() {
    assertThat(Durations.toNanosSaturated(Duration.ofDays(300 * 365))).isEqualTo(Long.MAX_VALUE);
    assertThat(Durations.exceedsNanos(Duration.ofDays(300 * 365))).isTrue();
    assertThat(Durations.toNanosSaturated(Duration.ofMillis(3))).isEqualTo(3_000_000);
  }
}
