package io.bulkhead;

import io.bulkhead.spi.ProvisionalSlot;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/*
 * A provisional slot (io.bulkhead.spi): a slot of the state word that DefaultBulkhead has taken without
 * counting an admission, held by an integration until it confirms or abandons the call.
 *
 * States, one word moved by CAS:
 *   PENDING  -> WAITING    queued(): the integration makes the call wait for something else (a lease)
 *   PENDING | WAITING -> CONFIRMED   confirm(): counted admitted, onAdmitted; confirmOwned(): the same
 *                                    by a plain release-store, for a slot no other thread can reach
 *   PENDING | WAITING -> ABANDONED   abandon(reason): slot passed on, counted rejected, onRejected
 *   PENDING | WAITING -> WITHDRAWN   close() before either: slot passed on, counted cancelled
 *   CONFIRMED -> RELEASED            close(): the ordinary release, latency from confirm()
 *
 * Invariants
 *   P1 the slot is freed exactly once: only the CAS that leaves PENDING/WAITING for ABANDONED or
 *      WITHDRAWN, or the CAS CONFIRMED -> RELEASED, frees it, and each state is left at most once.
 *   P2 the call is counted exactly once, by the thread whose CAS moved it out of PENDING/WAITING:
 *      admitted (and later completed), rejected, or cancelled. Never two of them.
 *   P3 DefaultBulkhead.provisionalWaiting counts the slots in WAITING: incremented (bounded by maxQueue
 *      with the compartment's own waiting) before the CAS PENDING -> WAITING, taken back if that CAS
 *      fails; decremented by the CAS that leaves WAITING, whoever wins it.
 *
 * Races
 *   confirm vs close (an async call's caller cancels as the integration's lease arrives): one CAS wins.
 *      If close wins, confirm returns false and the integration gives its lease back without running
 *      the call, which counts cancelled. If confirm wins, the call is admitted and close releases it.
 *   confirmOwned vs anything: none by contract. Its caller took the slot and has not handed it on (a
 *      synchronous caller, or an async call before the stage it returns exists), so no close or abandon
 *      can run until that caller publishes the slot, and the publishing orders it after the store.
 *   close(first) vs close(first) (a permit closed on two threads at once): the CAS that frees the slot
 *      runs `first`, so an integration's own give-back runs once, before the slot is passed on.
 *   abandon vs close (the wait times out as the caller cancels): one CAS wins; the loser counts and
 *      frees nothing. abandon still returns an exception, which the integration may complete with.
 *   any of them vs setLimit: a provisional slot is an ordinary taken slot in the state word, so setLimit
 *      treats it like a running call; freeing it goes through the same freeSlot/hand-off as a release
 *      (available may be negative just after a lowering, and then the slot is absorbed, not handed on).
 *   since vs since: a slot taken at once reads its asking instant lazily (queued(), a withdrawal,
 *      remainingWaitNanos()); two threads that read it at once each write a reading, and each wait is
 *      measured from one of them: at most the gap between the two reads is lost.
 * Cost: a slot taken at once, confirmed and closed reads the ticker only if sampled (timed), like a
 *   fast admission; `timed` and `admittedAt` are written before the CAS (or confirmOwned's
 *   release-store) to CONFIRMED and read after a read of it. confirmOwned and close(first) spare a
 *   fleet compartment two CASes per call: the confirming one, and its ticket's own once-only flag.
 * Listeners run after the CAS, on the calling thread, never under the compartment's lock.
 */
final class Provisional implements ProvisionalSlot {

