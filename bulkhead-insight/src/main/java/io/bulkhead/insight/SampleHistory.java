package io.bulkhead.insight;

import static io.bulkhead.insight.Diagnosis.NONE;

import io.bulkhead.BulkheadStats;
import io.bulkhead.insight.Diagnosis.State;
import io.bulkhead.internal.Durations;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.ReentrantLock;

/*
 * One compartment's sample history, from which its Diagnosis is judged: the samples of the long
 * window, the state with its hysteresis, and the normal latency learnt while healthy. An Insight keeps
 * one per watched compartment and feeds it every sample; the thresholds come from a Diagnostician.
 *
 * Algorithm: record() appends a sample, drops those older than the long window, computes the
 * short-window figures from the samples within it (deltas of cumulative counters between its first
 * and last sample; per-interval flags between neighbours), then moves the state machine one step:
 *
 *   rejecting  = ratio >= ratioEnter && spread >= spreadEnter          (from HEALTHY or SATURATED)
 *              = ratio >= ratioExit  && spread >= spreadExit           (while already rejecting)
 *   rising     = latency >= riseEnter|riseExit * normal && latency - normal >= floor
 *   saturated  = saturation >= satEnter (from HEALTHY) | satExit (from any other state)
 *   state      = rejecting ? (rising ? DEPENDENCY_DEGRADING : LIMIT_TOO_LOW)
 *                          : (saturated ? SATURATED : HEALTHY)
 *
 * Invariants: samples are in strictly increasing ticker order; the normal latency only ever comes
 * from samples whose state was HEALTHY and that were not in the short window that led out of HEALTHY
 * (the onset of an episode); it is frozen (kept) while no such sample is left in the long window.
 *
 * Concurrency: all mutable fields are guarded by `lock`, held only for the arithmetic of one sample
 * (no stats read, no user code). `latest` is volatile and written last, so a reader sees a complete
 * Diagnosis without the lock.
 *   T1 and T2 both call Insight.sample(): T1 reads the ticker (t1), T2 reads it (t2 > t1), T2
 *   records first. T1 then finds t1 not newer than the last sample and drops its own: samples stay in
 *   ticker order. If T1 read its stats after T2 but records first, T2's counters can look lower than
 *   T1's; deltas are clamped at zero, so a rate is never negative (one interval reads as quiet).
 */
final class SampleHistory {

  private static final class Sample {
    final long at;
    final int inFlight;
    final int limit;
    final int waiting;
    final long admitted;
    final long rejected;
    final long completed;
    final long latencyMean; // NONE when no call finished in the stats window
    boolean learnable; // a healthy sample that may teach the normal latency; guarded by the lock

    Sample(long at, BulkheadStats s) {
      this.at = at;
      this.inFlight = s.inFlight();
      this.limit = s.limit();
      this.waiting = s.waiting();
      this.admitted = s.admitted();
      this.rejected = s.rejected();
      this.completed = s.completed();
      this.latencyMean = s.latency().count() > 0 ? s.latency().mean().toNanos() : NONE;
    }

    boolean atLimit() {
      return inFlight >= limit || waiting > 0;
    }
  }

  private final String name;
  private final Diagnostician rules;
  private final ReentrantLock lock = new ReentrantLock();
  private final List<Sample> samples = new ArrayList<>(); // guarded by lock; oldest first
  private State state = State.HEALTHY; // guarded by lock
  private long stateSince; // guarded by lock
  private long normalLatency = NONE; // guarded by lock
  private volatile Diagnosis latest;

  SampleHistory(Diagnostician rules, String name, long now) {
    this.rules = rules;
    this.name = name;
    this.stateSince = now;
    this.latest =
        new Diagnosis(
            name, State.HEALTHY, 0, false, 0, 0, 0, 0, 0, 0, 0, NONE, NONE, "not sampled yet");
  }

  Diagnosis latest() {
    return latest;
  }

