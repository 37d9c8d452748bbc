package io.bulkhead.insight;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import io.bulkhead.Ticker;
import io.bulkhead.insight.Diagnosis.State;
import io.bulkhead.testing.FakeTicker;
import io.bulkhead.testing.ScriptedCompartment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The diagnosis state machine on synthetic windows: a scripted compartment whose stats the test
 * sets second by second, a fake ticker, and one sample per scripted second.
 *
 * <p>The scripts keep Little's law true (in flight = admitted rate x latency) the way real traffic
 * does. Example, a compartment with limit 10 whose calls take 100 ms: 50 calls/s keep 5 in flight,
 * 100 calls/s fill it, anything above is rejected. The scripted compartment is core's test fixture
 * {@link ScriptedCompartment}.
 */
class DiagnosticianTest {

  private final FakeTicker ticker = new FakeTicker();
  private final ScriptedCompartment llm = new ScriptedCompartment("llm", 10);
  private final Insight doctor = insight(ticker, Diagnostician.builder().build());

  DiagnosticianTest() {
    doctor.watch(llm);
  }

  /** An insight that samples with {@code clock} and judges by {@code rules}. */
  private static Insight insight(Ticker clock, Diagnostician rules) {
    return Insight.builder().ticker(clock).diagnostician(rules).build();
  }

  /** One second of traffic, then a sample; returns the resulting diagnosis. */
  private Diagnosis second(
      Insight d,
      ScriptedCompartment b,
      int admitted,
      int rejected,
      int inFlight,
      long latencyMillis) {
    ticker.advance(Duration.ofSeconds(1));
    b.run(admitted, rejected, inFlight, admitted, latencyMillis);
    d.sample();
    return d.diagnosis(b.name()).orElseThrow();
  }

  private Diagnosis seconds(int n, int admitted, int rejected, int inFlight, long latencyMillis) {
    Diagnosis last = null;
    for (int i = 0; i < n; i++) {
      last = second(doctor, llm, admitted, rejected, inFlight, latencyMillis);
    }
    return last;
  }

  private Diagnosis healthy(int n) {
    return seconds(n, 50, 0, 5, 100);
  }

  /** States seen, one per second, and how many times the state changed. */
  private static int transitions(List<State> states) {
    int changes = 0;
    for (int i = 1; i < states.size(); i++) {
      if (states.get(i) != states.get(i - 1)) {
        changes++;
      }
    }
    return changes;
  }

  // --- warm-up and figures
  // ------------------------------------------------------------------------

  @Test
  void beforeAnySample_andDuringWarmUp_isHealthyButNotJudged() {
    Diagnosis first = doctor.diagnosis("llm").orElseThrow();
    assertThat(first.state()).isEqualTo(State.HEALTHY);
    assertThat(first.judged()).isFalse();
    assertThat(first.explanation()).isEqualTo("not sampled yet");

    // Overloaded from the first second: still not judged until half the short window is sampled.
    Diagnosis early = seconds(4, 100, 300, 10, 100);
    assertThat(early.judged()).as("4 s of a 10 s window").isFalse();
    assertThat(early.state()).isEqualTo(State.HEALTHY);
    assertThat(early.explanation())
        .isEqualTo(
            "warming up: 3s sampled in 3 intervals; judging needs 5s in at least 3; keeping"
                + " HEALTHY");

    Diagnosis judged = seconds(2, 100, 300, 10, 100);
    assertThat(judged.judged()).isTrue();
    assertThat(judged.state()).isEqualTo(State.LIMIT_TOO_LOW);
    assertThat(judged.normalLatency())
        .as("never healthy while judged, but warm-up samples count")
        .hasValue(Duration.ofMillis(100));
  }

