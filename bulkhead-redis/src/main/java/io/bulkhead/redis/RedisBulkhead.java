package io.bulkhead.redis;

import io.bulkhead.Budget;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadConfig;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadListener;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Permit;
import io.bulkhead.internal.CompartmentThreads;
import io.bulkhead.spi.ProvisionalAdmission;
import io.bulkhead.spi.ProvisionalSlot;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/*
 * A fleet compartment: a local compartment in front of leases in Redis.
 *
 * Algorithm
 * ---------
 * Admission has two stages.
 *   1. The local gate, an ordinary core Bulkhead of the same limit, queue and wait. It gives this process
 *      FIFO waiting without a thread per waiter, the fast local "no", stats and listeners, and caps the
 *      process at the fleet's limit (no process can use more than the whole fleet may). Its slot is
 *      taken provisionally (io.bulkhead.spi.ProvisionalAdmission): the gate counts nothing as admitted
 *      until stage 2 has a ticket.
 *   2. Inside a provisional gate slot, a ticket: a lease in Redis (one script round trip), or, while
 *      Redis is unreachable and for one lease TTL after it answers again (R7), a slot of the static local
 *      share (a Semaphore of `share` permits; none when failing closed). A full share refuses at once
 *      (QUEUE_FULL): fallback refusals are never queued. If the fleet is full, the call joins
 *      `leaseWaiters`, a FIFO of futures, and waits for what is left of maxWait. Only the head is
 *      served: the fleet's scheduler thread (serveWaiters) takes a lease for it and completes its
 *      future, then serves the next, and stops at the first refusal. It is woken by the pub/sub
 *      message every release publishes, by a local fallback release, and by a slow poll (leases that
 *      expire send no message).
 *
 * Why two stages, and how they count as one. The gate is what gives a FleetBulkhead core's stats,
 * listeners, meters and diagnosis: BulkheadStats has no public constructor, and core's setLimit refuses
 * 0, so the gate cannot be made to queue callers while this process holds no lease. A call that waits in
 * stage 2 therefore holds a gate slot, provisionally, and stage 2 settles how the gate counts it:
 *   a ticket        slot.confirm(): admitted (onAdmitted, with the whole wait since the call asked if
 *                   it waited), its latency timed from there, released when the call ends;
 *   no ticket       slot.abandon(reason): WAIT_TIMEOUT when maxWait passed in the lease line,
 *                   QUEUE_FULL for a fallback refusal or a full queue, INTERRUPTED for an interrupted
 *                   waiter: counted rejected (onRejected), the exception built by the gate, so its
 *                   retryAfter is core's estimate; the slot goes to the next local waiter, FIFO;
 *   withdrawn       the gate closes the unconfirmed slot when the submit's stage ends (its caller
 *                   cancelled): counted cancelled (onCancelled).
 * So the gate counts exactly what it would have counted had the lease wait happened in its own queue.
 * While a call waits in the lease line (slot.queued()), the gate reports it as waiting, not in flight,
 * and it takes a place of maxQueue: a call that finds the two lines together at maxQueue is refused
 * with QUEUE_FULL instead of waiting (maxQueue 0: never waits for a lease). fleetTimeouts and
 * refusedByFallback still count the stage-2 refusals among the gate's rejections.
 *
 * Threads (I7, as in core): a synchronous caller waits, runs and releases on its own thread. A submit
 * admitted at once starts on the caller's thread; one that waited for a lease starts on
 * `threads`, this compartment's own (CompartmentThreads), as does the completion of one refused after
 * waiting: never on the fleet's scheduler, which every compartment of the fleet shares.
 * The call runs with the ticket and gives it back when it ends: one round trip to release the lease.
 * While its call runs, a lease is renewed by the fleet's renewal task (one batched round trip per
 * process), never past the call's maxCallDuration.
 *
 * Invariants
 * ----------
 *   I1 every admitted call holds exactly one ticket, given back exactly once (Ticket.release CASes),
 *      and a gate slot confirmed once; a gate slot leaves its provisional state once (confirm, abandon
 *      or close: whichever comes first, by the slot's own CAS) and is freed once.
 *   I2 calls of this process holding leases never exceed the limit by this process's doing: a lease is
 *      granted only by the script, which counts the unexpired leases of every process under one
 *      server-side atomic step.
 *   I3 calls admitted without a lease never exceed `share`: each holds a Semaphore permit.
 *   I4 a waiter's future is completed once: by serveWaiters with a ticket, by serveWaiters with a
 *      refusal, or by its own caller on timeout/interrupt. Whoever loses the race does not keep the
 *      ticket: serveWaiters releases a ticket its future refused. Refusals are a private Refusal
 *      carrying the reason; only the call's own side turns one into a counted rejection
 *      (refuse: fleetTimeouts or refusedByFallback, then slot.abandon), on its caller's thread or on
 *      `threads`, never on the fleet's scheduler; a refusal that loses its waiter's race is counted
 *      nowhere, the call being served or counted by whoever won.
 *   I5 stage 2 holds at most `limit` waiters, each inside a gate slot, and joins only while the two
 *      lines together hold fewer than maxQueue (the gate's own line does not look at stage 2's). A
 *      call that waits again after a stale ticket (R10) keeps the place it took: it holds the same
 *      slot, still queued, and asks for no second one.
 *   L1 one fleet-wide limit at every moment: the script admits against the limit stored in Redis
 *      (`{bulkhead:NAME}:limit`), never against the caller's. Building a compartment, and setLimit,
 *      write this process's limit there (the latest one wins, which suits a rolling deploy); a process
 *      whose own limit differs warns once per stored value it sees and still caps itself at its own
 *      (the local gate). A store that lost the key gets the admitting process's limit back. Leases
 *      granted before a lower limit was written run to their end: the fleet drains down to it.
 *   I6 a submit's waiter leaves `leaseWaiters` when it is served, refused, times out, or its stage is
 *      cancelled; a cancelled one never runs its supplier and keeps no ticket (R6), and is counted
 *      cancelled by the gate, not admitted.
 *
 * Races, as interleavings
 * -----------------------
 *   R1 lease expiry vs release. A process paused past the TTL loses its lease to the purge of another
 *      process's admission, which reuses the slot; the paused call then releases: ZREM removes nothing
 *      and nothing else is touched, so it cannot free the newcomer's slot. The renewal that finds the
 *      lease gone counts it in leasesLost (the call was running unleased: the documented excess).
 *   R2 renewal vs release. The renewal task snapshots `active`, then the call ends and ZREMs its lease,
 *      then the renewal script runs: ZSCORE finds nothing, the lease is reported lost, but
 *      renewed() ignores leases already released, so nothing is counted and nothing is re-added (the
 *      renewal adds back only after an epoch change, where a just-released lease can be re-added and
 *      then expires within one TTL: a transient over-count, never an under-count).
 *   R3 pub/sub wake vs local timeout. The scheduler takes a lease for the head waiter while its caller
 *      times out. Both complete the future; one wins (I4). If the caller wins, the scheduler releases
 *      the lease it took; if the scheduler wins, the caller runs with it.
 *   R4 Redis loss mid-call. The release fails (StoreUnavailable): the lease is dropped from renewal and
 *      expires within one TTL. A call admitted in fallback gives its permit back locally and wakes the
 *      local waiters. Calls admitted by the share while Redis was away hold no lease: after Redis
 *      returns, the fleet may run limit + shares until they end (the documented worst case).
 *   R5 wake coalescing. wake() sets `wakePending` and schedules serveWaiters once; serveWaiters clears
 *      the flag before it reads the queue, so a release after the clear schedules another run and
 *      no wake-up is lost.
 *   R6 cancel vs grant, async. The caller cancels `out` while the scheduler completes the waiter with
 *      a ticket. If the cancel wins the waiter's CAS (w.cancel), the waiter never gets a ticket and is
 *      unlinked; serveWaiters skips a done head. If the grant wins, the continuation on `threads`
 *      finds `out` done and releases the ticket without calling the supplier. Either way the gate,
 *      whose stage `out` is, closes the unconfirmed slot: cancelled. A cancel that lands after the
 *      isDone check and before slot.confirm() is decided by the slot: if the gate's close wins,
 *      confirm() returns false and the ticket is released unused; if confirm() wins, the call is
 *      admitted, runs, and the gate releases its slot when `out` completes (core's rule for a call
 *      cancelled after admission: its stage decides).
 *   R7 rejoin window. Redis answers again with an epoch this process never saw (it started in
 *      fallback) or shows a new epoch (an acquire or a renewal): the calls other processes still run
 *      may not be registered yet, since each registers at its next renewal, within a third of a TTL.
 *      So the compartment keeps admitting by its share until one TTL has passed (`globalAgainAt`),
 *      gives back a lease the detecting acquire took, and stays `inFallback`. Redis answering with the
 *      epoch it had (it kept its data) needs no window: every lease still held is still there, and
 *      the first acquire that succeeds ends the fallback. Two callers that detect a new epoch at once
 *      may both log and restart the window: it only lasts longer.
 *   R8 timeout vs cancel, async. The timer refuses the waiter as its caller cancels `out`. If the
 *      continuation on `threads` finds `out` done, it does nothing: the gate counts the call cancelled.
 *      Otherwise it abandons the slot (WAIT_TIMEOUT) and fails `out`; a cancel between the two finds
 *      the slot abandoned, and the gate's close does nothing more. One count either way. (A cancel
 *      after the isDone check and before the abandon wins the slot: the gate counts it cancelled,
 *      while fleetTimeouts, counted just before the abandon, has it too.)
 *   R9 setLimit and close vs a provisional slot. A provisional gate slot is a taken slot of the
 *      gate's state word, so the gate's setLimit treats it as a running call; abandoning it after a
 *      lowering is absorbed like a release. RedisCompartments.close stops the scheduler: the lease
 *      line is served no more, and a waiter leaves it at its deadline (the timer of a submit stops
 *      too, so an unbounded or async waiter waits until its caller gives up); its slot is freed once
 *      by whichever of abandon or close comes first.
 *   R10 pause between grant and start. The process is paused (kill -STOP, a long GC) after a lease was
 *      granted and before its call starts; the lease expires and another process takes the slot. On
 *      resuming, the call must not start under it: just before a call starts (call, acquire,
 *      tryAcquire, submit at once or after waiting), and before its gate slot is confirmed, its ticket
 *      is checked (Ticket.usable): a lease reported lost, or whose `validUntil` has passed, is stale.
 *      `validUntil` is the nanoTime at which the grant or the last successful renewal was sent plus
 *      the time it gave, which is never later than Redis's own expiry since the script runs after it
 *      was sent. A stale ticket is given back and counted in leasesLost, and the call waits again for
 *      what is left of its wait, holding the same provisional slot: still queued if it had waited (no
 *      second place of maxQueue, no second onQueued), queued now if it had not (QUEUE_FULL if the two
 *      lines are full, as for any call that finds the fleet full). tryAcquire does not wait: its slot
 *      is abandoned as QUEUE_FULL. A re-wait with no time left is a timeout: fleetTimeouts, and the
 *      slot abandoned as WAIT_TIMEOUT. So the gate counts such a call once, admitted only when it
 *      starts under a good ticket. Async, the re-wait is a new waiter of the same `out`, linked after
 *      the stale check: a cancel of `out` before the link finds the new waiter when its own
 *      out.whenComplete runs (at once, `out` being done) and unlinks it; after the link it is R6 or
 *      R8. A pause after the check, once the call has started, is R1: the documented excess.
 */
