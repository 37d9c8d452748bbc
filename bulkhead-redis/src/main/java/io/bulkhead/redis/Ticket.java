package io.bulkhead.redis;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What the fleet hands a call before it may run: a lease or a slot of the fallback share. Given
 * back once, by the CAS of a flag of its own (a field, not an AtomicBoolean: one object per call).
 */
abstract class Ticket {

  private static final VarHandle RELEASED;

  static {
    try {
      RELEASED = MethodHandles.lookup().findVarHandle(Ticket.class, "released", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile boolean released;

  /** Gives the ticket back the first time it is called; later calls do nothing. */
  final void release() {
    if (claim()) {
      giveBack();
    }
  }

  /**
   * Sets the flag: true for the first caller only, who then gives the ticket back (and whatever the
   * ticket holds besides) itself.
   */
  final boolean claim() {
    return !released && RELEASED.compareAndSet(this, false, true);
  }

  /** Whether {@link #release()} has run. */
  final boolean released() {
    return released;
  }

  abstract void giveBack();

  /** Whether the call may still start under this ticket. */
  abstract boolean usable();
}
