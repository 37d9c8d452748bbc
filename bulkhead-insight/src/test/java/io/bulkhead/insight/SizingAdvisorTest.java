package io.bulkhead.insight;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import io.bulkhead.Permit;
import io.bulkhead.Sizing;
import io.bulkhead.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Traffic is replayed on a fake clock shared by the compartment and the insight that samples it for
 * the advisor.
 */
class SizingAdvisorTest {

  private final FakeTicker ticker = new FakeTicker();

  /** An insight sampling on the fake clock, sizing with {@code advisor}. */
  private Insight sampler(SizingAdvisor advisor) {
    return Insight.builder().ticker(ticker).advisor(advisor).build();
  }

  /**
   * Watches {@code b} (a no-op once it is watched; a new compartment under a watched name replaces
   * the old one), takes one sample and returns the advice it gave on {@code b}.
   */
  private static SizingAdvice advise(Insight insight, Compartment b) {
    insight.watch(b);
    insight.sample();
    return insight.advice(b.name()).orElseThrow();
  }

  private Bulkhead compartment(String name, int limit) {
    return Bulkhead.builder(name).limit(limit).ticker(ticker).build();
  }

  /**
   * Replays {@code seconds} of traffic: every {@code latency}, {@code concurrent} calls arrive;
   * those that get a slot hold it for {@code latency}, the others are rejected.
   */
  private void replay(Bulkhead b, int concurrent, Duration latency, int seconds) {
    long rounds = Duration.ofSeconds(seconds).toNanos() / latency.toNanos();
    for (long r = 0; r < rounds; r++) {
      List<Permit> held = new ArrayList<>();
      for (int i = 0; i < concurrent; i++) {
        Optional<Permit> p = b.tryAcquire();
        p.ifPresent(held::add);
      }
      ticker.advance(latency);
      held.forEach(Permit::close);
    }
  }

  @Test
  void checkoutAt40PerSecondAnd50ms_needs2_andIsAdvised6() {
    Bulkhead checkout = compartment("checkout", 6);
    Insight insight = sampler(SizingAdvisor.builder().build());

    SizingAdvice first = advise(insight, checkout);
    assertThat(first.arrivalRate()).isEmpty();
    assertThat(first.need()).isEmpty();
    assertThat(first.recommendedLimit()).isEmpty();
    assertThat(first.summary()).contains("second snapshot");

    replay(checkout, 2, Duration.ofMillis(50), 10); // 2 calls every 50 ms = 40/s
    SizingAdvice advice = advise(insight, checkout);
    assertThat(advice.span()).contains(Duration.ofSeconds(10));
    assertThat(advice.arrivalRate().getAsDouble()).isEqualTo(40.0);
    assertThat(advice.rejectionRate().getAsDouble()).isZero();
    assertThat(advice.latency()).contains(Duration.ofMillis(50));
    assertThat(advice.need().getAsDouble()).isEqualTo(2.0);
    assertThat(advice.headroom()).isEqualTo(3.0);
    assertThat(advice.recommendedLimit()).hasValue(6);
    assertThat(advice.limit()).isEqualTo(6);
    assertThat(advice.summary())
        .isEqualTo("40/s × 50ms = need 2, ×3 → limit 6; the limit is 6: it fits");
  }