final class RedisBulkhead implements FleetBulkhead {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");

  private final RedisCompartments fleet;
  private final LeaseStore store;
  private final Bulkhead gate;
  private final ProvisionalAdmission admission; // the gate's two-step admission
  private final String name;
  private final int share; // 0: fail closed
  private final Semaphore fallbackPermits;
  private final boolean waitBounded;
  private final long maxWaitNanos;
  private final long maxCallNanos;
  private volatile Executor threads; // replaced only by tests, before any call (startWaitedCallsOn)
  private volatile int limit;

  private final ConcurrentLinkedDeque<LeaseWaiter> leaseWaiters = new ConcurrentLinkedDeque<>();
  private final Set<FleetLease> active = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean wakePending = new AtomicBoolean();
  private final AtomicBoolean inFallback;
  // The rejoin window (R7): while `rejoining`, admissions use the share until globalAgainAt.
  private volatile boolean rejoining;
  private volatile long globalAgainAt;
  private volatile @Nullable String epoch; // as the last grant or renewal reported it
  // L1: this process's limit still has to be written as the fleet's (after build or setLimit).
  private volatile boolean limitToPublish = true;
  private volatile int
      fleetLimitWarned; // the last stored limit warned about, or this process's own
  private final LongAdder fallbackSwitches = new LongAdder();
  private final LongAdder fleetTimeouts = new LongAdder();
  private final LongAdder refusedByFallback = new LongAdder();
  private final LongAdder leasesLost = new LongAdder();

