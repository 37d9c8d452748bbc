package io.bulkhead;

/*
 * The long-term admitted p50 a controller compares each interval's p50 with.
 *
 * It follows a falling p50 half the way per interval, so a recovery is seen within an interval or
 * two. A rising one it learns only from intervals in which demand stayed below the limit (so the
 * queueing a pressed limit causes inside the dependency is never taken for its normal), by 1/window
 * of the gap and never by more than 1/window of itself: a lasting slowdown of k times becomes the
 * new normal after about window * ln(k) such intervals (bounded drift). Single-threaded, like the
 * controllers that own it.
 */
final class LatencyBaseline {

  private final int window;
  private double nanos = -1;

  LatencyBaseline(int window) {
    this.window = window;
  }

  /** The interval's admitted p50 (at least 1 ns), or -1 when no timed call finished in it. */
  static long p50(LimitController.Sample s) {
    return s.latency().count() == 0 ? -1 : Math.max(1, s.latency().percentileNanos(0.5));
  }

  /**
   * Learns {@code s}'s {@code p50} and returns the baseline it had before (see the methods below).
   */
  double update(long p50, LimitController.Sample s) {
    double before = before(p50);
    learn(p50, s.saturated());
    return before;
  }

  /** The baseline before {@code p50} is learnt (the first p50 itself). */
  double before(long p50) {
    if (nanos < 0) {
      nanos = p50;
    }
    return nanos;
  }

  /** Learns one interval's {@code p50}; {@code pressed}: demand reached the limit. */
  void learn(long p50, boolean pressed) {
    if (nanos < 0 || p50 <= nanos) {
      nanos = nanos < 0 ? p50 : nanos + (p50 - nanos) / 2;
    } else if (!pressed) {
      nanos += Math.min((p50 - nanos) / window, nanos / window);
    }
  }
}
