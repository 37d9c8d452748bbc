package io.bulkhead.redis;

import java.util.concurrent.atomic.AtomicBoolean;

/** What the fleet hands a call before it may run: a lease or a slot of the fallback share. */
abstract class Ticket {

  private final AtomicBoolean released = new AtomicBoolean();

  /** Gives the ticket back the first time it is called; later calls do nothing. */
  final void release() {
    if (released.compareAndSet(false, true)) {
      giveBack();
    }
  }

  abstract void giveBack();

  /** Whether the call may still start under this ticket. */
  abstract boolean usable();
}
