package io.bulkhead.scenarios;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LastLinesTest {

  @Test
  void keepsTheLastLinesOldestFirst() {
    LastLines lines = new LastLines(3);
    assertThat(lines).hasToString("(no output)");
    lines.add("a");
    assertThat(lines).hasToString("a");
    for (String line : new String[] {"b", "c", "d", "e"}) {
      lines.add(line);
    }
    assertThat(lines).hasToString("c | d | e");
  }

  @Test
  void keepsAtLeastOne() {
    assertThatThrownBy(() -> new LastLines(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("kept must be at least 1 but was 0");
  }
}