  Diagnosis record(long now, BulkheadStats stats) {
    lock.lock();
    try {
      if (!samples.isEmpty() && now - samples.get(samples.size() - 1).at <= 0) {
        return latest; // older than (or as old as) what we have: see the T1/T2 note above
      }
      Sample cur = new Sample(now, stats);
      samples.add(cur);
      int dropped = 0;
      while (now - samples.get(dropped).at > rules.longWindowNanos) {
        dropped++;
      }
      samples.subList(0, dropped).clear();

      int n = samples.size();
      int first = n - 1;
      while (first > 0 && now - samples.get(first - 1).at <= rules.shortWindowNanos) {
        first--;
      }
      Sample anchor = samples.get(first);
      long span = now - anchor.at;
      int intervals = n - 1 - first;
      double seconds = span / 1e9;

      long admitted = Math.max(0, cur.admitted - anchor.admitted);
      long rejected = Math.max(0, cur.rejected - anchor.rejected);
      long completed = Math.max(0, cur.completed - anchor.completed);
      double admittedRate = seconds > 0 ? admitted / seconds : 0;
      double rejectionRate = seconds > 0 ? rejected / seconds : 0;
      double ratio = admitted + rejected > 0 ? (double) rejected / (admitted + rejected) : 0;

      int rejectingIntervals = 0;
      int fullIntervals = 0;
      long inFlightSum = anchor.inFlight;
      for (int i = first + 1; i < n; i++) {
        Sample prev = samples.get(i - 1);
        Sample x = samples.get(i);
        if (x.rejected > prev.rejected) {
          rejectingIntervals++;
        }
        if (x.atLimit()) {
          fullIntervals++;
        }
        inFlightSum += x.inFlight;
      }
      double spread = intervals > 0 ? (double) rejectingIntervals / intervals : 0;
      double saturation = intervals > 0 ? (double) fullIntervals / intervals : 0;

      Sample oldest = samples.get(0);
      long longSpan = now - oldest.at;
      double longRejectionRate =
          longSpan > 0 ? Math.max(0, cur.rejected - oldest.rejected) / (longSpan / 1e9) : 0;

      long latency = cur.latencyMean;
      if (intervals > 0) {
        long inFlightEstimate = NONE;
        if (completed > 0) {
          double meanInFlight = (double) inFlightSum / (intervals + 1);
          inFlightEstimate = (long) (meanInFlight * span / completed);
        } else if (anchor.inFlight > 0) {
          // Nothing finished, so whatever was in flight at the start has been held all along.
          inFlightEstimate = span;
        }
        latency = Math.max(latency, inFlightEstimate);
      }
      long learnt = medianHealthyLatency(n - 1);
      if (learnt != NONE) {
        normalLatency = learnt;
      }

      boolean judged =
          intervals >= Diagnostician.MIN_INTERVALS && span * 2 >= rules.shortWindowNanos;
      State prev = state;
      State next = prev;
      if (judged) {
        boolean wasRejecting = prev == State.LIMIT_TOO_LOW || prev == State.DEPENDENCY_DEGRADING;
        boolean rejecting =
            wasRejecting
                ? ratio >= rules.rejectionRatioExit && spread >= rules.rejectionSpreadExit
                : ratio >= rules.rejectionRatioEnter && spread >= rules.rejectionSpreadEnter;
        if (rejecting) {
          double rise =
              prev == State.DEPENDENCY_DEGRADING ? rules.latencyRiseExit : rules.latencyRiseEnter;
          boolean rising =
              latency != NONE
                  && normalLatency != NONE
                  && latency - normalLatency >= rules.latencyFloorNanos
                  && latency >= rise * normalLatency;
          next = rising ? State.DEPENDENCY_DEGRADING : State.LIMIT_TOO_LOW;
        } else {
          double level = prev == State.HEALTHY ? rules.saturationEnter : rules.saturationExit;
          next = saturation >= level ? State.SATURATED : State.HEALTHY;
        }
      }
      if (next != prev) {
        state = next;
        stateSince = now;
        if (prev == State.HEALTHY) {
          // The window that made us leave HEALTHY is the start of the episode, not normal
          // behaviour:
          // without this, those few samples would be the only "healthy" ones left a minute into a
          // long incident, and the incident's latency would become the normal one.
          for (int i = first; i < n - 1; i++) {
            samples.get(i).learnable = false;
          }
        }
      }
      cur.learnable = state == State.HEALTHY && cur.latencyMean != NONE;

      String explanation =
          judged
              ? explain(
                  state,
                  span,
                  intervals,
                  rejectingIntervals,
                  saturation,
                  ratio,
                  rejectionRate,
                  latency,
                  normalLatency)
              : String.format(
                  Locale.ROOT,
                  "warming up: %s sampled in %d interval%s; judging needs %s"
                      + " in at least %d; keeping %s",
                  Durations.format(span),
                  intervals,
                  intervals == 1 ? "" : "s",
                  Durations.format(rules.shortWindowNanos / 2),
                  Diagnostician.MIN_INTERVALS,
                  state);
      Diagnosis d =
          new Diagnosis(
              name,
              state,
              now - stateSince,
              judged,
              span,
              saturation,
              admittedRate,
              rejectionRate,
              ratio,
              spread,
              longRejectionRate,
              latency,
              normalLatency,
              explanation);
      latest = d;
      return d;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The median latency of the healthy samples before index {@code end}, or NONE if there are none.
   */
  private long medianHealthyLatency(int end) {
    long[] values = new long[end];
    int count = 0;
    for (int i = 0; i < end; i++) {
      Sample s = samples.get(i);
      if (s.learnable) {
        values[count++] = s.latencyMean;
      }
    }
    if (count == 0) {
      return NONE;
    }
    Arrays.sort(values, 0, count);
    return values[count / 2];
  }

  private static String explain(
      State state,
      long span,
      int intervals,
      int rejectingIntervals,
      double saturation,
      double ratio,
      double rejectionRate,
      long latency,
      long normal) {
    String window = Durations.format(span);
    String rejecting =
        String.format(
            Locale.ROOT,
            "rejecting %s of calls (%.1f/s, in %d of %d" + " intervals)",
            percent(ratio),
            rejectionRate,
            rejectingIntervals,
            intervals);
    switch (state) {
      case HEALTHY:
        return String.format(
            Locale.ROOT,
            "healthy: at the limit in %s of the last %s, %s",
            percent(saturation),
            window,
            rejectedPhrase(ratio, rejectingIntervals, intervals));
      case SATURATED:
        return String.format(
            Locale.ROOT,
            "saturated: at the limit in %s of the last %s, %s%s",
            percent(saturation),
            window,
            rejectedPhrase(ratio, rejectingIntervals, intervals),
            rejectingIntervals == 0
                ? ": working as designed; rejections come next if demand stays"
                : "");
      case LIMIT_TOO_LOW:
        return "limit too low: "
            + rejecting
            + " while "
            + latencyPhrase(latency, normal)
            + ": the limit is too low for the demand, or demand grew";
      case DEPENDENCY_DEGRADING:
        return "dependency degrading: "
            + rejecting
            + " while "
            + latencyPhrase(latency, normal)
            + ": look at the dependency, not at the limit";
      default:
        throw new AssertionError(state);
    }
  }

  /** "0% of calls rejected", or "88% of calls rejected, in only 2 of 10 intervals (a burst)". */
  private static String rejectedPhrase(double ratio, int rejectingIntervals, int intervals) {
    String share = percent(ratio) + " of calls rejected";
    if (rejectingIntervals == 0) {
      return share;
    }
    return String.format(
        Locale.ROOT,
        "%s, in only %d of %d intervals (a burst, not a trend)",
        share,
        rejectingIntervals,
        intervals);
  }

  private static String latencyPhrase(long latency, long normal) {
    if (latency == NONE) {
      return "no admitted call finished or was in flight to measure latency";
    }
    String now = "admitted calls take " + Durations.format(latency);
    if (normal == NONE) {
      return now + ", with no healthy period seen yet to learn their normal latency";
    }
    String against = " against a normal " + Durations.format(normal);
    return normal == 0
        ? now + against
        : now + against + String.format(Locale.ROOT, " (%.1fx)", (double) latency / normal);
  }

  private static String percent(double share) {
    double p = share * 100;
    return p > 0 && p < 1
        ? String.format(Locale.ROOT, "%.1f%%", p)
        : String.format(Locale.ROOT, "%.0f%%", p);
  }
}