  @Test
  void rejectedCallsCountAsArrivals_soATooSmallLimitIsNoticed() {
    Bulkhead reports = compartment("reports", 1);
    Insight insight =
        sampler(SizingAdvisor.builder().headroom("reports", Sizing.OPTIONAL_HEADROOM).build());
    advise(insight, reports);
    // 3 arrive every 1.5 s for 12 s (2/s); only 1 fits, 2 are rejected each time.
    replay(reports, 3, Duration.ofMillis(1500), 12);
    SizingAdvice advice = advise(insight, reports);
    assertThat(advice.arrivalRate().getAsDouble()).isEqualTo(2.0);
    assertThat(advice.rejectionRate().getAsDouble())
        .isCloseTo(4.0 / 3.0, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(advice.need().getAsDouble()).isEqualTo(3.0);
    assertThat(advice.recommendedLimit()).hasValue(4);
    assertThat(advice.summary())
        .isEqualTo(
            "2/s × 1.5s = need 3, ×1.33 → limit 4; the limit is 1: below the recommendation,"
                + " 1.33/s rejected");
  }

  @Test
  void rateIsMeasuredFromTheOlderOfTwoSnapshotsAtLeastAnIntervalApart() {
    Bulkhead b = compartment("b", 10);
    Insight insight = sampler(SizingAdvisor.builder().interval(Duration.ofSeconds(10)).build());
    advise(insight, b); // t = 0
    replay(b, 1, Duration.ofSeconds(1), 2);
    assertThat(advise(insight, b).span())
        .as("before an interval: from the first")
        .contains(Duration.ofSeconds(2));
    replay(b, 1, Duration.ofSeconds(1), 8);
    assertThat(advise(insight, b).span())
        .as("t = 10 s becomes the newer snapshot")
        .contains(Duration.ofSeconds(10));
    replay(b, 1, Duration.ofSeconds(1), 5);
    assertThat(advise(insight, b).span())
        .as("polled often, still from t = 0")
        .contains(Duration.ofSeconds(15));
    replay(b, 1, Duration.ofSeconds(1), 5);
    SizingAdvice at20 = advise(insight, b); // shifts: older = t10, newer = t20
    assertThat(at20.span()).contains(Duration.ofSeconds(10));
    assertThat(at20.arrivalRate().getAsDouble()).isEqualTo(1.0);
  }

  @Test
  void noTraffic_orNoFinishedCall_givesNoRecommendation() {
    Bulkhead b = compartment("idle", 4);
    Insight insight = sampler(SizingAdvisor.builder().build());
    advise(insight, b);
    ticker.advance(Duration.ofSeconds(10));
    SizingAdvice idle = advise(insight, b);
    assertThat(idle.arrivalRate().getAsDouble()).isZero();
    assertThat(idle.need()).isEmpty();
    assertThat(idle.recommendedLimit()).isEmpty();
    assertThat(idle.summary()).isEqualTo("no calls arrived in the last 10s: nothing to size");

    Permit stuck = b.tryAcquire().orElseThrow();
    ticker.advance(Duration.ofSeconds(30)); // the stats window has no finished call
    SizingAdvice hanging = advise(insight, b);
    assertThat(hanging.latency()).isEmpty();
    assertThat(hanging.need()).isEmpty();
    assertThat(hanging.summary()).contains("no call finished").contains("1 in flight");
    stuck.close();
  }

  @Test
  void aNewCompartmentUnderAnOldName_startsAfresh() {
    Insight insight = sampler(SizingAdvisor.builder().build());
    Bulkhead first = compartment("x", 2);
    advise(insight, first);
    replay(first, 1, Duration.ofSeconds(1), 10);
    assertThat(advise(insight, first).arrivalRate()).isPresent();
    Bulkhead second = compartment("x", 2);
    assertThat(advise(insight, second).arrivalRate()).as("counters of another object").isEmpty();
  }

  @Test
  void advice_followsTheRegistry() {
    BulkheadRegistry registry = BulkheadRegistry.create();
    Bulkhead checkout = registry.register(compartment("checkout", 6));
    Bulkhead reports = registry.register(compartment("reports", 4));
    Insight insight =
        sampler(SizingAdvisor.builder().headroom("reports", Sizing.OPTIONAL_HEADROOM).build());
    insight.watch(registry);
    insight.sample();
    for (int round = 0; round < 200; round++) { // 10 s: checkout 40/s x 50 ms, reports 2/s x 1.5 s
      List<Permit> held = new ArrayList<>();
      held.add(checkout.tryAcquire().orElseThrow());
      held.add(checkout.tryAcquire().orElseThrow());
      ticker.advance(Duration.ofMillis(50));
      held.forEach(Permit::close);
    }
    for (int round = 0; round < 20; round++) {
      Permit a = reports.tryAcquire().orElseThrow();
      Permit b = reports.tryAcquire().orElseThrow();
      Permit c = reports.tryAcquire().orElseThrow();
      ticker.advance(Duration.ofMillis(1500)); // 3 every 1.5 s is 2/s
      a.close();
      b.close();
      c.close();
    }
    // checkout's snapshot is now 40 s old; its calls span 10 s of that, so its rate is diluted:
    // the advisor measures what it saw over the span, not a peak.
    insight.sample();
    List<SizingAdvice> all = insight.advice();
    assertThat(all).extracting(SizingAdvice::name).containsExactly("checkout", "reports");
    assertThat(all.get(0).arrivalRate().getAsDouble()).isEqualTo(10.0);
    assertThat(all.get(1).arrivalRate().getAsDouble()).isEqualTo(1.5);
    assertThat(all.get(1).latency()).contains(Duration.ofMillis(1500));
    assertThat(all.get(1).recommendedLimit()).hasValue(3); // 1.5/s x 1.5 s = 2.25, x4/3 = 3
  }

  @Test
  void headrooms_defaultToCritical_andAreChecked() {
    assertThat(SizingAdvisor.create().headroom("anything")).isEqualTo(Sizing.CRITICAL_HEADROOM);
    SizingAdvisor a = SizingAdvisor.builder().headroom(2).headroom("r", 1.5).build();
    assertThat(a.headroom("r")).isEqualTo(1.5);
    assertThat(a.headroom("q")).isEqualTo(2);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> SizingAdvisor.builder().headroom("r", 0.9))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("0.9");
  }
}
