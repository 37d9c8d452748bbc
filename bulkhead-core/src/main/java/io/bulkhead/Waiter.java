package io.bulkhead;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A caller waiting in a compartment's queue: a node of the intrusive FIFO list in {@link
 * DefaultBulkhead}, and the one-shot state machine that decides the race between handing it a slot
 * and giving up on it.
 *
 * <p>{@link #state} leaves {@code WAITING} exactly once, by CAS: to {@code GRANTED} (done by a lock
 * holder that has just unlinked the node; the node now owns a slot) or to {@code TIMED_OUT}, {@code
 * INTERRUPTED} or {@code CANCELLED} (the node will never own one). The links and {@link #linked}
 * are guarded by the compartment's lock; whoever unlinks the node under that lock also decrements
 * the compartment's waiting count, so it is decremented once however the node leaves.
 */
abstract class Waiter {

  static final int WAITING = 0;
  static final int GRANTED = 1;
  static final int TIMED_OUT = 2;
  static final int INTERRUPTED = 3;
  static final int CANCELLED = 4;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(Waiter.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  volatile int state;

  // Guarded by the compartment's lock.
  Waiter prev;
  Waiter next;
  boolean linked;

  /** Ticker reading when the waiter decided to queue; its deadline is this plus maxWait. */
  long enqueuedAt;

  final boolean grant() {
    return STATE.compareAndSet(this, WAITING, GRANTED);
  }

  final boolean abandon(int why) {
    return STATE.compareAndSet(this, WAITING, why);
  }

  /** Called outside the lock after {@link #grant()} succeeded for this node. */
  abstract void granted(DefaultBulkhead bulkhead);

  /**
   * Called outside the lock after the timer moved this node to {@code TIMED_OUT}: on the timer
   * thread for a parked thread (an unpark), on the compartment's executor for an async call (never
   * on the timer: {@link Bulkhead#submit}).
   */
  abstract void expired(DefaultBulkhead bulkhead);
}

/**
 * A thread parked in {@link Bulkhead#call} or {@link Bulkhead#acquire}; it reads its own outcome.
 */
final class ThreadWaiter extends Waiter {

  final Thread thread;

  ThreadWaiter(Thread thread) {
    this.thread = thread;
  }

  @Override
  void granted(DefaultBulkhead bulkhead) {
    LockSupport.unpark(thread);
  }

  @Override
  void expired(DefaultBulkhead bulkhead) {
    LockSupport.unpark(thread);
  }
}

/**
 * A call from {@link Bulkhead#submit}; it holds no thread, so the granter or the timer acts for it.
 */
final class AsyncWaiter extends Waiter {

  final AsyncCall<?> call;

  AsyncWaiter(AsyncCall<?> call) {
    this.call = call;
  }

  @Override
  void granted(DefaultBulkhead bulkhead) {
    bulkhead.dispatch(call);
  }

  @Override
  void expired(DefaultBulkhead bulkhead) {
    call.expire(); // on the compartment's executor: the sweep hands it there
  }
}
