package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class SizingTest {

  @Test
  void workedExample_checkoutAndReportsFitTheBudgetOfTen() {
    double checkoutNeed = Sizing.need(40, Duration.ofMillis(50));
    double reportsNeed = Sizing.need(2, Duration.ofMillis(1500));
    assertThat(checkoutNeed).isEqualTo(2.0);
    assertThat(reportsNeed).isEqualTo(3.0);
    int checkout = Sizing.limit(checkoutNeed, Sizing.CRITICAL_HEADROOM);
    int reports = Sizing.limit(reportsNeed, Sizing.OPTIONAL_HEADROOM);
    assertThat(checkout).isEqualTo(6);
    assertThat(reports).isEqualTo(4);
    assertThat(checkout + reports).isEqualTo(10);
  }

  @Test
  void degradedReports_needSixty() {
    assertThat(Sizing.need(2, Duration.ofSeconds(30))).isEqualTo(60.0);
  }

  @Test
  void limit_roundsUp_andIsAtLeastOne() {
    assertThat(Sizing.limit(2.1, 1)).isEqualTo(3);
    assertThat(Sizing.limit(3, 1.34)).as("3 × 1.34 = 4.02 needs a fifth slot").isEqualTo(5);
    assertThat(Sizing.limit(3, 1.33)).as("3 × 1.33 = 3.99").isEqualTo(4);
    assertThat(Sizing.limit(0.01, 3)).isEqualTo(1);
  }

  @Test
  void floatingPointNoise_doesNotCostAWholeSlot() {
    // 0.1 has no exact binary form; 0.1/s × 30 s is 3 calls, not "a hair above 3".
    double need = Sizing.need(0.1, Duration.ofSeconds(30));
    assertThat(Sizing.limit(need, 1)).isEqualTo(3);
    assertThat(Sizing.limit(3, 4.0 / 3.0)).isEqualTo(4);
    assertThat(Sizing.limit(0.7, 10)).isEqualTo(7);
  }

  @Test
  void need_rejectsNonsense_namingTheArgumentAndValue() {
    assertThatThrownBy(() -> Sizing.need(0, Duration.ofMillis(50)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("callsPerSecond must be a finite number above zero but was 0.0");
    assertThatThrownBy(() -> Sizing.need(-1, Duration.ofMillis(50)))
        .hasMessageContaining("callsPerSecond")
        .hasMessageContaining("-1.0");
    assertThatThrownBy(() -> Sizing.need(Double.NaN, Duration.ofMillis(50)))
        .hasMessageContaining("callsPerSecond")
        .hasMessageContaining("NaN");
    assertThatThrownBy(() -> Sizing.need(Double.POSITIVE_INFINITY, Duration.ofMillis(50)))
        .hasMessageContaining("callsPerSecond")
        .hasMessageContaining("Infinity");
    assertThatThrownBy(() -> Sizing.need(40, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("latency must be above zero but was PT0S");
    assertThatThrownBy(() -> Sizing.need(40, Duration.ofMillis(-5)))
        .hasMessageContaining("latency")
        .hasMessageContaining("-0.005");
    assertThatThrownBy(() -> Sizing.need(1e9, Duration.ofDays(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("more than a compartment can hold");
  }

  @Test
  void limit_rejectsNonsense_namingTheArgumentAndValue() {
    assertThatThrownBy(() -> Sizing.limit(0, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("need must be a finite number above zero but was 0.0");
    assertThatThrownBy(() -> Sizing.limit(Double.NaN, 3))
        .hasMessageContaining("need")
        .hasMessageContaining("NaN");
    assertThatThrownBy(() -> Sizing.limit(Double.POSITIVE_INFINITY, 3))
        .hasMessageContaining("need");
    assertThatThrownBy(() -> Sizing.limit(2, 0.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("headroom")
        .hasMessageContaining("0.5");
    assertThatThrownBy(() -> Sizing.limit(2, 0)).hasMessageContaining("headroom");
    assertThatThrownBy(() -> Sizing.limit(2, -3))
        .hasMessageContaining("headroom")
        .hasMessageContaining("-3.0");
    assertThatThrownBy(() -> Sizing.limit(2, Double.NaN))
        .hasMessageContaining("headroom")
        .hasMessageContaining("NaN");
    assertThatThrownBy(() -> Sizing.limit(2, Double.POSITIVE_INFINITY))
        .hasMessageContaining("headroom");
    assertThatThrownBy(() -> Sizing.limit(1e9, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("more than a compartment can hold");
  }
}
