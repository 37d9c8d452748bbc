package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The oracle for adaptive compartments in a budget: three compartments share a capacity of 20, a
 * script drives their demand and their dependency's latency on a fake ticker, and the test's own
 * fake dependency counts the calls inside it. At every call that enters, the sum inside must be at
 * most the capacity; after every step, each compartment with demand must run at least min(demand,
 * its minimum).
 */
class AdaptiveBudgetTest {

  private static final int CAPACITY = 20;
  private static final int MIN = 4;

  private final FakeTicker ticker = new FakeTicker();
  private final Budget budget = Budget.of("llm-api", CAPACITY);
  private long now; // in ticks of one second

  /** The fake dependency: counts what is inside, whatever the library says. */
  private final class Dependency {
    int inside;
    int maxInside;
    long overCapacity;

    void enter() {
      inside++;
      maxInside = Math.max(maxInside, inside);
      if (inside > CAPACITY) {
        overCapacity++;
      }
    }

    void leave() {
      inside--;
    }
  }

  private final Dependency dependency = new Dependency();

  /** One compartment, its scripted demand and latency, and the calls it has inside. */
  private final class Tenant {
    final Bulkhead bulkhead;
    final ArrayDeque<long[]> ends = new ArrayDeque<>(); // {end tick}
    final ArrayDeque<Permit> permits = new ArrayDeque<>();
    int demand;
    int latencyTicks = 1;
    int inside;
    final List<Integer> limits = new ArrayList<>();

    Tenant(String name) {
      bulkhead =
          Bulkhead.builder(name)
              .limit(MIN)
              .ticker(ticker)
              .budget(budget)
              .adaptive(AdaptiveLimit.of(LimitController.gradient(), MIN, 16))
              .build();
    }

    void finishDue() {
      while (!ends.isEmpty() && ends.peekFirst()[0] <= now) {
        ends.pollFirst();
        dependency.leave();
        inside--;
        permits.pollFirst().close(); // the release may ask the controller and the budget
      }
    }

    void topUp() {
      while (inside < demand) {
        Optional<Permit> p = bulkhead.tryAcquire();
        if (p.isEmpty()) {
          return;
        }
        permits.addLast(p.get());
        ends.addLast(new long[] {now + latencyTicks});
        inside++;
        dependency.enter();
      }
    }
  }

  @Test
  void threeAdaptiveCompartments_neverExceedTheCapacity_andEachKeepsItsMinimum() {
    Tenant a = new Tenant("chat");
    Tenant b = new Tenant("search");
    Tenant c = new Tenant("summarise");
    List<Tenant> all = List.of(a, b, c);
    long minimumViolations = 0;
    Map<String, Integer> peak = new LinkedHashMap<>();
    // tick: demand of a, b, c; latency of a, b, c (ticks)
    int[][] script = {
      {30, 0, 0, 1, 1, 1}, // chat alone: grows into what the others do not use
      {30, 10, 0, 1, 1, 1}, // search wants its share: chat gives back down to its fair share
      {30, 10, 0, 8, 1, 1}, // chat's dependency slows down: its limit drops, search borrows
      {30, 10, 10, 1, 1, 1}, // summarise arrives as chat recovers: everyone at its fair share
      {0, 10, 10, 1, 1, 1}, // chat's demand ends: its share is lent to the others
      {30, 30, 30, 2, 2, 2}, // everyone saturates
    };
    for (int[] phase : script) {
      for (int i = 0; i < 3; i++) {
        all.get(i).demand = phase[i];
        all.get(i).latencyTicks = phase[3 + i];
      }
      for (int t = 0; t < 25; t++) {
        now++;
        ticker.advance(Duration.ofSeconds(1));
        for (Tenant x : all) {
          x.finishDue();
        }
        for (Tenant x : all) {
          x.topUp();
        }
        int sumOfLimits = 0;
        for (Tenant x : all) {
          if (x.inside < Math.min(x.demand, MIN)) {
            minimumViolations++;
          }
          x.limits.add(x.bulkhead.config().limit());
          sumOfLimits += x.bulkhead.config().limit();
          peak.merge(x.bulkhead.name(), x.inside, Math::max);
        }
        assertThat(budget.allocated()).isLessThanOrEqualTo(CAPACITY);
        assertThat(sumOfLimits).isLessThanOrEqualTo(CAPACITY);
      }
    }
    System.out.printf(
        "AdaptiveBudgetTest capacity=%d maxSumInFlight=%d overCapacity=%d minimumViolations=%d"
            + " peaks=%s%n",
        CAPACITY, dependency.maxInside, dependency.overCapacity, minimumViolations, peak);
    for (Tenant x : all) {
      System.out.println("  " + x.bulkhead.name() + " limit path " + x.limits);
      System.out.println("  " + x.bulkhead.name() + " " + x.bulkhead.adaptive().orElseThrow());
    }
    assertThat(dependency.overCapacity).isZero();
    assertThat(dependency.maxInside).isLessThanOrEqualTo(CAPACITY);
    assertThat(minimumViolations).isZero();
    // The script made them share: each grew past its minimum at some point, and the capacity was
    // used in full when all three wanted more than it.
    assertThat(peak.values()).allMatch(p -> p > MIN);
    assertThat(dependency.maxInside).isEqualTo(CAPACITY);
    // Phase 2: chat gave back to search's fair share (4 + 8 / 3 = 6) without preempting a call.
    int fair = MIN + (CAPACITY - 3 * MIN) / 3;
    assertThat(b.limits.get(2 * 25 - 1)).isGreaterThanOrEqualTo(fair);
  }
}
