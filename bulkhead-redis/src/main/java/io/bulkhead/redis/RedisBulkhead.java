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
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/*
 * A fleet compartment: a local compartment (the gate) in front of tickets from the fleet. Its parts, each
 * with its own invariants: the lease line (LeaseLine: who waits for a ticket, FIFO), the fallback share
 * (FallbackShare: what admits while Redis cannot), the fleet limit (FleetLimit: the one limit in Redis).
 * This class holds the admission paths, the leases and their renewal, and how the gate counts a call.
 *
 * Algorithm
 * ---------
 * Admission has two stages.
 *   1. The gate, an ordinary core Bulkhead of the same limit, queue and wait. It gives this process FIFO
 *      waiting without a thread per waiter, the fast local "no", stats and listeners, and caps the
 *      process at the fleet's limit. Its slot is taken provisionally (io.bulkhead.spi): the gate counts
 *      nothing as admitted until stage 2 has a ticket.
 *   2. Inside the provisional slot, a ticket (attempt()): a lease in Redis (one script round trip) or, by
 *      the fallback policy, a slot of the local share or a refusal. If the fleet is full, the call joins
 *      the lease line and waits for what is left of its maxWait.
 *
 * How the gate counts stage 2. A call that waits in stage 2 holds a gate slot, provisionally, and stage 2
 * settles how the gate counts it:
 *   a ticket        slot.confirm(): admitted (onAdmitted, with the whole wait since the call asked),
 *                   its latency timed from there, released when the call ends;
 *   no ticket       slot.abandon(reason): WAIT_TIMEOUT when maxWait passed in the lease line,
 *                   QUEUE_FULL for a fallback refusal or a full queue, INTERRUPTED for an interrupted
 *                   waiter; the exception built by the gate, so its retryAfter is core's estimate;
 *   withdrawn       the gate closes the unconfirmed slot when the submit's stage ends (its caller
 *                   cancelled): counted cancelled.
 * While a call waits in the lease line (slot.queued()) the gate reports it waiting, not in flight.
 *
 * Threads: a synchronous caller waits, runs and releases on its own thread. A submit admitted at once
 * starts on the caller's thread; one that waited starts on `threads`, this compartment's own, as does the
 * completion of one refused after waiting: never on the fleet's scheduler, which every compartment of
 * the fleet shares. The call gives its ticket back when it ends: one round trip to release the lease.
 * While it runs, a lease is renewed by the fleet's renewal task (one batched round trip per process),
 * never past the call's maxCallDuration.
 *
 * Invariants
 * ----------
 *   I1 every admitted call holds exactly one ticket, given back exactly once (Ticket.release CASes), and
 *      a gate slot confirmed once; a gate slot leaves its provisional state once and is freed once.
 *   I2 leases are granted only by the store's script, which counts the unexpired leases of every process
 *      under one server-side atomic step, against the fleet limit (FleetLimit L1).
 *   I3 a submit cancelled while it waits never runs its supplier and keeps no ticket, and is counted
 *      cancelled by the gate, not admitted.
 *
 * Races, as interleavings
 * -----------------------
 *   R1 lease expiry vs release. A process paused past the TTL loses its lease to the purge of another
 *      process's admission, which reuses the slot; the paused call then releases: ZREM removes nothing,
 *      so it cannot free the newcomer's slot. The renewal that finds the lease gone counts it lost.
 *   R2 renewal vs release. The renewal snapshots `active`, the call ends and ZREMs its lease, then the
 *      renewal runs: the lease is reported lost, but renewed() ignores leases already released.
 *   R3 Redis loss mid-call. The release fails: the lease is dropped from renewal and expires within one
 *      TTL. Calls admitted by the share hold no lease: after Redis returns, the fleet may run limit +
 *      shares until they end (the documented worst case).
 *   R4 cancel vs grant, async. The caller cancels `out` while the line completes its waiter with a ticket.
 *      If the cancel wins the waiter's CAS, it never gets a ticket. If the grant wins, the continuation on
 *      `threads` finds `out` done and releases the ticket without calling the supplier. A cancel between
 *      that check and slot.confirm() is decided by the slot: if the gate's close wins, confirm() returns
 *      false and the ticket is released unused; if confirm() wins, the call runs and the gate releases
 *      its slot when `out` completes.
 *   R5 rejoin window. Redis answers again with an epoch this process never saw, or a new one: the calls
 *      other processes still run may not be registered yet, so the compartment keeps admitting by its
 *      share for one lease TTL (FallbackShare) and gives back a lease the detecting attempt took. Redis
 *      answering with the epoch it had needs no window.
 *   R6 timeout vs cancel, async. The timer refuses the waiter as its caller cancels `out`. If the
 *      continuation finds `out` done it does nothing: the gate counts the call cancelled. Otherwise it
 *      abandons the slot (WAIT_TIMEOUT) and fails `out`. One count either way.
 *   R7 pause between grant and start. The process is paused after a lease was granted and before its call
 *      starts; the lease expires and another process takes the slot. Just before a call starts its ticket
 *      is checked (Ticket.usable): a lease reported lost, or whose `validUntil` has passed, is given back
 *      (leasesLost) and the call waits again, in the same slot, for what is left of its wait; tryAcquire
 *      comes back empty. A pause after the check, once the call has started, is R1.
 */
