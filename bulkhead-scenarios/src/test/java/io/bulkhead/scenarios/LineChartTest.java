package io.bulkhead.scenarios;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LineChartTest {

  @Test
  void aSeries_isDrawnAsSteps_withADotPerPoint_carryingItsNumbers() {
    String svg =
        new LineChart("llm limit", "s", 10, 20)
            .marker(1, "logins sent")
            .series("llm <limit>", new double[] {0, 2.5, 10}, new double[] {10, 5, 5})
            .svg();
    // Plot: x from 56 to 876 (82 px per second), y from 256 (0) to 34 (20), 11.1 px per slot.
    assertThat(svg)
        .startsWith("<svg xmlns=\"http://www.w3.org/2000/svg\"")
        .endsWith("</svg>\n")
        .contains("aria-label=\"llm limit\"")
        .contains(
            "<polyline data-series=\"llm &lt;limit&gt;\" fill=\"none\" stroke-width=\"1.5\""
                + " stroke=\"#444444\" points=\"56.0,145.0 261.0,145.0 261.0,200.5 876.0,200.5"
                + " 876.0,200.5\"/>")
        .contains("<title>llm &lt;limit&gt;: 10 at 0 s</title>")
        .contains("<title>llm &lt;limit&gt;: 5 at 2.5 s</title>")
        .contains(">logins sent</text>");
  }

  @Test
  void badInput_isNamed() {
    assertThatThrownBy(() -> new LineChart("t", "s", 0, 1))
        .hasMessage("chart axes must end above zero but were x 0.0, y 1.0");
    assertThatThrownBy(
            () -> new LineChart("t", "s", 1, 1).series("a", new double[1], new double[2]))
        .hasMessage("series 'a' has 1 times but 2 values");
  }

  @Test
  void ticks_areOneTwoOrFiveTimesAPowerOfTen() {
    assertThat(LineChart.step(22)).isEqualTo(5);
    assertThat(LineChart.step(18)).isEqualTo(2);
    assertThat(LineChart.step(1.5)).isEqualTo(0.2, org.assertj.core.data.Offset.offset(1e-12));
  }
}
