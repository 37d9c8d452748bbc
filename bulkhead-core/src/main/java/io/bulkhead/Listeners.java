package io.bulkhead;

import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The listeners of one compartment, each call guarded so that a throwing listener is contained.
 *
 * <p>Concurrency: the listeners live in a copy-on-write array behind a volatile field. Adding or
 * removing one swaps the array under a lock (a rare operation); notifying reads the field once and
 * walks that array, so a notification sees either the old or the new set, never a torn one. With no
 * listener the walk is over an empty array and costs a volatile read.
 */
final class Listeners {

  private static final System.Logger LOG = System.getLogger("io.bulkhead");
  private static final BulkheadListener[] NONE = new BulkheadListener[0];

  // The compartment named in events: the compartment itself, or the view a WorkerPool registers.
  private volatile Compartment bulkhead;
  private final java.util.concurrent.locks.ReentrantLock writeLock =
      new java.util.concurrent.locks.ReentrantLock();
  private volatile BulkheadListener[] listeners;
  private final LongAdder failures = new LongAdder();
  // Listeners whose first failure was already logged at WARNING; later ones go to DEBUG.
  private final Set<BulkheadListener> reported = ConcurrentHashMap.newKeySet();

  Listeners(Compartment bulkhead, BulkheadListener[] initial) {
    this.bulkhead = bulkhead;
    this.listeners = initial.length == 0 ? NONE : initial.clone();
  }

  void add(BulkheadListener listener) {
    Objects.requireNonNull(listener, "listener");
    writeLock.lock();
    try {
      BulkheadListener[] current = listeners;
      BulkheadListener[] next = Arrays.copyOf(current, current.length + 1);
      next[current.length] = listener;
      listeners = next;
    } finally {
      writeLock.unlock();
    }
  }

  boolean remove(BulkheadListener listener) {
    writeLock.lock();
    try {
      BulkheadListener[] current = listeners;
      for (int i = 0; i < current.length; i++) {
        if (current[i] == listener) {
          BulkheadListener[] next = new BulkheadListener[current.length - 1];
          System.arraycopy(current, 0, next, 0, i);
          System.arraycopy(current, i + 1, next, i, current.length - i - 1);
          listeners = next.length == 0 ? NONE : next;
          return true;
        }
      }
      return false;
    } finally {
      writeLock.unlock();
    }
  }

  /** Names {@code face} instead of the compartment in every later event. */
  void reportAs(Compartment face) {
    this.bulkhead = face;
  }

  /** Whether any listener is attached; a call is then always timed, so they all get durations. */
  boolean any() {
    return listeners.length != 0;
  }

  /**
   * A release that was not timed. Calls are left untimed only while no listener is attached; one
   * added since then gets the call's release with the duration it has: none measured, so zero.
   */
  void releasedUntimed() {
    released(0L);
  }

  long failures() {
    return failures.sum();
  }

  void admitted(long waitedNanos) {
    for (BulkheadListener l : listeners) {
      try {
        l.onAdmitted(bulkhead, waitedNanos);
      } catch (Throwable t) {
        failed(l, "onAdmitted", t);
      }
    }
  }

  void queued() {
    for (BulkheadListener l : listeners) {
      try {
        l.onQueued(bulkhead);
      } catch (Throwable t) {
        failed(l, "onQueued", t);
      }
    }
  }

  void rejected(BulkheadFullException.Reason reason) {
    for (BulkheadListener l : listeners) {
      try {
        l.onRejected(bulkhead, reason);
      } catch (Throwable t) {
        failed(l, "onRejected", t);
      }
    }
  }

  void cancelled(long waitedNanos) {
    for (BulkheadListener l : listeners) {
      try {
        l.onCancelled(bulkhead, waitedNanos);
      } catch (Throwable t) {
        failed(l, "onCancelled", t);
      }
    }
  }

  void released(long heldNanos) {
    for (BulkheadListener l : listeners) {
      try {
        l.onReleased(bulkhead, heldNanos);
      } catch (Throwable t) {
        failed(l, "onReleased", t);
      }
    }
  }

  private void failed(BulkheadListener listener, String method, Throwable t) {
    failures.increment();
    try {
      if (reported.add(listener)) {
        LOG.log(
            Level.WARNING,
            () ->
                "listener "
                    + listener
                    + " of bulkhead '"
                    + bulkhead.name()
                    + "' threw from "
                    + method
                    + "; it is contained and later failures are logged at DEBUG",
            t);
      } else if (LOG.isLoggable(Level.DEBUG)) {
        LOG.log(
            Level.DEBUG,
            () ->
                "listener "
                    + listener
                    + " of bulkhead '"
                    + bulkhead.name()
                    + "' threw from "
                    + method,
            t);
      }
    } catch (Throwable ignored) {
      // A broken logger must not break the compartment either.
    }
  }
}