final class RedisBulkhead implements FleetBulkhead {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");

  private final RedisCompartments fleet;
  private final LeaseStore store;
  private final Bulkhead gate;
  private final ProvisionalAdmission admission; // the gate's two-step admission
  private final String name;
  private final boolean waitBounded;
  private final long maxWaitNanos;
  private final long maxCallNanos;
  private volatile Executor threads; // replaced only by tests, before any call (startWaitedCallsOn)

  private final FleetLimit limit;
  private final FallbackShare fallback;
  private final LeaseLine line;
  private final Set<FleetLease> active = ConcurrentHashMap.newKeySet();
  private volatile @Nullable String epoch; // as the last grant or renewal reported it
  private final LongAdder fleetTimeouts = new LongAdder();
  private final LongAdder leasesLost = new LongAdder();

  RedisBulkhead(RedisCompartments fleet, Bulkhead gate, int share, long maxCallNanos) {
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
    Optional<Duration> wait = gate.config().maxWait();
    this.waitBounded = wait.isPresent();
    this.maxWaitNanos = wait.map(Duration::toNanos).orElse(Long.MAX_VALUE);
    this.maxCallNanos = maxCallNanos;
    this.threads = CompartmentThreads.forCompartment(name);
    this.limit = new FleetLimit(name, store, gate.config().limit());
    this.line = new LeaseLine(fleet, this::attempt, fleetTimeouts);
    this.fallback =
        new FallbackShare(name, share, fleet.leaseTtlMillis(), !fleet.connected(), line::wake);
    if (!fallback.active()) {
      try {
        limit.publish(); // L1: the latest build sets the fleet's limit
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
      Ticket ticket = line.isEmpty() ? attempt() : null;
      if (ticket != null && !stale(ticket)) {
        return Optional.of(new FleetPermit(slot, confirmed(slot, ticket)));
      }
      // The fleet is full, or the lease ran out before it could be used (R7): tryAcquire does not
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
          LeaseLine.Waiter w = null;
          try {
            now = line.isEmpty() ? attempt() : null;
            if (now != null && stale(now)) {
              now = null; // R7: given back; the call waits like one that found the fleet full
            }
            if (now == null) {
              w = line.joinAsync(deadline, slot, false);
            }
          } catch (Refusal r) {
            return CompletableFuture.failedFuture(refuse(slot, r));
          }
          if (now != null) {
            // Admitted at once: on the caller's thread, as core does. Nobody else holds `slot` yet
            // (the gate forwards a cancel only to the stage this returns), so confirming cannot
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
   * Completes {@code out}, the stage of a submit that waits in the lease line, once {@code w} is
   * served. Its outcome is taken up on this compartment's own threads, never on the thread that
   * completed the waiter: the slot's confirmation or abandonment, and so the gate's listeners, run
   * there. Cancelling the stage withdraws the waiter (I3); the gate then closes the unconfirmed
   * slot, which counts the call cancelled. A stale ticket (R7) is given back and the call waits
   * again, holding the same slot, for what is left of its wait.
   */
  private <T extends @Nullable Object> void startWhenServed(
      Supplier<? extends CompletionStage<T>> task,
      LeaseLine.Waiter w,
      long deadline,
      ProvisionalSlot slot,
      CompletableFuture<T> out) {
    w.whenCompleteAsync(
        (ticket, failure) -> {
          if (out.isDone()) {
            if (ticket != null) {
              ticket.release(); // R4: withdrawn after the line handed it a ticket
            }
          } else if (failure instanceof Refusal) {
            out.completeExceptionally(refuse(slot, (Refusal) failure));
          } else if (failure != null) {
            out.completeExceptionally(failure); // unexpected: the gate withdraws the slot
          } else if (stale(ticket)) {
            try {
              startWhenServed(task, line.joinAsync(deadline, slot, true), deadline, slot, out);
            } catch (Refusal r) {
              out.completeExceptionally(refuse(slot, r)); // no time left to wait again: a timeout
            }
          } else if (!slot.confirm()) {
            ticket.release(); // R4: withdrawn between the check above and the confirmation
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
          if (out.isCancelled()) {
            line.withdraw(w); // I3: withdrawn before a ticket came; none was ever taken
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
      Ticket ticket = line.isEmpty() ? attempt() : null;
      boolean queued = false;
      while (ticket == null || stale(ticket)) {
        ticket = line.await(line.join(deadline, slot, queued), deadline);
        queued = true;
      }
      return confirmed(slot, ticket);
    } catch (Refusal r) {
      throw refuse(slot, r);
    } catch (RuntimeException | Error e) {
      slot.close(); // counted cancelled by the gate: the call never ran
      throw e;
    }
  }

  /**
   * Whether a ticket can no longer admit its call (R7): given back and counted in leasesLost if so.
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

  /**
   * Rejects the call of {@code slot} for {@code r}: counts it where the refusal came from, then
   * abandons the slot, so that each call fleetTimeouts or refusedByFallback counts is one of the
   * gate's rejections. A refusal that lost the race for its waiter never gets here.
   */
  private static BulkheadFullException refuse(ProvisionalSlot slot, Refusal r) {
    if (r.countedIn != null) {
      r.countedIn.increment();
    }
    return slot.abandon(r.reason);
  }

  /**
   * One admission attempt: a lease, or null when the fleet is full; by the fallback policy, a slot
   * of the local share, or a refusal.
   */
  private @Nullable Ticket attempt() {
    if (fallback.inRejoinWindow()) {
      return fallback.slot(); // R5: Redis answers, but not every lease is back yet
    }
    String id = UUID.randomUUID().toString();
    long ttl = Math.min(fleet.leaseTtlMillis(), TimeUnit.NANOSECONDS.toMillis(maxCallNanos));
    LeaseStore.Grant grant;
    long askedAt = System.nanoTime();
    try {
      limit.publishIfPending();
      grant = store.acquire(name, limit.own(), ttl, id);
    } catch (StoreUnavailableException e) {
      fallback.unreachable(e.getMessage());
      return fallback.slot();
    }
    limit.notice(grant.fleetLimit());
    String known = epoch;
    epoch = grant.epoch();
    boolean lostItsData = known != null && !known.equals(grant.epoch());
    if (fallback.active() || lostItsData) {
      // Same epoch as before the outage: Redis kept its leases, every call of the fleet is still
      // counted, so there is nothing to wait for (R5). An epoch never seen (fallback since
      // start-up)
      // could be a new one: wait out the window.
      boolean windowOver =
          !lostItsData && (fallback.rejoining() ? fallback.windowPassed() : known != null);
      if (!windowOver) {
        if (grant.granted()) {
          giveBack(id); // taken while the fleet's count may still miss calls: not used
        }
        if (lostItsData || !fallback.rejoining()) {
          fallback.startRejoining(
              lostItsData
                  ? "Redis lost its leases (a restart without its data?)"
                  : "Redis answers again");
        }
        return fallback.slot();
      }
      fallback.end();
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

  private void giveBack(String leaseId) {
    try {
      store.release(name, leaseId);
    } catch (StoreUnavailableException e) {
      // it expires within one TTL
    }
  }

  /** A lease was freed somewhere: serve the line soon. */
  void wake() {
    line.wake();
  }

  /** The fleet's slow poll: serve the line (leases that expire send no message). */
  void serveWaiters() {
    line.serve();
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
              + "': Redis lost its leases (a restart without its data?); the "
              + sent.size()
              + " calls of this process still running were registered again");
      if (!fallback.rejoining()) {
        fallback.startRejoining("Redis lost its leases");
      }
    }
    epoch = result.epoch();
    for (FleetLease l : sent) {
      if (!result.lost().contains(l.id)) {
        l.validUntil = l.renewingUntil; // R7: as long as this renewal made it live
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
   * threads, so a test can hold one between its grant and its start (R7). Call before the first
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
        fallback.active(),
        fallback.switches.sum(),
        active.size(),
        fallback.inFlight(),
        line.size(),
        fleetTimeouts.sum(),
        fallback.refused.sum(),
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
    limit.set(newLimit); // the next admission makes it the fleet's if Redis does not answer now
    line.wake();
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
        + limit.own()
        + ", leasesHeld="
        + active.size()
        + (fallback.active() ? ", fallback" : "")
        + "}";
  }

  // ------------------------------------------------------------------------------------------------

  /** A lease in Redis. */
  final class FleetLease extends Ticket {
    private final String id;
    private final long fencingToken;
    private final long admittedAt;
    private volatile String epoch;
    // nanoTime by which the lease has surely not expired in Redis: when it was asked for or last
    // sent for renewal, plus the time it was given. Redis counts from when the script ran, later.
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
        // R3: it expires within one TTL; renewal no longer sees it
      }
    }

    @Override
    public String toString() {
      return "lease " + id + " (fencing token " + fencingToken + ", epoch " + epoch + ")";
    }
  }

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
