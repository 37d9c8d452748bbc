package io.bulkhead;

import io.bulkhead.internal.Durations;

/*
 * Gradient controller (after concurrency-limits' Gradient2, on the interval's admitted p50 rather
 * than per-call round trips).
 *
 * Per interval with at least one timed call: gradient = clamp(tolerance * baseline / p50, 0.5, 1);
 * target = limit * gradient, plus sqrt(limit) when the gradient is 1 and demand reached the limit;
 * the limit moves by `smoothing` of the way to the target (rounded away from the current limit, so
 * a move of less than one slot still moves). The baseline is an exponential mean of p50 over about
 * `window` intervals; it follows a falling p50 fast (half the way per interval), so a recovery is not
 * held back by the slow phase's memory, and a rising one slowly, so a degradation lowers the limit
 * before the baseline learns it as the new normal. An interval without timed calls keeps everything.
 *
 * Single-threaded: the compartment calls next() from one thread at a time (see LimitController).
 */
final class GradientController implements LimitController {

  private final double tolerance;
  private final double smoothing;
  private final double alpha;
  private double baseline = -1;
  private long lastP50 = -1;

  GradientController(double tolerance, double smoothing, int window) {
    this.tolerance = tolerance;
    this.smoothing = smoothing;
    this.alpha = 2.0 / (window + 1);
  }

  @Override
  public String name() {
    return "gradient";
  }

  @Override
  public Decision next(Sample s) {
    int limit = s.limit();
    if (s.latency().count() == 0) {
      return new Decision(limit, "no timed call finished");
    }
    long p50 = Math.max(1, s.latency().percentileNanos(0.5));
    long previous = lastP50 < 0 ? p50 : lastP50;
    lastP50 = p50;
    if (baseline < 0) {
      baseline = p50;
    }
    double base = baseline;
    double gradient = Math.max(0.5, Math.min(1.0, tolerance * base / p50));
    double target = limit * gradient;
    boolean grow = gradient >= 1.0 && s.saturated();
    if (grow) {
      target += Math.max(1.0, Math.sqrt(limit));
    }
    double smoothed = limit + (target - limit) * smoothing;
    int next = (int) (smoothed < limit ? Math.floor(smoothed) : Math.ceil(smoothed));
    baseline += (p50 - baseline) * (p50 < baseline ? 0.5 : alpha);
    String reason;
    if (gradient < 1.0) {
      reason =
          "admitted p50 rose from "
              + Durations.format(previous)
              + " to "
              + Durations.format(p50)
              + " against a baseline of "
              + Durations.format((long) base);
    } else if (grow) {
      reason =
          "demand reached the limit and admitted p50 "
              + Durations.format(p50)
              + " is within "
              + tolerance
              + " × the baseline of "
              + Durations.format((long) base);
    } else {
      reason = "demand below the limit";
      next = limit;
    }
    return new Decision(next, reason);
  }

  @Override
  public String toString() {
    return "gradient(tolerance=" + tolerance + ", smoothing=" + smoothing + ")";
  }
}