  private static final int PENDING = 0;
  private static final int WAITING = 1;
  private static final int CONFIRMED = 2;
  private static final int ABANDONED = 3;
  private static final int WITHDRAWN = 4;
  private static final int RELEASED = 5;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(Provisional.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final DefaultBulkhead bulkhead;

  /**
   * Ticker reading when the call asked for its slot: waits are measured from here. A slot taken at
   * once (the lock-free path) reads it only when first needed (since()): the instant it starts to
   * wait for the integration, or is withdrawn, which is its asking instant plus the integration's
   * in-memory attempt.
   */
  private volatile long since;

  private volatile boolean sinceKnown;

  /** Set before the integration sees the slot when the call waited in the compartment's queue. */
  volatile boolean waitedForSlot;

  private volatile int state; // PENDING (0) by default: no volatile store, and its fence, per slot
  // Written before the CAS to CONFIRMED, read only after a read of CONFIRMED: published by it.
  private long admittedAt;
  private boolean timed; // likewise: whether its latency is measured (a waited call always is)

  /** A slot taken by the compartment's slow path, which read the ticker when the call asked. */
  Provisional(DefaultBulkhead bulkhead, long since, boolean waitedForSlot) {
    this.bulkhead = bulkhead;
    this.since = since;
    this.sinceKnown = true;
    this.waitedForSlot = waitedForSlot;
    this.timed = true;
  }

  /** A slot taken at once, lock-free, without reading the ticker; {@code timed} if sampled. */
  Provisional(DefaultBulkhead bulkhead, boolean timed) {
    this.bulkhead = bulkhead;
    this.timed = timed;
  }

  /** When the call asked, read now if it was not read then (a race only reads it twice). */
  long since() {
    if (!sinceKnown) {
      since = bulkhead.tickerRead();
      sinceKnown = true;
    }
    return since;
  }

  @Override
  public long remainingWaitNanos() {
    return bulkhead.waitLeftNanos(since());
  }

  @Override
  public boolean queued() {
    if (state != PENDING) {
      return false;
    }
    since(); // its wait starts now at the latest
    if (!bulkhead.reserveProvisionalWait()) {
      return false;
    }
    if (!STATE.compareAndSet(this, PENDING, WAITING)) {
      bulkhead.provisionalWaitEnded(); // P3: left PENDING meanwhile, so nobody else will decrement
      return false;
    }
    if (!waitedForSlot) {
      bulkhead.provisionalQueued();
    }
    return true;
  }

  @Override
  public boolean confirm() {
    // WAITING is entered by the integration's own queued(), before it confirms: read here, it is
    // the state the CAS below leaves, unless another thread closes or abandons the slot first.
    boolean waited = waitedForSlot || state == WAITING;
    boolean measured = waited || timed;
    long now = measured ? bulkhead.tickerRead() : 0L;
    admittedAt = now;
    timed = measured;
    int from = leaveProvisional(CONFIRMED);
    if (from < 0) {
      return false;
    }
    bulkhead.provisionalAdmitted(waited ? now - since() : -1, now);
    return true;
  }

  @Override
  public void confirmOwned() {
    int from = state;
    if (from != PENDING && from != WAITING) {
      throw new IllegalStateException(
          "a slot of bulkhead '"
              + bulkhead.name()
              + "' left its provisional state before confirmOwned()");
    }
    boolean waited = waitedForSlot || from == WAITING;
    boolean measured = waited || timed;
    long now = measured ? bulkhead.tickerRead() : 0L;
    admittedAt = now;
    timed = measured;
    STATE.setRelease(this, CONFIRMED); // no other thread can reach the slot: see the races above
    if (from == WAITING) {
      bulkhead.provisionalWaitEnded(); // P3
    }
    bulkhead.provisionalAdmitted(waited ? now - since() : -1, now);
  }

  @Override
  public BulkheadFullException abandon(BulkheadFullException.Reason reason) {
    Objects.requireNonNull(reason, "reason");
    if (state == CONFIRMED || state == RELEASED) {
      throw new IllegalStateException(
          "a confirmed slot of bulkhead '"
              + bulkhead.name()
              + "' cannot be abandoned: its call was admitted");
    }
    boolean counted = leaveProvisional(ABANDONED) >= 0;
    return bulkhead.provisionalRejected(reason, counted);
  }

  @Override
  public void close() {
    close(null, null);
  }

  @Override
  public <A extends @Nullable Object> void close(@Nullable Consumer<? super A> first, A argument) {
    for (; ; ) {
      int s = state;
      if (s == CONFIRMED) {
        if (STATE.compareAndSet(this, CONFIRMED, RELEASED)) {
          try {
            runFirst(first, argument);
          } finally {
            bulkhead.release(timed, admittedAt);
          }
          return;
        }
      } else if (s == PENDING || s == WAITING) {
        if (leaveProvisional(WITHDRAWN) >= 0) {
          try {
            runFirst(first, argument);
          } finally {
            bulkhead.provisionalWithdrawn(since());
          }
          return;
        }
      } else {
        return; // abandoned, withdrawn or released already
      }
    }
  }

  private static <A extends @Nullable Object> void runFirst(
      @Nullable Consumer<? super A> first, A argument) {
    if (first != null) {
      first.accept(argument);
    }
  }

  @Override
  public boolean isClosed() {
    return state >= ABANDONED;
  }

  /**
   * Moves the slot out of PENDING or WAITING; returns the state it left, or -1 if it had left it.
   */
  private int leaveProvisional(int to) {
    for (; ; ) {
      int s = state;
      if (s != PENDING && s != WAITING) {
        return -1;
      }
      if (STATE.compareAndSet(this, s, to)) {
        if (s == WAITING) {
          bulkhead.provisionalWaitEnded(); // P3
        }
        return s;
      }
    }
  }

  @Override
  public String toString() {
    String[] names = {"pending", "waiting", "confirmed", "abandoned", "withdrawn", "released"};
    return "ProvisionalSlot{bulkhead=" + bulkhead.name() + ", " + names[state] + "}";
  }
}
