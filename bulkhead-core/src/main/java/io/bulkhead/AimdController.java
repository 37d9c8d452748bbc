package io.bulkhead;

import io.bulkhead.internal.Durations;
import java.time.Duration;
import java.util.Objects;

/*
 * Additive increase, multiplicative decrease, on the interval's admitted p50.
 *
 * Per interval with at least one timed call: if p50 is above the threshold, limit * backoff (at
 * least one less); else, if demand reached the limit, limit + 1; else keep. The threshold is fixed,
 * or `tolerance` times a baseline: the lowest p50 seen, drifting up by 1/50 of the gap per interval
 * so that a lasting change of the normal is learnt. Single-threaded (see LimitController).
 */
final class AimdController implements LimitController {

  private final double tolerance;
  private final long fixedThreshold; // 0: tolerance * baseline
  private final double backoff;
  private double baseline = -1;

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
    if (baseline < 0) {
      baseline = p50;
    }
    long threshold = fixedThreshold > 0 ? fixedThreshold : (long) (tolerance * baseline);
    String against =
        fixedThreshold > 0
            ? "the threshold of " + Durations.format(threshold)
            : tolerance + " × the baseline of " + Durations.format((long) baseline);
    baseline += p50 < baseline ? p50 - baseline : (p50 - baseline) / 50.0;
    if (p50 > threshold) {
      int next = Math.min(limit - 1, (int) Math.floor(limit * backoff));
      return new Decision(next, "admitted p50 " + Durations.format(p50) + " is above " + against);
    }
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
