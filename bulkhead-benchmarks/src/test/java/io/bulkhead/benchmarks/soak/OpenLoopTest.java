package io.bulkhead.benchmarks.soak;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class OpenLoopTest {

  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  @Test
  void callsDueWhileTheDispatcherWasLateStartBackToBackWithTheirOwnDueTimes() {
    // The whole window lies in the past, as after a stall: every call is overdue, so the loop
    // starts
    // them all at once, in due order, without waiting for anything.
    long start = System.nanoTime() - 2_000 * MS;
    long end = start + 1_000 * MS;
    List<Long> fast = new ArrayList<>();
    List<Long> slow = new ArrayList<>();
    List<String> order = new ArrayList<>();
    new OpenLoop()
        .add(
            10,
            due -> {
              fast.add(due);
              order.add("fast");
            })
        .add(
            2,
            due -> {
              slow.add(due);
              order.add("slow");
            })
        .run(start, end);

    assertThat(fast).hasSize(10);
    assertThat(slow).containsExactly(start, start + 500 * MS);
    for (int k = 0; k < fast.size(); k++) {
      assertThat(fast.get(k)).isEqualTo(start + k * 100 * MS);
    }
    // Ties go to the stream added first; otherwise the earliest due call starts first.
    assertThat(order.subList(0, 2)).containsExactly("fast", "slow");
    // At 500 ms both are due again: fast's call (added first) starts, then slow's.
    assertThat(order.subList(6, 8)).containsExactly("fast", "slow");
  }

  @Test
  void startsNoCallDueAtOrAfterTheEnd() {
    long start = System.nanoTime() - 1_000 * MS;
    List<Long> due = new ArrayList<>();
    new OpenLoop().add(4, due::add).run(start, start + 500 * MS);
    assertThat(due).containsExactly(start, start + 250 * MS);
  }
}
