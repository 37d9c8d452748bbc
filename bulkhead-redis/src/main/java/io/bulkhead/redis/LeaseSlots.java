package io.bulkhead.redis;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/*
 * One process's lease on a batch of a fleet compartment's slots, in memory: what its calls are admitted
 * against and released to, without a round trip to Redis. LeaseSync keeps it granted in the background.
 *
 * State
 * -----
 * One word, moved by CAS: inUse (bits 0-29), cap (bits 30-59), FALLBACK (bit 62).
 *   inUse     calls running that took a slot: under the lease, or admitted by the fallback policy
 *   cap       how many may run: what Redis granted (LEASED), or the fallback share (FALLBACK)
 * and `admitUntil` (nanoTime): in LEASED mode a call is admitted only before it. It is the send time of
 * the last sync Redis answered, plus the lease TTL, minus a margin for the two clocks' rates. Redis keeps
 * the record that counts this process's slots until the time its script ran plus the TTL plus
 * maxCallDuration, by its own clock, which started counting after the send: so every call admitted
 * before admitUntil, and ending within maxCallDuration, ends before Redis can give its slot to another
 * process. The lease covers the call's deadline; nothing has to be renewed while a call runs.
 *
 * Invariants
 * ----------
 *   M1 cap <= the slots Redis records for this process, in LEASED mode: the cap changes only by a grant,
 *      after Redis recorded at least as much, and a sync reports max(cap, calls running) as kept, which
 *      Redis never records below. A lost reply leaves the cap as it was: Redis counts more, never less.
 *   M2 a slot is taken by one CAS that sees inUse < cap, and given back once (the Ticket's CAS).
 *   M3 in LEASED mode a call is admitted only if its slot was taken before admitUntil: the time is read
 *      after the CAS, and a slot taken too late is given back at once (it was never used).
 *   M4 in FALLBACK mode at most `cap` (the share) calls run, the calls still running under the lease
 *      included: a switch keeps inUse and sets the cap.
 *
 * Races, as interleavings
 * -----------------------
 *   take vs a lowering grant: both CAS the word; a take that loses retries against the lower cap.
 *      Calls already running above it drain: no slot is taken while inUse >= cap.
 *   take vs the clock: a taker reads admitUntil after its CAS; a sync that extends it meanwhile only
 *      makes the check pass sooner. A taker paused between the check and its call is the paused
 *      process of the documented worst case.
 *   grant vs take: grant writes admitUntil before the CAS that clears FALLBACK or raises the cap, so a
 *      taker that sees the new word reads the new admitUntil.
 *   lapse vs grant: both CAS the word; lapse switches only if admitUntil has passed when it reads it
 *      after a fresh read of the word, and a grant that lands after the switch leaves FALLBACK again.
 */
final class LeaseSlots {

  static final int NONE = 0;
  static final int LEASED = 1;
  static final int FALLBACK = 2;

  /** The largest limit a fleet compartment may have: 30 bits of the word. */
  static final int MAX_SLOTS = (1 << 30) - 1;

  private static final long IN_USE = MAX_SLOTS;
  private static final int CAP_SHIFT = 30;
  private static final long FALLBACK_BIT = 1L << 62;

  private final AtomicLong word;
  private volatile long admitUntil;
  private volatile long fencingToken;
  // Demand: the most calls running or waiting since the last sync, and the calls that found no
  // slot.
  private volatile int peak;
  private final LongAdder unmet = new LongAdder();
  private int lastPeak; // confined to the sync thread

  /** Starts in FALLBACK with {@code share} slots: nothing is granted before the first sync. */
  LeaseSlots(int share) {
    this.word = new AtomicLong(FALLBACK_BIT | ((long) share << CAP_SHIFT));
    this.admitUntil = System.nanoTime();
  }

  static int inUse(long w) {
    return (int) (w & IN_USE);
  }

  static int cap(long w) {
    return (int) ((w >>> CAP_SHIFT) & IN_USE);
  }

  static boolean inFallback(long w) {
    return (w & FALLBACK_BIT) != 0;
  }

  long word() {
    return word.get();
  }

  long fencingToken() {
    return fencingToken;
  }

  /**
   * Takes a slot if one is free (M2, M3): LEASED or FALLBACK, the mode it was taken in, or NONE.
   */
  int tryTake() {
    for (; ; ) {
      long w = word.get();
      int used = inUse(w);
      if (used >= cap(w)) {
        return NONE;
      }
      if (word.compareAndSet(w, w + 1)) {
        boolean fallback = inFallback(w);
        if (!fallback && System.nanoTime() - admitUntil >= 0) {
          word.decrementAndGet(); // M3: too late for the lease to cover a call; never used
          return NONE;
        }
        if (used + 1 > peak) {
          peak = used + 1; // a racy maximum: a lost update only lowers one sample of the demand
        }
        return fallback ? FALLBACK : LEASED;
      }
    }
  }

  /** Whether a call that took a slot earlier may still start under it now (LEASED). */
  boolean coversFromNow() {
    return System.nanoTime() - admitUntil < 0;
  }

  /** Gives a slot back (M2). */
  void giveBack() {
    word.decrementAndGet();
  }

  /** A call found no slot: part of the demand the next sync reports. */
  void noteUnmet() {
    unmet.increment();
  }

  /** Calls wait for a slot: part of the demand the next sync reports. */
  void noteWaiting(int waiting) {
    int demand = inUse(word.get()) + waiting;
    if (demand > peak) {
      peak = demand;
    }
  }

  /**
   * The slots this process would use now, for the next sync (sync thread): the most calls that ran
   * or waited during this interval and the last, plus those that found no slot, at most {@code
   * limit}.
   */
  int sampleWant(int limit, int waiting) {
    int now = inUse(word.get()) + waiting;
    int p = Math.max(peak, now);
    peak = now;
    int previous = lastPeak;
    lastPeak = p;
    long wanted = (long) Math.max(p, previous) + unmet.sumThenReset();
    return (int) Math.min(limit, Math.max(wanted, now));
  }

  /**
   * After a sync Redis answered (sync thread): the new cap, good for admissions until {@code
   * until}, under {@code token} (0: keep the current one). Returns whether it left FALLBACK.
   */
  boolean grant(int cap, long until, long token) {
    if (token != 0) {
      fencingToken = token;
    }
    if (until - admitUntil > 0) {
      admitUntil = until; // before the CAS that publishes the cap (grant vs take)
    }
    for (; ; ) {
      long w = word.get();
      long next = (w & IN_USE) | ((long) Math.min(cap, MAX_SLOTS) << CAP_SHIFT);
      if (word.compareAndSet(w, next)) {
        return inFallback(w);
      }
    }
  }

  /**
   * Switches to FALLBACK with {@code share} slots if the lease can no longer cover a call: never
   * synced, or admitUntil passed (M4). Returns whether it switched.
   */
  boolean lapseIfDue(int share) {
    for (; ; ) {
      long w = word.get();
      if (inFallback(w) || System.nanoTime() - admitUntil < 0) {
        return false;
      }
      if (word.compareAndSet(w, FALLBACK_BIT | ((long) share << CAP_SHIFT) | (w & IN_USE))) {
        return true;
      }
    }
  }

  /** Admits nothing more, whatever the mode: the fleet is closing. Returns the calls running. */
  int close() {
    for (; ; ) {
      long w = word.get();
      if (word.compareAndSet(w, FALLBACK_BIT | (w & IN_USE))) {
        return inUse(w);
      }
    }
  }
}
