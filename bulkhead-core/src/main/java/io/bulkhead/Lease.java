package io.bulkhead;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/*
 * The Permit handed out by a compartment: close() releases its slot exactly once.
 *
 * Race, as an interleaving: T1 and T2 both close. Both CAS `closed` false -> true; one wins and
 * releases the slot, the other finds it already true and returns. No lock: core holds no monitor, so
 * no virtual thread can pin its carrier here.
 *
 * Cost: C2 never scalar-replaces an object whose field is the target of an atomic instruction, so
 * every Lease is allocated (32 bytes). A monitor-guarded flag would let C2 elide both the lock and the
 * object for a permit closed in the method that took it; it was measured (DESIGN.md, "Where the
 * admitted path's time went") and not kept, because core must not hold monitors.
 */
/**
 * The {@link Permit} handed out by a compartment; a CAS makes {@link #close()} release exactly
 * once.
 */
final class Lease implements Permit {

  private static final VarHandle CLOSED;

  static {
    try {
      CLOSED = MethodHandles.lookup().findVarHandle(Lease.class, "closed", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final DefaultBulkhead bulkhead;
  private final boolean timed;
  private final long admittedAt;
  private volatile boolean closed;

  Lease(DefaultBulkhead bulkhead, boolean timed, long admittedAt) {
    this.bulkhead = bulkhead;
    this.timed = timed;
    this.admittedAt = admittedAt;
  }

  @Override
  public void close() {
    if (CLOSED.compareAndSet(this, false, true)) {
      bulkhead.release(timed, admittedAt);
    }
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public String toString() {
    return "Permit{bulkhead=" + bulkhead.name() + (closed ? ", closed}" : ", held}");
  }
}
