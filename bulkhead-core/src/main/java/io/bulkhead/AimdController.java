package io.bulkhead;

import io.bulkhead.internal.Durations;
import java.time.Duration;
import java.util.Objects;

/*
 * Additive increase, multiplicative decrease, on the interval's admitted p50.
 *
 * Per interval with at least one timed call: if p50 is above the threshold, the limit times
 * `backoff` (at least one less), but not below one back-off step under what the dependency was seen
 * to sustain: `served`, the most calls in flight in recent intervals whose p50 was within the
 * threshold (a maximum that decays by 10% per such interval), and never below half of `good`, the
 * last limit at which p50 was within it. Latency far above normal alone does not say the dependency
 * is overloaded (it may just have got slower); cutting further below what it served within the
 * threshold would cut its goodput rather than a queue inside it. Else, if demand reached the limit,
 * limit + 1; else keep. The threshold is fixed, or `tolerance` times the long-term baseline (LatencyBaseline).
 * Single-threaded (see LimitController).
 */
final class AimdController implements LimitController {

  private final double tolerance;
  private final long fixedThreshold; // 0: tolerance * baseline
  private final double backoff;
  private final LatencyBaseline baseline = new LatencyBaseline(100);
  private int good = -1;
  private double served;

  AimdController(double tolerance, double backoff) {
    this.tolerance = tolerance;
    this.fixedThreshold = 0;
    this.backoff = backoff;
  }

  AimdController(Duration threshold, double backoff) {
    Objects.requireNonNull(threshold, "threshold");
    if (threshold.isNegative() || threshold.isZero()) {
      throw new IllegalArgumentException(
          "aimd threshold must be positive but was " + Durations.format(threshold));
    }
    this.tolerance = 0;
    this.fixedThreshold = Durations.toNanosSaturated(threshold);
    this.backoff = backoff;
  }

  @Override
  public String name() {
    return "aimd";
  }

  @Override
  public Decision next(Sample s) {
    int limit = s.limit();
    long p50 = LatencyBaseline.p50(s);
    if (p50 < 0) {
      return new Decision(limit, "no timed call finished");
    }
    double base = baseline.update(p50, s);
    if (good < 0) {
      good = limit;
    }
    long threshold = fixedThreshold > 0 ? fixedThreshold : (long) (tolerance * base);
    String against =
        fixedThreshold > 0
            ? "the threshold of " + Durations.format(threshold)
            : tolerance + " × the baseline of " + Durations.format((long) base);
    if (p50 > threshold) {
      int floor = Math.min(good, Math.max((good + 1) / 2, (int) Math.ceil(served * backoff)));
      int next = Math.max(floor, Math.min(limit - 1, (int) Math.floor(limit * backoff)));
      return new Decision(
          Math.min(limit, next), "admitted p50 " + Durations.format(p50) + " is above " + against);
    }
    good = limit;
    served = Math.max(Math.min(s.inFlight(), limit), served * 0.9);
    if (s.saturated()) {
      return new Decision(
          limit + 1,
          "demand reached the limit and admitted p50 "
              + Durations.format(p50)
              + " is within "
              + against);
    }
    return new Decision(limit, "demand below the limit");
  }

  @Override
  public String toString() {
    return fixedThreshold > 0
        ? "aimd(threshold=" + Durations.format(fixedThreshold) + ", backoff=" + backoff + ")"
        : "aimd(tolerance=" + tolerance + ", backoff=" + backoff + ")";
  }
}
