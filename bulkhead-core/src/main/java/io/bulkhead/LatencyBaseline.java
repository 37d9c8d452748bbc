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
