package io.bulkhead.redis;

import io.bulkhead.BulkheadFullException;
import java.lang.System.Logger.Level;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/*
 * The fallback policy of one fleet compartment: while Redis is unreachable, and for one lease TTL after
 * it answers again with an epoch this process cannot vouch for, calls are admitted by a static local
 * share (a Semaphore of `share` permits), or refused (share 0: fail closed).
 *
 * Invariants
 * ----------
 *   F1 calls admitted without a lease never exceed `share`: each holds a permit, given back once (the
 *      Ticket's CAS).
 *   F2 a fallback refusal is immediate (QUEUE_FULL, counted in refusedByFallback): nothing queues for a
 *      slot of the share.
 *   F3 every switch into fallback is counted once and logged once: `active` is CASed false -> true by
 *      exactly one thread per switch; back to false only by end().
 *
 * Races
 * -----
 *   rejoin window: startRejoining writes `againAt` before `rejoining`, so a reader that sees `rejoining`
 *      sees its window. Two callers that start it at once both log and restart the window: it only lasts
 *      longer.
 */
final class FallbackShare {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");

  private final String name;
  private final int share; // 0: fail closed
  private final Semaphore permits;
  private final long ttlMillis;
  private final Runnable onRelease;
  private final AtomicBoolean active;
  private volatile boolean rejoining;
  private volatile long againAt; // nanoTime at which the rejoin window ends
  final LongAdder switches = new LongAdder();
  final LongAdder refused = new LongAdder();

  /**
   * @param onRelease run when a slot of the share is given back (the lease line may use it)
   */
  FallbackShare(String name, int share, long ttlMillis, boolean activeNow, Runnable onRelease) {
    this.name = name;
    this.share = share;
    this.permits = new Semaphore(share);
    this.ttlMillis = ttlMillis;
    this.onRelease = onRelease;
    this.active = new AtomicBoolean(activeNow);
    if (activeNow) {
      switches.increment();
      log("cannot reach Redis (Redis is unreachable at start-up)", "until it answers");
    }
  }

  /** Whether calls are admitted by this policy now. */
  boolean active() {
    return active.get();
  }

  boolean rejoining() {
    return rejoining;
  }

  /** Whether the rejoin window has passed (valid while rejoining). */
  boolean windowPassed() {
    return System.nanoTime() - againAt >= 0;
  }

  /** Whether admissions must use the share now although Redis answers (the rejoin window). */
  boolean inRejoinWindow() {
    return active.get() && rejoining && !windowPassed();
  }

  /** Redis did not answer: switch (counted and logged once); the window starts afresh later. */
  void unreachable(String why) {
    rejoining = false;
    if (active.compareAndSet(false, true)) {
      switches.increment();
      log("cannot reach Redis (" + why + ")", "until it answers");
    }
  }

  /**
   * Keeps admitting by the share for one lease TTL: by then every process's renewal has registered
   * the calls it still runs (renewals come every third of a TTL), so the fleet's count is whole
   * again before this process trusts it. Logged once per window.
   */
  void startRejoining(String why) {
    againAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ttlMillis);
    rejoining = true;
    if (active.compareAndSet(false, true)) {
      switches.increment();
    }
    log(
        why,
        "for one lease TTL ("
            + ttlMillis
            + " ms) while the fleet registers the calls it still runs, then by fleet leases");
  }

  /** Leases count again. */
  void end() {
    rejoining = false;
    if (active.compareAndSet(true, false)) {
      LOG.log(Level.INFO, "compartment '" + name + "' admits by fleet leases again");
    }
  }

  /** A slot of the share, or the immediate refusal of the policy (never queued, F2). */
  Ticket slot() {
    if (share > 0 && permits.tryAcquire()) {
      return new Slot();
    }
    throw new Refusal(BulkheadFullException.Reason.QUEUE_FULL, refused);
  }

  /** Calls of this process admitted by the share now. */
  int inFlight() {
    return share - permits.availablePermits();
  }

  private void log(String why, String until) {
    LOG.log(
        Level.WARNING,
        "compartment '"
            + name
            + "': "
            + why
            + "; "
            + (share > 0
                ? "admitting at most " + share + " calls of this process without leases"
                : "refusing every call (failClosed)")
            + " "
            + until);
  }

  /** A slot of the share. */
  private final class Slot extends Ticket {
    @Override
    void giveBack() {
      permits.release();
      onRelease.run();
    }

    @Override
    boolean usable() {
      return true; // a local permit cannot be lost
    }
  }
}