  @Test
  void figures_areRatesAndSharesOverTheShortWindow() {
    healthy(20);
    Diagnosis d = seconds(10, 100, 50, 10, 100);
    assertThat(d.window()).isEqualTo(Duration.ofSeconds(10));
    assertThat(d.admittedRate()).isCloseTo(100.0, within(1e-9));
    assertThat(d.rejectionRate()).isCloseTo(50.0, within(1e-9));
    assertThat(d.rejectionRatio()).isCloseTo(1.0 / 3, within(1e-9));
    assertThat(d.rejectionSpread()).isEqualTo(1.0);
    assertThat(d.saturation()).isEqualTo(1.0);
    // 500 rejections over the 29 s the long window holds so far.
    assertThat(d.longRejectionRate()).isCloseTo(500.0 / 29, within(1e-9));
    assertThat(d.latency()).hasValue(Duration.ofMillis(100));
    assertThat(d.normalLatency()).hasValue(Duration.ofMillis(100));
    assertThat(d.latencyRatio())
        .hasValueSatisfying(r -> assertThat(r).isCloseTo(1.0, within(1e-9)));
    assertThat(d.inStateFor())
        .as("became LIMIT_TOO_LOW after 5 rejecting seconds")
        .isEqualTo(Duration.ofSeconds(5));
  }

  // --- reaching and leaving each state
  // ------------------------------------------------------------

  @Test
  void healthy_whenBelowTheLimitAndNotRejecting() {
    Diagnosis d = healthy(30);
    assertThat(d.judged()).isTrue();
    assertThat(d.state()).isEqualTo(State.HEALTHY);
    assertThat(d.saturation()).isZero();
    assertThat(d.explanation())
        .isEqualTo("healthy: at the limit in 0% of the last 10s, 0% of calls" + " rejected");
  }

  @Test
  void saturated_afterMostOfTheWindowAtTheLimit_andLeftOnlyBelowTheExitLevel() {
    healthy(30);
    List<State> states = new ArrayList<>();
    // At the limit every second, no rejections: saturation reaches 80% after 8 of 10 intervals.
    for (int i = 1; i <= 10; i++) {
      states.add(seconds(1, 100, 0, 10, 100).state());
    }
    assertThat(states.subList(0, 7)).containsOnly(State.HEALTHY);
    assertThat(states.subList(7, 10)).containsOnly(State.SATURATED);
    Diagnosis d = doctor.diagnosis("llm").orElseThrow();
    assertThat(d.explanation())
        .isEqualTo(
            "saturated: at the limit in 100% of the last 10s, 0% of"
                + " calls rejected: working as designed; rejections come next if demand stays");

    // Load eases: at the limit every other second. 50% is below the enter level but not below the
    // exit level, so it stays saturated ...
    for (int i = 0; i < 10; i++) {
      seconds(1, 70, 0, i % 2 == 0 ? 4 : 10, 100);
    }
    assertThat(doctor.diagnosis("llm").orElseThrow().state()).isEqualTo(State.SATURATED);
    // ... and becomes healthy once fewer than half the intervals end at the limit.
    Diagnosis eased = healthy(3);
    assertThat(eased.state()).isEqualTo(State.HEALTHY);
    assertThat(eased.saturation()).isLessThan(0.5);
  }

  @Test
  void limitTooLow_sustainedRejectionsWithNormalLatency_andBackWhenTheyStop() {
    healthy(60);
    // Demand grows to 130 calls/s; 100 fit (10 slots x 100 ms), 30 are rejected. Latency stays 100
    // ms.
    List<State> states = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      states.add(seconds(1, 100, 30, 10, 100).state());
    }
    assertThat(states.subList(0, 4))
        .as("a trend needs half the window")
        .containsOnly(State.HEALTHY);
    assertThat(states.get(4)).isEqualTo(State.LIMIT_TOO_LOW);
    assertThat(transitions(states)).isEqualTo(1);
    Diagnosis d = doctor.diagnosis("llm").orElseThrow();
    assertThat(d.rejectionRatio()).isCloseTo(30.0 / 130, within(1e-9));
    assertThat(d.latency()).hasValue(Duration.ofMillis(100));
    assertThat(d.normalLatency()).hasValue(Duration.ofMillis(100));
    assertThat(d.explanation())
        .isEqualTo(
            "limit too low: rejecting 23% of calls (30.0/s, in 10 of 10"
                + " intervals) while admitted calls take 100ms against a normal 100ms (1.0x): the limit is too"
                + " low for the demand, or demand grew");

