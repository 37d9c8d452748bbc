package io.bulkhead.redis;

import io.bulkhead.internal.PaddedState;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/*
 * One process's lease on a batch of a fleet compartment's slots, in memory: what its calls are admitted
 * against and released to, without a round trip to Redis. LeaseSync keeps it granted in the background.
 *
 * State
 * -----
 * One word, `state`, moved by CAS: inUse (bits 0-29), cap (bits 30-59), FALLBACK (bit 62). It has a
 * cache line of its own (PaddedState), so that the CASes of the calls on other cores do not evict the
 * read-mostly fields every take reads (admitUntil, peak, the token).
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
 *      after the CAS, and a slot taken too late is given back at once (it was
 *      never used). That one reading is the admitted path's only clock read; it doubles as the call's
 *      start, from which its release checks maxCallDuration.
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
final class LeaseSlots extends PaddedState {

  /**
   * What a taken slot becomes: a ticket of its mode, which starts its call's clock at {@code at}.
   */
  interface Taken<T> {
    T taken(boolean leased, long at);
  }

  /** The largest limit a fleet compartment may have: 30 bits of the word. */
  static final int MAX_SLOTS = (1 << 30) - 1;

  private static final long IN_USE = MAX_SLOTS;
  private static final int CAP_SHIFT = 30;
  private static final long FALLBACK_BIT = 1L << 62;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(LeaseSlots.class, "state", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile long admitUntil;
  private volatile long fencingToken;
  // Demand: the most calls running or waiting since the last sync, and the calls that found no
  // slot.
  private volatile int peak;
  private final LongAdder unmet = new LongAdder();
  private int lastPeak; // confined to the sync thread

  /** Starts in FALLBACK with {@code share} slots: nothing is granted before the first sync. */
  LeaseSlots(int share) {
    this.state = FALLBACK_BIT | ((long) share << CAP_SHIFT);
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
    return state;
  }

  long fencingToken() {
    return fencingToken;
  }

  /**
   * Takes a slot if one is free (M2, M3) and returns what {@code ticket} makes of it, told the mode
   * it was taken in and the clock reading after the CAS (M3's, and the call's start: the one clock
   * read of an admission); null when none is free, or the lease can no longer cover a call.
   */
  <T> @Nullable T tryTake(Taken<T> ticket) {
    for (; ; ) {
      long w = state;
      int used = inUse(w);
      if (used >= cap(w)) {
        return null;
      }
      if (STATE.compareAndSet(this, w, w + 1)) {
        long now = System.nanoTime();
        boolean fallback = inFallback(w);
        if (!fallback && !admitsAt(now)) {
          STATE.getAndAdd(this, -1L); // M3: too late for the lease to cover a call; never used
          return null;
        }
        if (used + 1 > peak) {
          peak = used + 1; // a racy maximum: a lost update only lowers one sample of the demand
        }
        return ticket.taken(!fallback, now);
      }
    }
  }

  private boolean admitsAt(long now) {
    return now - admitUntil < 0;
  }

  /** Whether a call that took a slot earlier may still start under it now (LEASED). */
  boolean coversFromNow() {
    return admitsAt(System.nanoTime());
  }

  /** Gives a slot back (M2). */
  void giveBack() {
    STATE.getAndAdd(this, -1L);
  }

  /** A call found no slot: part of the demand the next sync reports. */
  void noteUnmet() {
    unmet.increment();
  }

  /** Calls wait for a slot: part of the demand the next sync reports. */
  void noteWaiting(int waiting) {
    int demand = inUse(state) + waiting;
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
    int now = inUse(state) + waiting;
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
      long w = state;
      long next = (w & IN_USE) | ((long) Math.min(cap, MAX_SLOTS) << CAP_SHIFT);
      if (STATE.compareAndSet(this, w, next)) {
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
      long w = state;
      if (inFallback(w) || System.nanoTime() - admitUntil < 0) {
        return false;
      }
      if (STATE.compareAndSet(this, w, FALLBACK_BIT | ((long) share << CAP_SHIFT) | (w & IN_USE))) {
        return true;
      }
    }
  }

  /** Admits nothing more, whatever the mode: the fleet is closing. Returns the calls running. */
  int close() {
    for (; ; ) {
      long w = state;
      if (STATE.compareAndSet(this, w, FALLBACK_BIT | (w & IN_USE))) {
        return inUse(w);
      }
    }
  }
}
