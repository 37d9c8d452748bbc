package io.bulkhead.redis;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.spi.ProvisionalSlot;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/*
 * The lease line of one fleet compartment: the calls that hold a provisional slot of the local gate and
 * wait for a slot of the process's lease, in FIFO order.
 *
 * Algorithm
 * ---------
 * A waiter is a future. Only the head is served: serve() asks the `source` for a ticket and completes
 * the head with it, then serves the next, and stops at the first "none now". serve() runs wherever a
 * slot may have come free: on the thread of a call that released one, on the fleet's sync thread after
 * Redis granted more, on the fleet's timer after a switch to the fallback policy, and on the thread of a
 * call that just joined. It never makes a round trip to Redis: the source is in memory. A synchronous
 * caller parks on its waiter for what is left of its wait; an asynchronous one gets a timer on the
 * fleet's timer thread, which never calls Redis either.
 *
 * Invariants
 * ----------
 *   W1 a waiter's future is completed once: by serve() with a ticket, by serve() with a refusal, or by
 *      its own caller (or timer) on timeout or interrupt. Whoever loses the race does not keep the
 *      ticket: serve() releases a ticket its future refused. A refusal that loses its waiter's race is
 *      counted nowhere, the call being served or counted by whoever won.
 *   W2 the line holds at most `limit` waiters, each inside a gate slot, and a call joins only while the
 *      gate's queue and this line together hold fewer than maxQueue (slot.queued()). A call that waits
 *      again after a stale ticket keeps the place it took (`queuedAlready`): it asks for no second one.
 *   W3 a waiter leaves the line when it is served, refused, times out, or is withdrawn; a withdrawn one
 *      never gets a ticket.
 *   W4 one serve() drains at a time (`serving` counts the requests); a request that arrives while
 *      another thread drains makes that thread drain once more, so no request is lost.
 *
 * Races
 * -----
 *   release vs join: a slot freed between a caller's "none now" and its join would wake nobody: join()
 *      serves the line itself once the waiter is in it. The releaser decrements the word and then reads
 *      the line; the joiner adds itself and then reads the word: one of them sees the other (W4).
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

  private final Scheduler timer;
  private final Source source;
  private final LongAdder timeouts;
  private final ConcurrentLinkedDeque<Waiter> waiters = new ConcurrentLinkedDeque<>();
  private final AtomicInteger serving = new AtomicInteger();

  /** Where the timers of asynchronous waiters run: a thread that never makes a round trip. */
  interface Scheduler {
    void schedule(Runnable task, long delayNanos);
  }

  /**
   * @param timeouts counts the calls rejected because no slot came within their wait
   */
  LeaseLine(Scheduler timer, Source source, LongAdder timeouts) {
    this.timer = timer;
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
    serve(); // a slot may have freed between the "none now" and the join
    return w;
  }

  /** Joins the line for a submit: a timer in place of a parked thread. */
  Waiter joinAsync(long deadline, ProvisionalSlot slot, boolean queuedAlready) {
    Waiter w = join(deadline, slot, queuedAlready);
    if (deadline != Long.MAX_VALUE) {
      timer.schedule(() -> give(w, timeout()), deadline - System.nanoTime());
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

  /** Serves the line if anyone waits: after a slot was given back. */
  void serveIfWaiting() {
    if (!waiters.isEmpty()) {
      serve();
    }
  }

  /** Gives tickets to the waiters in FIFO order until the source has none (W4: one at a time). */
  void serve() {
    if (serving.getAndIncrement() != 0) {
      return; // the thread draining now drains once more
    }
    int requests = 1;
    do {
      drain();
      requests = serving.addAndGet(-requests);
    } while (requests != 0);
  }

  private void drain() {
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
        return; // none now: the next release, grant or switch serves again
      }
      waiters.remove(head);
      if (!head.complete(ticket)) {
        ticket.release(); // its caller gave up a moment ago
      }
    }
  }
}