    // Someone raises the limit to 20: no more rejections, 130 calls/s keep 13 in flight.
    llm.limit = 20;
    List<State> after = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      after.add(seconds(1, 130, 0, 13, 100).state());
    }
    assertThat(after.get(after.size() - 1)).isEqualTo(State.HEALTHY);
    assertThat(after).doesNotContain(State.DEPENDENCY_DEGRADING);
  }

  @Test
  void dependencyDegrading_sustainedRejectionsWithRisingLatency_andBackWhenItRecovers() {
    healthy(60);
    // The dependency slows from 100 ms to 1 s: 10 slots now serve 10 calls/s, the other 120 are
    // rejected.
    Diagnosis d = seconds(10, 10, 120, 10, 1000);
    assertThat(d.state()).isEqualTo(State.DEPENDENCY_DEGRADING);
    assertThat(d.latency()).hasValue(Duration.ofSeconds(1));
    assertThat(d.normalLatency())
        .as("learnt while healthy, not from the incident")
        .hasValue(Duration.ofMillis(100));
    assertThat(d.latencyRatio())
        .hasValueSatisfying(r -> assertThat(r).isCloseTo(10.0, within(1e-9)));
    assertThat(d.explanation())
        .isEqualTo(
            "dependency degrading: rejecting 92% of calls (120.0/s, in"
                + " 10 of 10 intervals) while admitted calls take 1s against a normal 100ms (10.0x): look at"
                + " the dependency, not at the limit");

    // It recovers: back to 100 ms, rejections stop, load drops back.
    Diagnosis recovered = seconds(12, 50, 0, 5, 100);
    assertThat(recovered.state()).isEqualTo(State.HEALTHY);
  }

  @Test
  void dependencyDegrading_whileRejectionsContinueButLatencyRecovers_becomesLimitTooLow() {
    healthy(60);
    seconds(10, 10, 120, 10, 1000);
    assertThat(doctor.diagnosis("llm").orElseThrow().state()).isEqualTo(State.DEPENDENCY_DEGRADING);
    // Latency back to 100 ms, but demand stays above what 10 slots serve: now the limit is what is
    // wrong.
    // The in-flight estimate over the window still reflects the slow seconds for a while (it stays
    // degrading while latency is above 1.5x normal), so the verdict changes after about 7 s.
    Diagnosis d = seconds(12, 100, 30, 10, 100);
    assertThat(d.state()).isEqualTo(State.LIMIT_TOO_LOW);
  }

  @Test
  void aLongIncident_doesNotBecomeTheNewNormal() {
    healthy(30);
    // Five minutes of a slow dependency: five long windows with no healthy sample in them.
    Diagnosis d = seconds(300, 10, 120, 10, 1000);
    assertThat(d.state()).isEqualTo(State.DEPENDENCY_DEGRADING);
    assertThat(d.normalLatency()).hasValue(Duration.ofMillis(100));
    assertThat(d.inStateFor()).isEqualTo(Duration.ofSeconds(295));
  }

  @Test
  void aHungDependency_isCaughtFromCallsStillInFlight_thoughFinishedCallsLookNormal() {
    healthy(60);
    // Nothing completes any more; the core's latency window still shows the last normal calls.
    Diagnosis d = null;
    for (int i = 0; i < 10; i++) {
      ticker.advance(Duration.ofSeconds(1));
      llm.run(0, 130, 10, 0, 100);
      doctor.sample();
      d = doctor.diagnosis("llm").orElseThrow();
    }
    assertThat(d.state()).isEqualTo(State.DEPENDENCY_DEGRADING);
    assertThat(d.latency())
        .as("held all window long: at least the window")
        .hasValue(Duration.ofSeconds(10));
  }

  @Test
  void withoutAHealthyPeriod_rejectionsReadAsLimitTooLow_andSaySoInTheExplanation() {
    Insight fresh = insight(ticker, Diagnostician.builder().build());
    ScriptedCompartment busy = new ScriptedCompartment("busy", 10);
    fresh.watch(busy);
    // Saturated from the start (never healthy while judged), no call finished in the first seconds.
    for (int i = 0; i < 12; i++) {
      ticker.advance(Duration.ofSeconds(1));
      busy.run(100, 0, 10, 100, ScriptedCompartment.NO_LATENCY);
      fresh.sample();
    }
    assertThat(fresh.diagnosis("busy").orElseThrow().state()).isEqualTo(State.SATURATED);
    Diagnosis d = null;
    for (int i = 0; i < 10; i++) {
      d = second(fresh, busy, 100, 30, 10, 100);
    }
    assertThat(d.state()).isEqualTo(State.LIMIT_TOO_LOW);
    assertThat(d.normalLatency()).isEmpty();
    assertThat(d.explanation())
        .contains("no healthy period seen yet to learn their normal latency");
  }

  @Test
  void aTinyAbsoluteRise_isNotADegradingDependency() {
    Insight micro = insight(ticker, Diagnostician.builder().build());
    ScriptedCompartment cache = new ScriptedCompartment("cache", 10);
    micro.watch(cache);
    for (int i = 0; i < 60; i++) {
      ticker.advance(Duration.ofSeconds(1));
      cache.run(1000, 0, 0, 1000, 0);
      cache.latencyNanos = 40_000; // 40 µs
      micro.sample();
    }
    Diagnosis d = null;
    for (int i = 0; i < 10; i++) {
      ticker.advance(Duration.ofSeconds(1));
      cache.run(1000, 300, 0, 1000, 0);
      cache.latencyNanos = 400_000; // ten times slower, but 0.36 ms is under the 5 ms floor
      micro.sample();
      d = micro.diagnosis("cache").orElseThrow();
    }
    assertThat(d.state()).isEqualTo(State.LIMIT_TOO_LOW);
    assertThat(d.latencyRatio()).hasValueSatisfying(r -> assertThat(r).isGreaterThan(2.0));
  }

  // --- no flapping
  // --------------------------------------------------------------------------------

  @Test
  void aSingleSpike_neverChangesTheState() {
    healthy(30);
    List<State> states = new ArrayList<>();
    // One second at the limit with 500 rejections (80% of that second's calls), then normal again.
    states.add(seconds(1, 100, 500, 10, 100).state());
    for (int i = 0; i < 60; i++) {
      states.add(healthy(1).state());
    }
    assertThat(states).containsOnly(State.HEALTHY);
    assertThat(transitions(states)).isZero();
  }

  @Test
  void aSpikeReallyIsVisibleInTheFigures() {
    healthy(30);
    Diagnosis d = seconds(1, 100, 500, 10, 100);
    assertThat(d.rejectionRatio()).as("over the window").isGreaterThan(0.05);
    assertThat(d.rejectionSpread()).as("one interval of ten").isCloseTo(0.1, within(1e-9));
    assertThat(d.state()).isEqualTo(State.HEALTHY);
    assertThat(d.explanation())
        .isEqualTo(
            "healthy: at the limit in 10% of the last 10s, 48% of calls"
                + " rejected, in only 1 of 10 intervals (a burst, not a trend)");
  }

  /**
   * Rejections hovering at the enter level: with the default exit level below it the state changes
   * once and stays; with enter == exit (no hysteresis) the same traffic flaps, which shows the test
   * can fail.
   */
  @Test
  void hoveringAtAThreshold_changesStateOnce_whileWithoutHysteresisItFlaps() {
    Insight flappy =
        insight(
            ticker,
            Diagnostician.builder()
                .rejectionRatio(
                    Diagnostician.DEFAULT_REJECTION_RATIO_ENTER,
                    Diagnostician.DEFAULT_REJECTION_RATIO_ENTER)
                .build());
    flappy.watch(llm);
    List<State> steady = new ArrayList<>();
    List<State> flapping = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      ticker.advance(Duration.ofSeconds(1));
      llm.run(95, 0, 9, 95, 100);
      doctor.sample();
      flappy.sample();
    }
    // 120 s of rejections between 3% and 7% of calls, in bursts of 3 s, always at the limit.
    for (int i = 0; i < 120; i++) {
      int rejected = (i / 3) % 2 == 0 ? 3 : 8; // 2.9% then 7.4% of 103-108 calls
      ticker.advance(Duration.ofSeconds(1));
      llm.run(100, rejected, 10, 100, 100);
      doctor.sample();
      flappy.sample();
      steady.add(doctor.diagnosis("llm").orElseThrow().state());
      flapping.add(flappy.diagnosis("llm").orElseThrow().state());
    }
    assertThat(steady.get(steady.size() - 1)).isEqualTo(State.LIMIT_TOO_LOW);
    assertThat(transitions(steady))
        .as("HEALTHY -> SATURATED -> LIMIT_TOO_LOW at most")
        .isLessThanOrEqualTo(2);
    assertThat(transitions(flapping)).as("the same traffic without hysteresis").isGreaterThan(4);
  }

  /**
   * Latency drifting around twice normal (a 20 s wave between 1.7x and 2.3x) while rejecting: with
   * the default exit level the verdict stays DEPENDENCY_DEGRADING; with enter == exit it flaps
   * between the two rejecting states.
   */
  @Test
  void latencyHoveringAtTwiceNormal_doesNotFlapBetweenTheTwoRejectingStates() {
    Insight flappy = insight(ticker, Diagnostician.builder().latencyRise(2.0, 2.0).build());
    flappy.watch(llm);
    for (int i = 0; i < 60; i++) {
      ticker.advance(Duration.ofSeconds(1));
      llm.run(50, 0, 5, 50, 100);
      doctor.sample();
      flappy.sample();
    }
    List<State> steady = new ArrayList<>();
    List<State> flapping = new ArrayList<>();
    for (int t = 0; t < 120; t++) {
      double millis = 200 * (1 + 0.15 * Math.sin(2 * Math.PI * t / 20));
      int inFlight = (int) Math.round(40 * millis / 1000); // Little's law at 40 admitted calls/s
      ticker.advance(Duration.ofSeconds(1));
      llm.run(40, 80, inFlight, 40, Math.round(millis));
      doctor.sample();
      flappy.sample();
      steady.add(doctor.diagnosis("llm").orElseThrow().state());
      flapping.add(flappy.diagnosis("llm").orElseThrow().state());
    }
    assertThat(steady.subList(10, steady.size())).containsOnly(State.DEPENDENCY_DEGRADING);
    assertThat(transitions(steady)).isLessThanOrEqualTo(2);
    assertThat(transitions(flapping)).as("the same traffic without hysteresis").isGreaterThan(4);
  }

  // --- membership
  // ---------------------------------------------------------------------------------

  @Test
  void watchingARegistry_followsAddsAndRemoves_andARenamedReplacementStartsAfresh() {
    BulkheadRegistry registry = BulkheadRegistry.create();
    ScriptedCompartment a = new ScriptedCompartment("a", 2);
    registry.register(a);
    Insight d = insight(ticker, Diagnostician.builder().build());
    d.watch(registry);
    ScriptedCompartment b = new ScriptedCompartment("b", 2);
    registry.register(b);
    assertThat(d.diagnoses()).extracting(Diagnosis::name).containsExactly("a", "b");

    for (int i = 0; i < 12; i++) {
      ticker.advance(Duration.ofSeconds(1));
      a.run(10, 5, 1, 10, 100); // 10 calls/s x 100 ms = 1 in flight
      d.sample();
    }
    assertThat(d.diagnosis("a").orElseThrow().state()).isEqualTo(State.LIMIT_TOO_LOW);

    registry.remove("a");
    assertThat(d.diagnosis("a")).isEmpty();
    assertThat(d.diagnoses()).extracting(Diagnosis::name).containsExactly("b");

    ScriptedCompartment a2 = new ScriptedCompartment("a", 2);
    registry.register(a2);
    assertThat(d.diagnosis("a").orElseThrow().explanation()).isEqualTo("not sampled yet");
    // A late onRemoved for the old "a" must not drop the new one.
    assertThat(d.unwatch(a)).isFalse();
    assertThat(d.diagnosis("a")).isPresent();
  }

  /** As in the metrics binder: "added" heard after "removed" must not leave a history behind. */
  @Test
  void addedHeardAfterRemoved_leavesNoHistory() throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    java.util.concurrent.CountDownLatch inGate = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch removed = new java.util.concurrent.CountDownLatch(1);
    registry.addListener(
        new BulkheadRegistry.Listener() {
          @Override
          public void onAdded(Compartment b) {
            inGate.countDown();
            try {
              removed.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        });
    Insight d = insight(ticker, Diagnostician.builder().build());
    d.watch(registry);
    Thread registering = new Thread(() -> registry.register(new ScriptedCompartment("ghost", 1)));
    registering.start();
    inGate.await();
    registry.remove("ghost");
    removed.countDown();
    registering.join();
    assertThat(d.diagnoses()).isEmpty();
  }

  @Test
  void aSampleOlderThanTheLastOne_isDropped() {
    healthy(12);
    Diagnosis before = doctor.diagnosis("llm").orElseThrow();
    doctor.sample(); // same ticker reading as the last sample
    assertThat(doctor.diagnosis("llm").orElseThrow()).isSameAs(before);
  }

  // --- a real compartment
  // -------------------------------------------------------------------------

  @Test
  void aRealCompartment_healthyThenLimitTooLow_fromItsOwnStats() throws Exception {
    FakeTicker clock = new FakeTicker();
    Bulkhead real = Bulkhead.builder("real").limit(2).ticker(clock).build();
    Insight d = insight(clock, Diagnostician.builder().build());
    d.watch(real);
    List<State> states = new ArrayList<>();
    for (int second = 0; second < 40; second++) {
      int attempts = second < 20 ? 2 : 5; // 2 calls/s fit; 5 calls/s do not
      List<CompletableFuture<String>> held = new ArrayList<>();
      List<CompletableFuture<String>> results = new ArrayList<>();
      for (int i = 0; i < attempts; i++) {
        CompletableFuture<String> stage = new CompletableFuture<>();
        held.add(stage);
        results.add(real.submit(() -> stage));
      }
      clock.advance(Duration.ofMillis(100));
      held.forEach(s -> s.complete("ok"));
      clock.advance(Duration.ofMillis(900));
      d.sample();
      states.add(d.diagnosis("real").orElseThrow().state());
      long rejectedNow =
          results.stream().filter(CompletableFuture::isCompletedExceptionally).count();
      assertThat(rejectedNow).isEqualTo(attempts - 2);
    }
    assertThat(states.subList(0, 20)).containsOnly(State.HEALTHY);
    assertThat(states.get(states.size() - 1)).isEqualTo(State.LIMIT_TOO_LOW);
    Diagnosis last = d.diagnosis("real").orElseThrow();
    assertThat(last.rejectionRatio()).isCloseTo(0.6, within(1e-9));
    assertThat(last.latency()).hasValue(Duration.ofMillis(100));
    assertThat(last.normalLatency()).hasValue(Duration.ofMillis(100));
  }

  // --- configuration
  // ------------------------------------------------------------------------------

  @Test
  void builder_rejectsNonsense_namingTheFieldAndValue() {
    assertThatThrownBy(() -> Diagnostician.builder().shortWindow(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("shortWindow must be positive but was PT0S");
    assertThatThrownBy(() -> Diagnostician.builder().saturation(0.5, 0.8))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("saturation must satisfy 0 < exit <= enter <= 1 but was enter=0.5, exit=0.8");
    assertThatThrownBy(() -> Diagnostician.builder().rejectionRatio(0.05, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("rejectionRatio");
    assertThatThrownBy(() -> Diagnostician.builder().rejectionSpread(1.5, 0.2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("rejectionSpread");
    assertThatThrownBy(() -> Diagnostician.builder().latencyRise(2, 0.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "latencyRise must satisfy 1 <= exit <= enter (finite) but was enter=2.0, exit=0.5");
    assertThatThrownBy(() -> Diagnostician.builder().latencyFloor(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("latencyFloor");
    assertThatThrownBy(() -> Diagnostician.builder().longWindow(Duration.ofSeconds(10)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("longWindow PT10S must be longer than shortWindow PT10S");
  }

  @Test
  void customWindows_changeHowLongAProblemMustLast() {
    Insight quick =
        insight(
            ticker,
            Diagnostician.builder()
                .shortWindow(Duration.ofSeconds(4))
                .longWindow(Duration.ofSeconds(20))
                .build());
    quick.watch(llm);
    for (int i = 0; i < 20; i++) {
      second(quick, llm, 50, 0, 5, 100);
    }
    List<State> states = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      states.add(second(quick, llm, 100, 30, 10, 100).state());
    }
    assertThat(states)
        .containsExactly(
            State.HEALTHY, State.LIMIT_TOO_LOW, State.LIMIT_TOO_LOW, State.LIMIT_TOO_LOW);
  }
}
