package io.bulkhead;

import io.bulkhead.internal.Durations;

/*
 * Gradient controller (after concurrency-limits' Gradient2, on the interval's admitted p50 rather
 * than per-call round trips).
 *
 * Per interval with at least one timed call, with b the long-term baseline (LatencyBaseline) and
 * r = tolerance * b / p50:
 *   - r < 1 (latency rose past the tolerance): target = limit * max(r, 0.5) + queue; the limit
 *     drops to floor(target) when that is lower and otherwise stays, so it settles where
 *     limit * (1 - r) = queue instead of dithering; and it never drops below half of `good`, the
 *     last limit at which latency was within tolerance: a latency rise alone halves the limit at
 *     most, since below that the slots it frees no longer queue inside the dependency but cut what
 *     it completes (a dependency that got slower is not necessarily overloaded).
 *   - r >= 1 and demand reached the limit: after a drop (limit < good) with p50 back at the
 *     baseline, the limit returns to `good` at once (the latency it was chosen for is back);
 *     otherwise `good` becomes the limit and the limit grows by ceil(queue / 2).
 *   - otherwise the limit stays.
 * An interval without timed calls keeps everything.
 *
 * Single-threaded: the compartment calls next() from one thread at a time (see LimitController).
 */
final class GradientController implements LimitController {

  private final double tolerance;
  private final int queue;
  private final LatencyBaseline baseline;
  private long lastP50 = -1;
  private int good = -1;

  GradientController(double tolerance, int queue, int window) {
    this.tolerance = tolerance;
    this.queue = queue;
    this.baseline = new LatencyBaseline(window);
  }

  @Override
  public String name() {
    return "gradient";
  }

  @Override
  public Decision next(Sample s) {
    int limit = s.limit();
    long p50 = LatencyBaseline.p50(s);
    if (p50 < 0) {
      return new Decision(limit, "no timed call finished");
    }
    long previous = lastP50 < 0 ? p50 : lastP50;
    lastP50 = p50;
    double base = baseline.update(p50, s);
    if (good < 0) {
      good = limit;
    }
    double ratio = tolerance * base / p50;
    if (ratio < 1.0) {
      int floor = (good + 1) / 2;
      int next = Math.max(floor, (int) Math.floor(limit * Math.max(0.5, ratio) + queue));
      return new Decision(
          Math.min(limit, next),
          "admitted p50 rose from "
              + Durations.format(previous)
              + " to "
              + Durations.format(p50)
              + " against a baseline of "
              + Durations.format((long) base));
    }
    if (limit >= good || (s.saturated() && p50 > base)) {
      good = limit; // latency within tolerance at this limit: what a later rise may halve
    }
    if (!s.saturated()) {
      return new Decision(limit, "demand below the limit");
    }
    String within =
        "demand reached the limit and admitted p50 "
            + Durations.format(p50)
            + " is within "
            + tolerance
            + " × the baseline of "
            + Durations.format((long) base);
    if (limit < good) {
      return new Decision(good, within + ": back to the limit it had before latency rose");
    }
    return new Decision(limit + (queue + 1) / 2, within);
  }

  @Override
  public String toString() {
    return "gradient(tolerance=" + tolerance + ", queue=" + queue + ")";
  }
}
