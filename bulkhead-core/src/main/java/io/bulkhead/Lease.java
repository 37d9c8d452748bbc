package io.bulkhead;

/*
 * The Permit handed out by a compartment: close() releases its slot exactly once.
 *
 * Why a monitor and not a CAS on a flag: C2 cannot scalar-replace an object whose field is the target
 * of an atomic instruction, so a CAS-guarded lease is always allocated (32 bytes per tryAcquire). A
 * monitor on an object that never escapes the compiled method is elided, and the object with it: for
 * `try (Permit p = bulkhead.acquire()) { ... }` or a tryAcquire that is closed in the same method, the
 * permit costs no allocation and no atomic instruction beyond the state word's two. A lease that does
 * escape (held in a field, closed from a callback) pays for an uncontended monitor instead of a CAS.
 *
 * Race, as an interleaving: T1 and T2 both close. Each enters the monitor in turn; the first finds
 * `closed` false, sets it and, after leaving the monitor, releases the slot; the second finds it true
 * and returns. The release (which runs listeners, i.e. user code) is never run under the monitor, and
 * the monitor is held for two field accesses only: nobody ever waits on it for long, let alone parks.
 * Virtual threads: no thread ever blocks or parks while holding it, so it never pins a carrier across a
 * wait; the only thread that can find it taken is the second of two closing one permit at the same
 * instant, which waits for those two field accesses (on JDK 21-23 that short wait pins its carrier;
 * from JDK 24 on, monitors do not pin).
 */
/** The {@link Permit} handed out by a compartment; {@link #close()} releases the slot exactly once. */
final class Lease implements Permit {

  private final DefaultBulkhead bulkhead;
  private final boolean timed;
  private final long admittedAt;
  private boolean closed; // guarded by this

  Lease(DefaultBulkhead bulkhead, boolean timed, long admittedAt) {
    this.bulkhead = bulkhead;
    this.timed = timed;
    this.admittedAt = admittedAt;
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    bulkhead.release(timed, admittedAt);
  }

  @Override
  public boolean isClosed() {
    synchronized (this) {
      return closed;
    }
  }

  @Override
  public String toString() {
    return "Permit{bulkhead=" + bulkhead.name() + (isClosed() ? ", closed}" : ", held}");
  }
}
