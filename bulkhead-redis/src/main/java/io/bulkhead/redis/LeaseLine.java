package io.bulkhead.redis;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.spi.ProvisionalSlot;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/*
 * The lease line of one fleet compartment: the calls that hold a provisional slot of the local gate and
 * wait for a ticket, in FIFO order.
 *
 * Algorithm
 * ---------
 * A waiter is a future. Only the head is served: serve() asks the `source` for a ticket and completes
 * the head with it, then serves the next, and stops at the first "none now". serve() runs on the fleet's
 * scheduler thread, woken (wake()) by the pub/sub message every release publishes, by a local fallback
 * release, and by the fleet's slow poll (leases that expire send no message). A synchronous caller parks
 * on its waiter for what is left of its wait; an asynchronous one gets a timer on the fleet's scheduler.
 *
 * Invariants
 * ----------
 *   W1 a waiter's future is completed once: by serve() with a ticket, by serve() with a refusal, or by
 *      its own caller on timeout or interrupt. Whoever loses the race does not keep the ticket: serve()
 *      releases a ticket its future refused. A refusal that loses its waiter's race is counted nowhere,
 *      the call being served or counted by whoever won.
 *   W2 the line holds at most `limit` waiters, each inside a gate slot, and a call joins only while the
 *      gate's queue and this line together hold fewer than maxQueue (slot.queued()). A call that waits
 *      again after a stale ticket keeps the place it took (`queuedAlready`): it asks for no second one.
 *   W3 a waiter leaves the line when it is served, refused, times out, or is withdrawn; a withdrawn one
 *      never gets a ticket.
 *
 * Races
 * -----
 *   wake coalescing: wake() sets `wakePending` and schedules serve() once; serve() clears the flag before
 *      it reads the line, so a release after the clear schedules another run and no wake-up is lost.
 *   release vs join: a ticket freed between a caller's "none now" and its join would wake nobody: join()
 *      wakes the line itself once the waiter is in it.
 *   serve vs timeout: both complete the future; one wins (W1). If the caller wins, serve() releases the
 *      ticket it took; if serve() wins, the caller runs with it.
 */
final class LeaseLine {

  /** Where tickets come from. */
  interface Source {
    /**
     * A ticket, or null when none is free now.
     *
     * @throws Refusal when the call must be refused instead of waiting (the fallback policy)
     */
    @Nullable Ticket attempt();
  }

  /** A call waiting in the line; completed once (W1). */
  static final class Waiter extends CompletableFuture<Ticket> {}

  private final RedisCompartments fleet;
  private final Source source;
  private final LongAdder timeouts;
  private final ConcurrentLinkedDeque<Waiter> waiters = new ConcurrentLinkedDeque<>();
  private final AtomicBoolean wakePending = new AtomicBoolean();

  /**
   * @param timeouts counts the calls rejected because no ticket came within their wait
   */
  LeaseLine(RedisCompartments fleet, Source source, LongAdder timeouts) {
    this.fleet = fleet;
    this.source = source;
    this.timeouts = timeouts;
  }

  boolean isEmpty() {
    return waiters.isEmpty();
  }

  int size() {
    return waiters.size();
  }

  /**
   * Joins the line, as the gate's own queue would be joined: it takes a place of maxQueue
   * (QUEUE_FULL when none is left) and, with no time left to wait, times out as a queued call does.
   * A call that waits again after a stale ticket ({@code queuedAlready}) keeps the place it took
   * (W2).
   */
  Waiter join(long deadline, ProvisionalSlot slot, boolean queuedAlready) {
    if (!queuedAlready && !slot.queued()) {
      throw new Refusal(BulkheadFullException.Reason.QUEUE_FULL, null);
    }
    if (deadline - System.nanoTime() <= 0) {
      throw timeout(); // no time left to wait for the fleet
    }
    Waiter w = new Waiter();
    waiters.add(w);
    wake(); // a ticket may have freed between the "none now" and the join
    return w;
  }

  /** Joins the line for a submit: a timer in place of a parked thread. */
  Waiter joinAsync(long deadline, ProvisionalSlot slot, boolean queuedAlready) {
    Waiter w = join(deadline, slot, queuedAlready);
    if (deadline != Long.MAX_VALUE) {
      fleet.schedule(() -> give(w, timeout()), deadline - System.nanoTime());
    }
    return w;
  }

  /**
   * Parks until {@code w} is served: its ticket, or a Refusal (a timeout, interrupt or fallback).
   */
  Ticket await(Waiter w, long deadline) {
    boolean interrupted = false;
    try {
      for (; ; ) {
        try {
          long remaining = deadline - System.nanoTime();
          return deadline == Long.MAX_VALUE
              ? w.get()
              : w.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          give(w, timeout());
        } catch (InterruptedException e) {
          interrupted = true;
          give(w, new Refusal(BulkheadFullException.Reason.INTERRUPTED, null));
        } catch (ExecutionException e) {
          Throwable cause = e.getCause();
          if (cause instanceof RuntimeException) {
            throw (RuntimeException) cause; // a Refusal, whoever completed the waiter
          }
          throw new IllegalStateException(cause);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Withdraws a waiter whose caller cancelled (W3): it never gets a ticket. */
  void withdraw(Waiter w) {
    if (w.cancel(false)) {
      waiters.remove(w);
    }
  }

  /** A wait past its deadline; counted in fleetTimeouts only if its call is rejected with it. */
  Refusal timeout() {
    return new Refusal(BulkheadFullException.Reason.WAIT_TIMEOUT, timeouts);
  }

  private void give(Waiter w, Refusal refusal) {
    if (w.completeExceptionally(refusal)) {
      waiters.remove(w);
    }
  }

  /** A ticket was freed somewhere: serve the line soon, at most one run scheduled at a time. */
  void wake() {
    if (!waiters.isEmpty() && wakePending.compareAndSet(false, true)) {
      fleet.execute(this::serve);
    }
  }

  /** Gives tickets to the waiters in FIFO order until the source has none. */
  void serve() {
    wakePending.set(false);
    for (Waiter head; (head = waiters.peek()) != null; ) {
      if (head.isDone()) {
        waiters.remove(head); // timed out or withdrawn; its owner may not have removed it yet
        continue;
      }
      Ticket ticket;
      try {
        ticket = source.attempt();
      } catch (Refusal e) {
        give(head, e);
        continue;
      }
      if (ticket == null) {
        return; // none now: wait for the next wake-up or poll
      }
      waiters.remove(head);
      if (!head.complete(ticket)) {
        ticket.release(); // its caller gave up a moment ago
      }
    }
  }
}
