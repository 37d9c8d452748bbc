package io.bulkhead.benchmarks.peer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * What the app held, sampled at intervals during one run; times count from the moment the load
 * generator let the chats go.
 *
 * @param points the samples, oldest first
 */
record Timeline(List<Timeline.Point> points) {

  /**
   * One sample.
   *
   * @param atNanos when, counted from the start of the load
   * @param chatsWaiting server slots held by chats waiting for the chat guard's verdict
   * @param chatsCalling chats the guard admitted whose upstream call is under way
   * @param serverInFlight requests holding a server slot, on any route
   * @param serverWaiting requests queued for a server slot
   */
  record Point(
      long atNanos, int chatsWaiting, int chatsCalling, int serverInFlight, int serverWaiting) {}

  Timeline {
    points = List.copyOf(points);
  }

  /** The largest sampled value of {@code what}, or 0 with no samples. */
  int peak(ToIntFunction<Point> what) {
    int max = 0;
    for (Point p : points) {
      max = Math.max(max, what.applyAsInt(p));
    }
    return max;
  }

  /**
   * The area under {@code what} in unit-seconds: each sample's value holds until the next sample
   * (the last one contributes nothing). For chats waiting, slot-seconds held by waiting chats.
   */
  double integralSeconds(ToIntFunction<Point> what) {
    double sum = 0;
    for (int i = 0; i + 1 < points.size(); i++) {
      Point p = points.get(i);
      sum += what.applyAsInt(p) * (points.get(i + 1).atNanos() - p.atNanos()) / 1e9;
    }
    return sum;
  }

  /** When anything last waited (a chat for its guard, a request for a server slot); 0 if never. */
  long lastWaitingNanos() {
    long last = 0;
    for (Point p : points) {
      if (p.chatsWaiting() > 0 || p.serverWaiting() > 0) {
        last = p.atNanos();
      }
    }
    return last;
  }

  /** The longest gap between two samples: how late the sampler ever was on this machine. */
  long longestGapNanos() {
    long gap = 0;
    for (int i = 0; i + 1 < points.size(); i++) {
      gap = Math.max(gap, points.get(i + 1).atNanos() - points.get(i).atNanos());
    }
    return gap;
  }

  /**
   * The samples taken at or after {@code startNanos}, with their times counted from it. The sampler
   * starts a moment before the load does; what it saw then was an idle app.
   *
   * @param raw samples whose {@code atNanos} is a {@link System#nanoTime()} reading
   */
  static Timeline relativeTo(List<Point> raw, long startNanos) {
    List<Point> kept = new ArrayList<>();
    for (Point p : raw) {
      long at = p.atNanos() - startNanos;
      if (at >= 0) {
        kept.add(
            new Point(
                at, p.chatsWaiting(), p.chatsCalling(), p.serverInFlight(), p.serverWaiting()));
      }
    }
    return new Timeline(kept);
  }
}
