package io.bulkhead.benchmarks.soak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TrendTest {

  private static List<double[]> line(double start, double perMinute, double wobble, int minutes) {
    List<double[]> points = new ArrayList<>();
    for (int i = 0; i <= minutes * 6; i++) {
      double minute = i / 6.0;
      points.add(
          new double[] {minute, start + perMinute * minute + (i % 2 == 0 ? wobble : -wobble)});
    }
    return points;
  }

  @Test
  void aSeriesThatOnlyWobblesIsFlat() {
    Trend t = Trend.fit("heap", "MB", line(40, 0, 1.5, 9), 4, 0.10);
    assertThat(t.flat()).isTrue();
    assertThat(t.mean()).isCloseTo(40, within(0.2));
    assertThat(t.verdict()).startsWith("**flat**");
  }

  @Test
  void aSteadyClimbAboveTheToleranceIsGrowingWithItsSlope() {
    Trend t = Trend.fit("fds", "fds", line(100, 3, 1, 9), 4, 0.05);
    assertThat(t.flat()).isFalse();
    assertThat(t.slopePerMinute()).isCloseTo(3, within(0.05));
    assertThat(t.rise()).isCloseTo(27, within(0.5));
    assertThat(t.verdict()).startsWith("**growing**").contains("slope +3.00 fds/min");
  }

  @Test
  void aFallIsNotCalledFlatEither() {
    Trend t = Trend.fit("threads", "threads", line(200, -2, 0, 9), 2, 0.05);
    assertThat(t.verdict()).startsWith("**falling**");
  }

  @Test
  void tooFewPointsAreNotJudged() {
    Trend t =
        Trend.fit("chat p99", "ms", List.of(new double[] {2, 300}, new double[] {3, 900}), 5, 0.25);
    assertThat(t.verdict()).isEqualTo("too few points to judge (2)");
  }
}
