package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The controllers alone, on scripted samples: a dependency that serves {@value #KNEE} calls at its
 * base latency and beyond that stretches every call by inside / knee (so it completes at most knee
 * / base calls per second whatever the limit), under demand that always fills the limit. No clock:
 * one sample is one interval.
 */
class LimitControllerTest {

  static final int KNEE = 6;
  static final int MIN = 2;
  static final int MAX = 20;

  /** Runs {@code intervals} intervals from {@code limit}; returns the limit after each. */
  static List<Integer> run(LimitController c, int limit, int intervals, Duration base) {
    return run(c, new ArrayList<>(List.of(limit)), intervals, base).subList(1, intervals + 1);
  }

  private static List<Integer> run(
      LimitController c, List<Integer> path, int intervals, Duration base) {
    for (int i = 0; i < intervals; i++) {
      int limit = path.get(path.size() - 1);
      long p50 = (long) (base.toNanos() * Math.max(1.0, (double) limit / KNEE));
      LimitController.Decision d = c.next(saturated(limit, p50));
      path.add(Math.max(MIN, Math.min(MAX, d.limit())));
    }
    return path;
  }

  /** An interval in which {@code limit} calls ran and more waited, each taking {@code p50}. */
  static LimitController.Sample saturated(int limit, long p50) {
    long[] buckets = new long[Histograms.BUCKETS];
    buckets[Histograms.bucketOf(p50)] = 10;
    return new LimitController.Sample(
        limit, limit, new LatencySummary(buckets, 10 * p50, p50), 0, 3);
  }

  /** {@code intervals} intervals in which demand stayed below the knee at {@code base}. */
  static void calm(LimitController c, int limit, int intervals, Duration base) {
    for (int i = 0; i < intervals; i++) {
      assertThat(c.next(below(limit, base)).limit()).isEqualTo(limit);
    }
  }

  static LimitController.Sample below(int limit, Duration base) {
    long p50 = base.toNanos();
    long[] buckets = new long[Histograms.BUCKETS];
    buckets[Histograms.bucketOf(p50)] = 10;
    return new LimitController.Sample(
        limit, Math.min(KNEE - 1, limit / 2 - 1), new LatencySummary(buckets, 10 * p50, p50), 0, 0);
  }

  static int settledAfter(List<Integer> path) {
    int last = path.get(path.size() - 1);
    int i = path.size();
    while (i > 0 && Math.abs(path.get(i - 1) - last) <= 1) {
      i--;
    }
    return i;
  }

  @Test
  void aConfigurationNamesTheControllersByTheirNames() {
    assertThat(LimitController.named("gradient"))
        .get()
        .extracting(LimitController::name)
        .isEqualTo("gradient");
    assertThat(LimitController.named("aimd"))
        .get()
        .extracting(LimitController::name)
        .isEqualTo("aimd");
    assertThat(LimitController.named("vegas")).isEmpty();
    assertThat(LimitController.named("Gradient")).isEmpty();
  }

  @Test
  void gradient_whenTheDependencyGetsSlower_settlesFast_andKeepsItsGoodput() {
    LimitController g = LimitController.gradient();
    List<Integer> calm = run(g, 10, 10, Duration.ofMillis(20));
    List<Integer> slow = run(g, calm.get(9), 60, Duration.ofMillis(300));
    System.out.println("gradient 20 ms " + calm + " then 300 ms " + slow);

    // Grows while the calls past the knee stretch the p50 by less than the tolerance (1.5).
    assertThat(calm).isSorted().last().isEqualTo(16);
    // Within 4 intervals the limit is where it stays; it never dithers afterwards.
    assertThat(settledAfter(slow)).isLessThanOrEqualTo(4);
    assertThat(slow.subList(4, 60)).containsOnly(slow.get(59));
    // It dropped (the calls beyond the knee only queued) but not below what the dependency serves.
    assertThat(slow.get(59)).isLessThan(MAX).isGreaterThanOrEqualTo(KNEE);
    assertThat(slow).allMatch(l -> l >= KNEE);
  }

  @Test
  void gradient_returnsAtOnce_toTheLimitItHad_whenLatencyIsBack() {
    LimitController g = LimitController.gradient();
    run(g, MAX, 5, Duration.ofMillis(20));
    List<Integer> slow = run(g, MAX, 20, Duration.ofMillis(300));
    List<Integer> back = run(g, slow.get(19), 5, Duration.ofMillis(20));
    System.out.println("gradient 300 ms " + slow + " then 20 ms " + back);
    assertThat(slow.get(19)).isLessThan(MAX);
    assertThat(back).containsOnly(MAX);
  }

  @Test
  void gradient_underItsOwnQueueing_settlesAboveTheKnee_withoutOscillating() {
    // Demand jumps far past the dependency: every call beyond the knee stretches the others.
    LimitController g = LimitController.gradient();
    calm(g, MAX, 5, Duration.ofMillis(20));
    List<Integer> path = run(g, MAX, 40, Duration.ofMillis(20));
    System.out.println("gradient, own queueing " + path);
    assertThat(settledAfter(path)).isLessThanOrEqualTo(5);
    assertThat(path.subList(5, 40)).allMatch(l -> Math.abs(l - path.get(39)) <= 1);
    assertThat(path.get(39)).isGreaterThanOrEqualTo(KNEE).isLessThan(MAX);
  }

  @Test
  void gradient_keepsTheLimit_whileDemandStaysBelowIt() {
    LimitController g = LimitController.gradient();
    for (int i = 0; i < 5; i++) {
      assertThat(g.next(below(10, Duration.ofMillis(20))).limit()).isEqualTo(10);
    }
  }

  @Test
  void aimd_whenTheDependencyGetsSlower_backsOffOnce_belowWhatItServed_andStaysThere() {
    LimitController a = LimitController.aimd();
    List<Integer> calm = run(a, 10, 12, Duration.ofMillis(20));
    List<Integer> slow = run(a, calm.get(11), 60, Duration.ofMillis(300));
    System.out.println("aimd 20 ms " + calm + " then 300 ms " + slow);

    assertThat(calm).isSorted().last().isEqualTo(MAX);
    assertThat(settledAfter(slow)).isLessThanOrEqualTo(4);
    assertThat(slow.subList(4, 60)).allMatch(l -> Math.abs(l - slow.get(59)) <= 1);
    assertThat(slow.get(59)).isEqualTo(15); // 20 calls ran within the threshold: 20 * 0.75
    assertThat(slow).allMatch(l -> l >= KNEE);
  }

  @Test
  void aimd_underItsOwnQueueing_sawsAboveTheKnee() {
    LimitController a = LimitController.aimd();
    calm(a, 5, 3, Duration.ofMillis(20));
    List<Integer> path = run(a, 5, 60, Duration.ofMillis(20));
    System.out.println("aimd, own queueing " + path);
    // +1 until p50 passes twice the baseline (13 calls), then × 0.75: a saw between 9 and 13,
    // above the knee; the baseline never learns the queueing a pressed limit causes.
    assertThat(path.subList(0, 8)).containsExactly(6, 7, 8, 9, 10, 11, 12, 13);
    assertThat(path.subList(8, 60)).allMatch(l -> l >= 9 && l <= 13).contains(9, 13);
  }

  @Test
  void theBaseline_fallsHalfWay_risesOnlyBelowTheLimit_andByAtMostOnePercent() {
    LatencyBaseline b = new LatencyBaseline(100);
    assertThat(b.before(1000)).isEqualTo(1000);
    b.learn(1000, false);
    b.learn(500, true); // a fall is learnt, pressed or not: half the way
    assertThat(b.before(0)).isEqualTo(750);
    b.learn(15_000, true); // a pressed limit's latency is not the dependency's normal
    assertThat(b.before(0)).isEqualTo(750);
    b.learn(15_000, false); // below the limit: 1% of itself, not 1% of the 14 250 gap
    assertThat(b.before(0)).isEqualTo(757.5);
    b.learn(760, false); // a small rise: 1% of the gap
    assertThat(b.before(0)).isEqualTo(757.5 + 2.5 / 100);
  }
}
