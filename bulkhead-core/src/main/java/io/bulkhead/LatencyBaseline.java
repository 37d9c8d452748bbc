package io.bulkhead;

/*
 * The long-term admitted p50 a controller compares each interval's p50 with.
 *
 * It follows a falling p50 half the way per interval, so a recovery is seen within an interval or
 * two, and a rising one by 1/window of the gap but never by more than 1/window of itself: a lasting
 * slowdown of k times becomes the new normal only after about window * ln(k) intervals, so neither
 * a step of the dependency's latency nor the queueing a high limit causes drags the baseline along
 * within an episode (bounded drift). Single-threaded, like the controllers that own it.
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

  /** Learns one interval's {@code p50}. */
  void learn(long p50) {
    if (nanos < 0 || p50 <= nanos) {
      nanos = nanos < 0 ? p50 : nanos + (p50 - nanos) / 2;
    } else {
      nanos += Math.min((p50 - nanos) / window, nanos / window);
    }
  }
}