  RedisBulkhead(
      RedisCompartments fleet, Bulkhead gate, int share, Duration maxWait, long maxCallNanos) {
    this.fleet = fleet;
    this.store = fleet.store();
    this.gate = gate;
    this.admission =
        ProvisionalAdmission.of(gate)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "the local compartment must be built by Bulkhead.builder"));
    this.name = gate.name();
    this.share = share;
    this.fallbackPermits = new Semaphore(share);
    this.limit = gate.config().limit();
    Optional<Duration> wait = gate.config().maxWait();
    this.waitBounded = wait.isPresent();
    this.maxWaitNanos = wait.map(Duration::toNanos).orElse(Long.MAX_VALUE);
    this.maxCallNanos = maxCallNanos;
    this.threads = CompartmentThreads.forCompartment(name);
    this.inFallback = new AtomicBoolean(!fleet.connected());
    if (inFallback.get()) {
      fallbackSwitches.increment();
      logFallback("Redis is unreachable at start-up");
    } else {
      try {
        publishLimit(); // L1: the latest build sets the fleet's limit
      } catch (StoreUnavailableException e) {
        // published by the first admission that reaches Redis
      }
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Admission

  @Override
  public <T extends @Nullable Object> T call(Callable<T> task) throws Exception {
    Objects.requireNonNull(task, "task");
    long deadline = deadlineFromNow();
    ProvisionalSlot slot =
        admission.acquireProvisionally(); // a local refusal is counted by the gate
    Ticket ticket = obtainOrClose(deadline, slot);
    try {
      return task.call();
    } finally {
      ticket.release(); // before the local slot: a local waiter handed it finds the lease free
      slot.close();
    }
  }

  @Override
  public Permit acquire() {
    long deadline = deadlineFromNow();
    ProvisionalSlot slot = admission.acquireProvisionally();
    return new FleetPermit(slot, obtainOrClose(deadline, slot));
  }

  @Override
  public Optional<Permit> tryAcquire() {
    Optional<ProvisionalSlot> local = admission.tryAcquireProvisionally();
    if (local.isEmpty()) {
      return Optional.empty(); // counted QUEUE_FULL by the gate
    }
    ProvisionalSlot slot = local.get();
    try {
      Ticket ticket = leaseWaiters.isEmpty() ? attempt() : null;
      if (ticket != null && !stale(ticket)) {
        return Optional.of(new FleetPermit(slot, confirmed(slot, ticket)));
      }
      // The fleet is full, or the lease ran out before it could be used (R10): tryAcquire does not
      // wait, so this is the gate's empty result.
      slot.abandon(BulkheadFullException.Reason.QUEUE_FULL);
    } catch (Refusal r) {
      refuse(slot, r);
    } catch (RuntimeException | Error e) {
      slot.close();
      throw e;
    }
    return Optional.empty();
  }

  @Override
  public <T extends @Nullable Object> CompletableFuture<T> submit(
      Supplier<? extends CompletionStage<T>> task) {
    Objects.requireNonNull(task, "task");
    long deadline = deadlineFromNow();
    return admission.submitProvisionally(
        slot -> {
          Ticket now;
          LeaseWaiter w = null;
          try {
            now = leaseWaiters.isEmpty() ? attempt() : null;
            if (now != null && stale(now)) {
              now = null; // R10: given back; the call waits like one that found the fleet full
            }
            if (now == null) {
              w = enqueueAsync(deadline, slot, false);
            }
          } catch (Refusal r) {
            return CompletableFuture.failedFuture(refuse(slot, r));
          }
          if (now != null) {
            // Admitted at once: on the caller's thread, as core does. Nobody else holds `slot` yet
            // (the
            // gate forwards a cancel only to the stage this returns), so the confirmation cannot
            // fail.
            return start(task, confirmed(slot, now));
          }
          CompletableFuture<T> out = new CompletableFuture<>();
          startWhenServed(task, w, deadline, slot, out);
          return out;
        });
  }

  private static <T extends @Nullable Object> CompletionStage<T> start(
      Supplier<? extends CompletionStage<T>> task, Ticket ticket) {
    CompletionStage<T> stage;
    try {
      stage = Objects.requireNonNull(task.get(), "the task returned null instead of a stage");
    } catch (RuntimeException | Error e) {
      ticket.release();
      throw e;
    }
    return stage.whenComplete((result, failure) -> ticket.release());
  }

  /**
   * Completes {@code out}, the stage of a submit that waits for a lease, once {@code w} is served.
   * Its outcome, lease or refusal, is taken up on this compartment's own threads, never on the
   * scheduler that completed the waiter (I7): the slot's confirmation or abandonment, and so the
   * gate's listeners, run there. Cancelling the stage (the caller cancelled its future, and the
   * gate forwards that) withdraws the waiter (I6); the gate then closes the unconfirmed slot, which
   * counts the call cancelled. A lease lost before the supplier could start (R10) is given back and
   * the call waits again, holding the same slot, for what is left of its wait.
   */
  private <T extends @Nullable Object> void startWhenServed(
      Supplier<? extends CompletionStage<T>> task,
      LeaseWaiter w,
      long deadline,
      ProvisionalSlot slot,
      CompletableFuture<T> out) {
    w.whenCompleteAsync(
        (ticket, failure) -> {
          if (out.isDone()) {
            if (ticket != null) {
              ticket.release(); // R6: withdrawn after the scheduler handed it the lease
            }
          } else if (failure instanceof Refusal) {
            out.completeExceptionally(refuse(slot, (Refusal) failure));
          } else if (failure != null) {
            out.completeExceptionally(
                failure); // unexpected: the gate withdraws the unconfirmed slot
          } else if (stale(ticket)) {
            try {
              startWhenServed(task, enqueueAsync(deadline, slot, true), deadline, slot, out);
            } catch (Refusal r) {
              out.completeExceptionally(refuse(slot, r)); // no time left to wait again: a timeout
            }
          } else if (!slot.confirm()) {
            ticket.release(); // R6: withdrawn between the check above and the confirmation
          } else {
            CompletionStage<T> stage;
            try {
              stage = start(task, ticket);
            } catch (RuntimeException | Error e) {
              out.completeExceptionally(
                  e); // the gate releases the slot, as for a throwing supplier
              return;
            }
            stage.whenComplete(
                (result, error) -> {
                  if (error != null) {
                    out.completeExceptionally(error);
                  } else {
                    out.complete(result);
                  }
                });
          }
        },
        threads);
    out.whenComplete(
        (result, failure) -> {
          if (out.isCancelled() && w.cancel(false)) {
            leaseWaiters.remove(w); // R6: withdrawn before a lease came; no ticket was ever taken
          }
        });
  }

  private long deadlineFromNow() {
    return waitBounded ? System.nanoTime() + maxWaitNanos : Long.MAX_VALUE;
  }

  /**
   * Stage 2 for a caller that may park: a ticket and the slot confirmed, or the slot abandoned (or,
   * on an unexpected failure, closed) and the exception thrown.
   */
  private Ticket obtainOrClose(long deadline, ProvisionalSlot slot) {
    try {
      return obtain(deadline, slot);
    } catch (Refusal r) {
      throw refuse(slot, r);
    } catch (RuntimeException | Error e) {
      slot.close(); // counted cancelled by the gate: the call never ran
      throw e;
    }
  }

  /**
   * A ticket still good now (R10), now or after waiting in FIFO order, and the slot confirmed; a
   * Refusal when none comes within the wait. A stale ticket is given back and the call waits again,
   * in the same slot, for what is left of its wait.
   */
  private Ticket obtain(long deadline, ProvisionalSlot slot) {
    Ticket ticket = leaseWaiters.isEmpty() ? attempt() : null;
    boolean queued = false;
    while (ticket == null || stale(ticket)) {
      ticket = await(enqueue(deadline, slot, queued), deadline);
      queued = true;
    }
    return confirmed(slot, ticket);
  }

  /**
   * Parks until {@code w} is served: its ticket, or a Refusal (a timeout, interrupt or fallback).
   */
  private Ticket await(LeaseWaiter w, long deadline) {
    boolean interrupted = false;
    try {
      for (; ; ) {
        try {
          long remaining = deadline - System.nanoTime();
          return deadline == Long.MAX_VALUE
              ? w.get()
              : w.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          if (w.completeExceptionally(timeout())) {
            leaseWaiters.remove(w);
          }
        } catch (InterruptedException e) {
          interrupted = true;
          if (w.completeExceptionally(
              new Refusal(BulkheadFullException.Reason.INTERRUPTED, null))) {
            leaseWaiters.remove(w);
          }
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

  /**
   * Whether a ticket can no longer admit its call: its lease was reported lost, or its expiry, as
   * this process last confirmed it, has passed (the process was paused between the grant and the
   * start). A stale ticket is given back and counted in leasesLost (R10).
   */
  private boolean stale(Ticket ticket) {
    if (ticket.usable()) {
      return false;
    }
    ticket.release();
    leasesLost.increment();
    LOG.log(
        Level.WARNING,
        "compartment '"
            + name
            + "': a lease expired before its call could start"
            + " (this process paused longer than the lease TTL?); it was given back, and the call waits"
            + " for a new one within what is left of its maxWait (a tryAcquire comes back empty)");
    return true;
  }

  /**
   * Confirms the slot of a call that got {@code ticket}. Only the call's own caller closes a slot
   * it has not handed on, so this fails only for a submit withdrawn meanwhile.
   */
  private static Ticket confirmed(ProvisionalSlot slot, Ticket ticket) {
    if (!slot.confirm()) {
      ticket.release();
      throw new CancellationException("the call was withdrawn while it waited for a lease");
    }
    return ticket;
  }

  /** Stage 2 for submit: the same queue, with a timer in place of a parked thread. */
  private LeaseWaiter enqueueAsync(long deadline, ProvisionalSlot slot, boolean queuedAlready) {
    LeaseWaiter w = enqueue(deadline, slot, queuedAlready);
    if (deadline != Long.MAX_VALUE) {
      fleet.schedule(
          () -> {
            if (w.completeExceptionally(timeout())) {
              leaseWaiters.remove(w);
            }
          },
          deadline - System.nanoTime());
    }
    return w;
  }

  /**
   * Joins the lease line, as the gate's own queue would be joined: it takes a place of maxQueue
   * (QUEUE_FULL when none is left) and, with no time left to wait, times out as a queued call does.
   * A call that waits again after a stale ticket ({@code queuedAlready}, R10) keeps the place it
   * took.
   */
  private LeaseWaiter enqueue(long deadline, ProvisionalSlot slot, boolean queuedAlready) {
    if (!queuedAlready && !slot.queued()) {
      throw new Refusal(BulkheadFullException.Reason.QUEUE_FULL, null);
    }
    if (deadline - System.nanoTime() <= 0) {
      throw timeout(); // no time left to wait for the fleet
    }
    LeaseWaiter w = new LeaseWaiter();
    leaseWaiters.add(w);
    wake(); // a lease may have freed between the refusal and the enqueue
    return w;
  }

  /**
   * A lease wait past its deadline; counted in fleetTimeouts only if its call is rejected with it.
   */
  private Refusal timeout() {
    return new Refusal(BulkheadFullException.Reason.WAIT_TIMEOUT, fleetTimeouts);
  }

  /**
   * Rejects the call of {@code slot} for {@code r}: counts it where the refusal came from, then
   * abandons the slot, so that each call fleetTimeouts or refusedByFallback counts is one of the
   * gate's rejections. A refusal that lost the race for its waiter (R3) never gets here.
   */
  private static BulkheadFullException refuse(ProvisionalSlot slot, Refusal r) {
    if (r.countedIn != null) {
      r.countedIn.increment();
    }
    return slot.abandon(r.reason);
  }

  /**
   * One admission attempt: a lease, or null when the fleet is full; with Redis unreachable, a slot
   * of the local share, or a refusal.
   */
  private @Nullable Ticket attempt() {
    if (inFallback.get() && rejoining && System.nanoTime() - globalAgainAt < 0) {
      return shareSlot(); // R7: the rejoin window; Redis answers, but not every lease is back yet
    }
    String id = UUID.randomUUID().toString();
    long ttl = Math.min(fleet.leaseTtlMillis(), TimeUnit.NANOSECONDS.toMillis(maxCallNanos));
    LeaseStore.Grant grant;
    long askedAt = System.nanoTime();
    try {
      if (limitToPublish) {
        publishLimit();
      }
      grant = store.acquire(name, limit, ttl, id);
    } catch (StoreUnavailableException e) {
      rejoining = false; // unreachable again: the window starts afresh when it answers
      if (inFallback.compareAndSet(false, true)) {
        fallbackSwitches.increment();
        logFallback(e.getMessage());
      }
      return shareSlot();
    }
    noticeFleetLimit(grant.fleetLimit());
    String known = epoch;
    epoch = grant.epoch();
    boolean lostItsData = known != null && !known.equals(grant.epoch());
    if (inFallback.get() || lostItsData) {
      // Same epoch as before the outage: Redis kept its leases, every call of the fleet is still
      // counted, so there is nothing to wait for (R7). An epoch never seen (fallback since
      // start-up)
      // could be a new one: wait out the window.
      boolean windowOver =
          !lostItsData && (rejoining ? System.nanoTime() - globalAgainAt >= 0 : known != null);
      if (!windowOver) {
        if (grant.granted()) {
          giveBack(id); // taken while the fleet's count may still miss calls: not used
        }
        if (lostItsData || !rejoining) {
          startRejoining(
              lostItsData
                  ? "Redis lost its leases (a restart without its data?)"
                  : "Redis answers again");
        }
        return shareSlot();
      }
      rejoining = false;
      if (inFallback.compareAndSet(true, false)) {
        LOG.log(Level.INFO, "compartment '" + name + "' admits by fleet leases again");
      }
    }
    if (!grant.granted()) {
      return null;
    }
    FleetLease lease =
        new FleetLease(
            id,
            grant.fencingToken(),
            grant.epoch(),
            System.nanoTime(),
            askedAt + TimeUnit.MILLISECONDS.toNanos(ttl));
    active.add(lease);
    return lease;
  }

  /**
   * Makes this process's limit the fleet's (the latest build or setLimit wins, L1). Throws
   * StoreUnavailable when Redis does not answer; the next admission tries again.
   */
  private void publishLimit() {
    int mine = limit;
    Integer replaced = store.publishLimit(name, mine);
    limitToPublish = false;
    fleetLimitWarned = mine;
    if (replaced != null && replaced != mine) {
      LOG.log(
          Level.INFO,
          "compartment '"
              + name
              + "': the fleet's limit is now "
              + mine
              + " (was "
              + replaced
              + "): the latest build or setLimit of any process sets it");
    }
  }

  /** One warning per value when the fleet admits against a limit other than this process's (L1). */
  private void noticeFleetLimit(int stored) {
    if (stored != limit && stored != fleetLimitWarned) {
      fleetLimitWarned = stored;
      LOG.log(
          Level.WARNING,
          "compartment '"
              + name
              + "': this process's limit is "
              + limit
              + " but the fleet's limit is "
              + stored
              + ", written by a later build or setLimit in"
              + " another process; the latest write wins, so the fleet admits at most "
              + stored
              + " (and this process at most "
              + limit
              + ")");
    }
  }

  /**
   * Keeps admitting by the static share for one lease TTL: by then every process's renewal has
   * registered the calls it still runs (renewals come every third of a TTL), so the fleet's count
   * is whole again before this process trusts it. Logged once per window.
   */
  private void startRejoining(String why) {
    globalAgainAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(fleet.leaseTtlMillis());
    rejoining = true;
    if (inFallback.compareAndSet(false, true)) {
      fallbackSwitches.increment();
    }
    LOG.log(
        Level.WARNING,
        "compartment '"
            + name
            + "': "
            + why
            + "; "
            + (share > 0
                ? "admitting at most " + share + " calls of this process without leases"
                : "refusing every call (failClosed)")
            + " for one lease TTL ("
            + fleet.leaseTtlMillis()
            + " ms) while the fleet registers the"
            + " calls it still runs, then by fleet leases");
  }

  /** A slot of the static share, or the immediate refusal of the fallback policy (never queued). */
  private Ticket shareSlot() {
    if (share > 0 && fallbackPermits.tryAcquire()) {
      return new FallbackSlot();
    }
    throw new Refusal(BulkheadFullException.Reason.QUEUE_FULL, refusedByFallback);
  }

  private void giveBack(String leaseId) {
    try {
      store.release(name, leaseId);
    } catch (StoreUnavailableException e) {
      // it expires within one TTL
    }
  }

  private void logFallback(String why) {
    LOG.log(
        Level.WARNING,
        "compartment '"
            + name
            + "' cannot reach Redis ("
            + why
            + "): "
            + (share > 0
                ? "admitting at most " + share + " calls of this process without leases"
                : "refusing every call (failClosed)")
            + " until it answers");
  }

  // ------------------------------------------------------------------------------------------------
  // Waking the waiters (on the fleet's scheduler thread)

  /**
   * A lease was freed somewhere: serve the waiters soon, at most one run scheduled at a time (R5).
   */
  void wake() {
    if (!leaseWaiters.isEmpty() && wakePending.compareAndSet(false, true)) {
      fleet.execute(this::serveWaiters);
    }
  }

  /** Gives tickets to the waiters in FIFO order until the fleet refuses one. */
  void serveWaiters() {
    wakePending.set(false);
    for (LeaseWaiter head; (head = leaseWaiters.peek()) != null; ) {
      if (head.isDone()) {
        leaseWaiters.remove(
            head); // timed out or interrupted; its owner may not have removed it yet
        continue;
      }
      Ticket ticket;
      try {
        ticket = attempt();
      } catch (Refusal e) {
        if (head.completeExceptionally(e)) {
          leaseWaiters.remove(head);
        }
        continue;
      }
      if (ticket == null) {
        return; // the fleet is full: wait for the next release message or poll
      }
      leaseWaiters.remove(head);
      if (!head.complete(ticket)) {
        ticket.release(); // R3: its caller gave up a moment ago
      }
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Renewal (on the fleet's scheduler thread)

  /** The leases to renew now; drops those past their call's maxCallDuration. */
  List<FleetLease> leasesToRenew() {
    List<FleetLease> out = new ArrayList<>();
    long now = System.nanoTime();
    for (FleetLease l : active) {
      if (now - l.admittedAt >= maxCallNanos) {
        active.remove(l); // never renewed past its call's own deadline: it expires by itself
      } else {
        out.add(l);
      }
    }
    return out;
  }

  void renewed(List<FleetLease> sent, LeaseStore.Renewed result) {
    boolean epochChanged = false;
    for (FleetLease l : sent) {
      if (!l.epoch.equals(result.epoch())) {
        epochChanged = true;
        l.epoch = result.epoch(); // registered again under the new epoch by the same script
      }
    }
    if (epochChanged) {
      LOG.log(
          Level.WARNING,
          "compartment '"
              + name
              + "': Redis lost its leases (a restart without"
              + " its data?); the "
              + sent.size()
              + " calls of this process still running were registered"
              + " again");
      if (!rejoining) {
        startRejoining("Redis lost its leases");
      }
    }
    epoch = result.epoch();
    for (FleetLease l : sent) {
      if (!result.lost().contains(l.id)) {
        l.validUntil = l.renewingUntil; // R10: as long as this renewal made it live
      }
    }
    for (String id : result.lost()) {
      for (FleetLease l : sent) {
        if (l.id.equals(id) && active.remove(l)) { // R2: a lease released meanwhile is not lost
          leasesLost.increment();
          LOG.log(
              Level.WARNING,
              "compartment '"
                  + name
                  + "': a lease expired while its call still"
                  + " ran (this process paused longer than the lease TTL?); it is no longer counted");
        }
      }
    }
  }

  /**
   * For tests: where a submit that waited for a lease starts, in place of this compartment's
   * threads, so a test can hold one between its grant and its start (R10). Call before the first
   * call.
   */
  void startWaitedCallsOn(Executor executor) {
    this.threads = executor;
  }

  // ------------------------------------------------------------------------------------------------
  // Compartment

  @Override
  public FleetStats fleetStats() {
    return new FleetStats(
        inFallback.get(),
        fallbackSwitches.sum(),
        active.size(),
        share - fallbackPermits.availablePermits(),
        leaseWaiters.size(),
        fleetTimeouts.sum(),
        refusedByFallback.sum(),
        leasesLost.sum(),
        store.scriptReloads());
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public BulkheadConfig config() {
    return gate.config();
  }

  /**
   * Changes this process's limit and the one it asks the fleet for; see the README for
   * disagreements.
   */
  @Override
  public void setLimit(int newLimit) {
    gate.setLimit(newLimit);
    this.limit = newLimit;
    limitToPublish = true; // the next admission makes it the fleet's (L1)
    try {
      publishLimit();
    } catch (StoreUnavailableException e) {
      // published by the first admission that reaches Redis
    }
    wake();
  }

  @Override
  public BulkheadStats stats() {
    return gate.stats();
  }

  @Override
  public void addListener(BulkheadListener listener) {
    gate.addListener(listener);
  }

  @Override
  public boolean removeListener(BulkheadListener listener) {
    return gate.removeListener(listener);
  }

  @Override
  public Optional<Budget> budget() {
    return gate.budget();
  }

  @Override
  public void leaveBudget() {
    gate.leaveBudget();
  }

  @Override
  public String toString() {
    return "FleetBulkhead{name="
        + name
        + ", limit="
        + limit
        + ", leasesHeld="
        + active.size()
        + (inFallback.get() ? ", fallback" : "")
        + "}";
  }

  // ------------------------------------------------------------------------------------------------

  /** What stage 2 hands a call: a lease or a slot of the local share; given back exactly once. */
  private abstract static class Ticket {
    private final AtomicBoolean released = new AtomicBoolean();

    final void release() {
      if (released.compareAndSet(false, true)) {
        giveBack();
      }
    }

    abstract void giveBack();

    /** Whether the call may still start under this ticket (R10). */
    abstract boolean usable();
  }

  /** A lease in Redis. */
  final class FleetLease extends Ticket {
    private final String id;
    private final long fencingToken;
    private final long admittedAt;
    private volatile String epoch;
    // nanoTime by which the lease has surely not expired in Redis: when it was asked for or last
    // sent
    // for renewal, plus the time it was given. Redis counts from when the script ran, which is
    // later.
    private volatile long validUntil;
    private volatile long renewingUntil; // validUntil once the renewal in flight succeeds

    FleetLease(String id, long fencingToken, String epoch, long admittedAt, long validUntil) {
      this.id = id;
      this.fencingToken = fencingToken;
      this.epoch = epoch;
      this.admittedAt = admittedAt;
      this.validUntil = validUntil;
    }

    String id() {
      return id;
    }

    String epoch() {
      return epoch;
    }

    /** How long the renewal about to be sent may make the lease live; remembered for usable(). */
    long validForMillis(long ttlMillis) {
      long now = System.nanoTime();
      long left = maxCallNanos - (now - admittedAt);
      long millis = Math.max(1, Math.min(ttlMillis, TimeUnit.NANOSECONDS.toMillis(left)));
      renewingUntil = now + TimeUnit.MILLISECONDS.toNanos(millis);
      return millis;
    }

    @Override
    boolean usable() {
      return active.contains(this) && validUntil - System.nanoTime() > 0;
    }

    @Override
    void giveBack() {
      active.remove(this);
      try {
        store.release(name, id);
      } catch (StoreUnavailableException e) {
        // R4: it expires within one TTL; renewal no longer sees it
      }
    }

    @Override
    public String toString() {
      return "lease " + id + " (fencing token " + fencingToken + ", epoch " + epoch + ")";
    }
  }

  /** A slot of the static local share, taken while Redis was unreachable. */
  private final class FallbackSlot extends Ticket {
    @Override
    void giveBack() {
      fallbackPermits.release();
      wake();
    }

    @Override
    boolean usable() {
      return true; // a local permit cannot be lost
    }
  }

  /**
   * Why stage 2 refused a call, for its caller to abandon the gate's slot with: the gate then
   * counts the rejection and builds the exception (with its own retry-after estimate) on the
   * caller's side, never on the fleet's scheduler. Thrown on hot paths, so it has no stack trace.
   */
  private static final class Refusal extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient BulkheadFullException.Reason reason;
    // The fleetStats counter that says this rejection came from the fleet (fleetTimeouts,
    // refusedByFallback), added to by refuse() when a call is rejected with it; null for the
    // others.
    final transient @Nullable LongAdder countedIn;

    Refusal(BulkheadFullException.Reason reason, @Nullable LongAdder countedIn) {
      super(reason.name(), null, false, false);
      this.reason = reason;
      this.countedIn = countedIn;
    }
  }

  /** A call waiting in stage 2; completed once (I4). */
  private static final class LeaseWaiter extends CompletableFuture<Ticket> {}

  /** A permit of both stages: the ticket is given back before the local (confirmed) slot. */
  private static final class FleetPermit implements Permit {
    private final Permit local;
    private final Ticket ticket;

    FleetPermit(Permit local, Ticket ticket) {
      this.local = local;
      this.ticket = ticket;
    }

    @Override
    public void close() {
      ticket.release();
      local.close();
    }

    @Override
    public boolean isClosed() {
      return local.isClosed();
    }
  }
}
