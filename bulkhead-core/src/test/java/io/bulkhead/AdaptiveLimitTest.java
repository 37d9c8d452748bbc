package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Adaptive limits on a fake ticker: a latency script in, the limit's path out. One round takes as
 * many slots as the demand finds free (the rest are refused), lets the script's latency pass, and
 * frees them; a release past the interval asks the controller.
 */
class AdaptiveLimitTest {

  private final FakeTicker ticker = new FakeTicker();

  private Bulkhead adaptive(LimitController controller, int limit, int min, int max) {
    return Bulkhead.builder("llm")
        .limit(limit)
        .ticker(ticker)
        .adaptive(AdaptiveLimit.of(controller, min, max))
        .build();
  }

  /** Runs {@code rounds} rounds; returns the limit after each. */
  private List<Integer> rounds(Bulkhead b, int rounds, int demand, Duration latency) {
    List<Integer> path = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      List<Permit> held = new ArrayList<>();
      for (int i = 0; i < demand; i++) {
        Optional<Permit> p = b.tryAcquire();
        p.ifPresent(held::add);
      }
      ticker.advance(latency);
      held.forEach(Permit::close);
      path.add(b.config().limit());
    }
    return path;
  }

  @Test
  void gradient_growsUnderDemand_dropsWhenLatencyRises_andRecovers() {
    Bulkhead b = adaptive(LimitController.gradient(), 10, 2, 20);
    List<Integer> calm = rounds(b, 8, 30, Duration.ofSeconds(2));
    List<Integer> slow = rounds(b, 6, 30, Duration.ofSeconds(30));
    List<Integer> again = rounds(b, 12, 30, Duration.ofSeconds(2));
    System.out.println("gradient limit path: " + calm + " " + slow + " " + again);

    assertThat(calm).isSorted().last().isEqualTo(20);
    // The first slow round is decided on the calm samples; from the second the limit falls, to
    // 20 * 0.5 + 4 and so on, but never below half the 20 it had while latency held.
    assertThat(slow).containsExactly(20, 14, 11, 10, 10, 10);
    // The first calm round is decided on slow samples; then, latency back at the baseline, the
    // limit returns to 20 at once.
    assertThat(again.get(0)).isEqualTo(10);
    assertThat(again.subList(1, again.size())).containsOnly(20);

    AdaptiveLimit.Status status = b.adaptive().orElseThrow();
    assertThat(status.controller()).isEqualTo("gradient");
    assertThat(status.limit()).isEqualTo(20);
    assertThat(status.changes()).isEqualTo(5 + 3 + 1);
  }

  @Test
  void gradient_explainsADrop_withTheP50s_andTheBaseline() {
    Bulkhead b = adaptive(LimitController.gradient(), 10, 2, 10);
    rounds(b, 3, 10, Duration.ofSeconds(2));
    rounds(b, 2, 10, Duration.ofSeconds(30));
    AdaptiveLimit.Status s = b.adaptive().orElseThrow();
    // The interval that first saw a 30 s call reported its p50 from the histogram's 2 s bucket.
    assertThat(s.lastReason())
        .matches("admitted p50 rose from 2(\\.0\\d+)?s to 30s against a baseline of 2s");
    assertThat(s.lastFrom()).isEqualTo(10);
    assertThat(s.lastTo()).isEqualTo(9); // 10 * 0.5 (the gradient's floor) + 4 (the queue term)
  }

  @Test
  void gradient_doesNotGrow_whenDemandStaysBelowTheLimit() {
    Bulkhead b = adaptive(LimitController.gradient(), 10, 2, 20);
    assertThat(rounds(b, 6, 3, Duration.ofSeconds(2))).containsOnly(10);
    assertThat(b.adaptive().orElseThrow().changes()).isZero();
  }

  @Test
  void aimd_addsOne_thenBacksOff_withinTheRange() {
    Bulkhead b = adaptive(LimitController.aimd(), 4, 2, 8);
    List<Integer> calm = rounds(b, 6, 30, Duration.ofSeconds(2));
    List<Integer> slow = rounds(b, 6, 30, Duration.ofSeconds(30));
    List<Integer> again = rounds(b, 8, 30, Duration.ofSeconds(2));
    System.out.println("aimd limit path: " + calm + " " + slow + " " + again);
    assertThat(calm).containsExactly(5, 6, 7, 8, 8, 8);
    // 8 * 0.75 = 6, and no further: 8 calls ran within the threshold before latency rose.
    assertThat(slow).containsExactly(8, 6, 6, 6, 6, 6);
    assertThat(again.get(again.size() - 1)).isEqualTo(8);
    assertThat(b.adaptive().orElseThrow().lastReason()).startsWith("demand reached the limit");
  }

  @Test
  void aimd_withAFixedThreshold() {
    Bulkhead b = adaptive(LimitController.aimd(Duration.ofSeconds(5)), 4, 1, 8);
    rounds(b, 2, 30, Duration.ofSeconds(4)); // under the threshold: grows
    assertThat(b.config().limit()).isEqualTo(6);
    rounds(b, 2, 30, Duration.ofSeconds(6));
    assertThat(b.adaptive().orElseThrow().lastReason())
        .isEqualTo("admitted p50 6s is above the threshold of 5s");
  }

  @Test
  void aLoweredLimit_letsCallsInFlightFinish_andAdmitsNobodyUntilBelow() {
    Bulkhead b = adaptive(LimitController.aimd(), 8, 2, 8);
    rounds(b, 2, 8, Duration.ofSeconds(2));
    // Eight slow calls; the controller backs off while they are in flight.
    List<Permit> eight = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      eight.add(b.tryAcquire().orElseThrow());
    }
    ticker.advance(Duration.ofSeconds(30));
    eight.remove(0).close(); // decides on the last round's 2 s calls and this one: p50 2 s
    assertThat(b.config().limit()).isEqualTo(8);
    ticker.advance(Duration.ofSeconds(1));
    eight.remove(0).close(); // decides on 30 s and 31 s: backs off
    assertThat(b.config().limit()).isEqualTo(6);
    assertThat(b.stats().inFlight()).isEqualTo(6);
    assertThat(b.tryAcquire()).as("6 in flight at a limit of 6").isEmpty();
    eight.remove(0).close();
    assertThat(b.stats().inFlight()).isEqualTo(5);
    Permit p = b.tryAcquire().orElseThrow();
    assertThat(b.tryAcquire()).isEmpty();
    p.close();
    eight.forEach(Permit::close);
    assertThat(b.stats().inFlight()).isZero();
    assertThat(b.stats().admitted()).isEqualTo(b.stats().completed());
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void theControllerRuns_holdingNoLock_ofTheCompartment() throws Exception {
    Bulkhead[] self = new Bulkhead[1];
    List<String> seen = new ArrayList<>();
    LimitController probe =
        new LimitController() {
          @Override
          public String name() {
            return "probe";
          }

          @Override
          public Decision next(Sample sample) {
            // Another thread changes the limit and takes a slot: it would wait forever for a lock
            // held around this call.
            CompletableFuture<Void> other =
                CompletableFuture.runAsync(
                    () -> {
                      self[0].setLimit(5);
                      self[0].tryAcquire().orElseThrow().close();
                    });
            other.join();
            seen.add(sample.limit() + "/" + sample.inFlight() + "/" + sample.latency().count());
            return new Decision(3, "probe");
          }
        };
    self[0] = adaptive(probe, 4, 1, 6);
    rounds(self[0], 2, 2, Duration.ofSeconds(2));
    assertThat(seen).isNotEmpty();
    assertThat(self[0].config().limit()).isEqualTo(3);
  }

  @Test
  void aFailingController_keepsTheLimit() {
    LimitController failing =
        new LimitController() {
          @Override
          public String name() {
            return "failing";
          }

          @Override
          public Decision next(Sample sample) {
            throw new IllegalStateException("boom");
          }
        };
    Bulkhead b = adaptive(failing, 4, 1, 6);
    rounds(b, 3, 6, Duration.ofSeconds(2));
    assertThat(b.config().limit()).isEqualTo(4);
    assertThat(b.stats().admitted()).isEqualTo(12);
  }

  @Test
  void badSettings_areNamed() {
    assertThatThrownBy(() -> AdaptiveLimit.of(LimitController.gradient(), 0, 5))
        .hasMessage("adaptive min must be at least 1 but was 0");
    assertThatThrownBy(() -> AdaptiveLimit.of(LimitController.gradient(), 5, 4))
        .hasMessage("adaptive max must be at least min (5) but was 4");
    assertThatThrownBy(
            () -> AdaptiveLimit.of(LimitController.gradient(), 1, 4).withInterval(Duration.ZERO))
        .hasMessage("adaptive interval must be positive but was 0s");
    assertThatThrownBy(
            () ->
                Bulkhead.builder("x")
                    .limit(9)
                    .adaptive(AdaptiveLimit.of(LimitController.gradient(), 1, 4))
                    .build())
        .hasMessage("limit of bulkhead 'x' must lie within its adaptive range [1, 4] but was 9");
  }

  @Test
  void aStaticCompartment_hasNoAdaptiveStatus() {
    assertThat(Bulkhead.builder("s").limit(2).build().adaptive()).isEmpty();
  }
}
