package io.bulkhead;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/*
 * The measurements an adaptive compartment feeds its controller, and where its limit stands.
 *
 * Algorithm
 * ---------
 * A timed release records its admitted latency into `buckets` (one atomic add per bucket and one to
 * `sum`), raises `maxInFlight` (a racy opaque max: a lost raise only understates one interval's peak)
 * and compares the ticker reading with `dueAt`. The first release at or past `dueAt` wins one CAS that
 * moves `dueAt` an interval on, and that thread alone drains the interval (getAndSet(0) on each bucket)
 * and asks the controller; every other release pays one volatile read. Nothing here takes a lock.
 *
 * Invariants
 * ----------
 *   A1 at most one thread decides at a time per interval: a decision starts only after a CAS on
 *      `dueAt`, which moves it at least one interval past the winner's reading; a decision that takes
 *      longer than an interval can overlap the next one, so the controller is also guarded by
 *      `deciding` (a CAS flag, not a lock: a loser skips, it never waits).
 *   A2 each recorded sample is drained exactly once: getAndSet(0) takes what is there, a sample added
 *      after it counts in the next interval. A drain can split an interval's samples between two
 *      summaries at its edge; none is lost or counted twice.
 *
 * Races
 * -----
 *   D1 record vs drain. T1 adds to bucket b after T2's drain read b's count but before T2 read `sum`:
 *      the summary's mean is off by one sample until the next interval. Percentiles (what the
 *      controllers use) come from the buckets only.
 *   D2 decision vs a budget's request to give back. T1 decides 8 while T2, for the budget, lowers the
 *      limit to 5. Both go through the compartment's setLimit path under its lock, in some order; the
 *      later one wins, and the budget checks every raise, so the sum never exceeds the capacity.
 */
final class Adaptation {

  private static final VarHandle MAX_IN_FLIGHT;

  static {
    try {
      MAX_IN_FLIGHT =
          MethodHandles.lookup().findVarHandle(Adaptation.class, "maxInFlight", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final AdaptiveLimit settings;
  final long intervalNanos;
  private final AtomicLongArray buckets = new AtomicLongArray(Histograms.BUCKETS);
  private final AtomicLong sum = new AtomicLong();
  // Racy opaque max like maxInFlight: a lost raise reports a slightly lower max for one interval.
  private final AtomicLong max = new AtomicLong();
  private final AtomicLong dueAt;
  private final java.util.concurrent.atomic.AtomicBoolean deciding =
      new java.util.concurrent.atomic.AtomicBoolean();

  @SuppressWarnings("unused") // through MAX_IN_FLIGHT
  private int maxInFlight;

  long lastRejected; // written by the deciding thread only (A1)
  final AtomicReference<AdaptiveLimit.Status> status;

  Adaptation(AdaptiveLimit settings, int limit, long now) {
    this.settings = settings;
    this.intervalNanos = settings.interval().toNanos();
    this.dueAt = new AtomicLong(now + intervalNanos);
    this.status =
        new AtomicReference<>(
            new AdaptiveLimit.Status(
                settings.controller().name(),
                settings.min(),
                settings.max(),
                limit,
                0,
                limit,
                limit,
                ""));
  }

  /** Records one timed release; returns whether this thread must decide now. */
  boolean record(long now, long held, int inFlight) {
    buckets.getAndIncrement(Histograms.bucketOf(held));
    sum.getAndAdd(held);
    if (held > max.getOpaque()) {
      max.setOpaque(held);
    }
    if (inFlight > (int) MAX_IN_FLIGHT.getOpaque(this)) {
      MAX_IN_FLIGHT.setOpaque(this, inFlight);
    }
    long due = dueAt.get();
    return now - due >= 0 && dueAt.compareAndSet(due, now + intervalNanos);
  }

  boolean startDeciding() {
    return deciding.compareAndSet(false, true);
  }

  void doneDeciding() {
    deciding.set(false);
  }

  /** Takes the interval's latency summary (A2). */
  LatencySummary drainLatency() {
    long[] counts = new long[Histograms.BUCKETS];
    long top = 0;
    for (int i = 0; i < counts.length; i++) {
      counts[i] = buckets.getAndSet(i, 0);
      if (counts[i] > 0) {
        top = Histograms.lowerBound(i);
      }
    }
    // The max is at least the highest occupied bucket's lower bound, whatever the races (D1).
    return new LatencySummary(counts, sum.getAndSet(0), Math.max(top, max.getAndSet(0)));
  }

  int drainMaxInFlight(int now) {
    int seen = (int) MAX_IN_FLIGHT.getOpaque(this);
    MAX_IN_FLIGHT.setOpaque(this, 0);
    return Math.max(seen, now);
  }

  void moved(int from, int to, String reason) {
    status.updateAndGet(
        s ->
            new AdaptiveLimit.Status(
                s.controller(), s.min(), s.max(), to, s.changes() + 1, from, to, reason));
  }

  int clamp(int limit) {
    return Math.max(settings.min(), Math.min(settings.max(), limit));
  }
}
