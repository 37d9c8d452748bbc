package io.bulkhead;

import io.bulkhead.internal.Durations;
import java.time.Duration;
import java.util.Objects;

/*
 * Additive increase, multiplicative decrease, on the interval's admitted p50.
 *
 * Per interval with at least one timed call: if p50 is above the threshold, the limit times
 * `backoff` (at least one less), but never below half of `good`, the limit of the last interval
 * whose p50 was within the threshold: latency far above normal alone halves the limit at most,
 * since a dependency that got slower is not necessarily overloaded and cutting further would only
 * cut its goodput. Else, if demand reached the limit, limit + 1; else keep. The threshold is fixed,
 * or `tolerance` times the long-term baseline (LatencyBaseline: a rise becomes the new normal only
 * after it lasts). Single-threaded (see LimitController).
 */
final class AimdController implements LimitController {

  private final double tolerance;
  private final long fixedThreshold; // 0: tolerance * baseline
  private final double backoff;
  private final LatencyBaseline baseline = new LatencyBaseline(100);
  private int good = -1;

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
    if (s.latency().count() == 0) {
      return new Decision(limit, "no timed call finished");
    }
    long p50 = Math.max(1, s.latency().percentileNanos(0.5));
    double base = baseline.before(p50);
    baseline.learn(p50, s.saturated());
    if (good < 0) {
      good = limit;
    }
    long threshold = fixedThreshold > 0 ? fixedThreshold : (long) (tolerance * base);
    String against =
        fixedThreshold > 0
            ? "the threshold of " + Durations.format(threshold)
            : tolerance + " × the baseline of " + Durations.format((long) base);
    if (p50 > threshold) {
      int floor = (good + 1) / 2;
      int next = Math.max(floor, Math.min(limit - 1, (int) Math.floor(limit * backoff)));
      return new Decision(
          Math.min(limit, next),
          "admitted p50 " + Durations.format(p50) + " is above " + against);
    }
    good = limit;
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
