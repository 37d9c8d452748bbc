package io.bulkhead;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** The {@link Permit} handed out by a compartment; a CAS makes {@link #close()} release exactly once. */
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
