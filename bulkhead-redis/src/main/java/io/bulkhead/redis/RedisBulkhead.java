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
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/*
 * A fleet compartment: a local compartment (the gate) in front of a slot of this process's lease. The
 * parts, each with its own invariants at its top: the lease (LeaseSlots: the batch of slots this process
 * holds, admitted against in memory; LeaseSync: keeping it in step with Redis from the background), the
 * lease line (LeaseLine: who waits for a slot, FIFO), the fallback share (FallbackShare: what admits
 * while the lease cannot), the fleet limit (FleetLimit: the one limit in Redis). This class holds the
 * admission paths and how the gate counts a call.
 *
 * Algorithm
 * ---------
 * Admission has two stages, neither of which waits for Redis. A call admitted at once takes them in
 * the other order, both at once (below); one that may wait takes them in this one.
 *   1. The gate, an ordinary core Bulkhead of this process's limit, queue and wait. It gives FIFO waiting
 *      without a thread per waiter, the fast local "no", stats and listeners. Its slot is taken
 *      provisionally (io.bulkhead.spi): the gate counts nothing as admitted until stage 2 has a ticket.
 *   2. Inside the provisional slot, a ticket (attempt()): a slot of the lease (one CAS), or in fallback
 *      a slot of the share, or the fallback policy's refusal. If the lease has no free slot, the call
 *      joins the lease line and waits for what is left of its maxWait; a release, a grant from Redis or
 *      a switch to the fallback policy serves the line.
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
 * A call admitted at once (permitAtOnce(), whose steps callWith writes out; see DESIGN.md) costs: the
 * lease's CAS and one clock reading (LeaseSlots M3's, which is also the call's start), then the gate's
 * lock-free CAS, which counts the admission as a local one's does (ProvisionalAdmission.admitAtOnce),
 * and one SlotTicket (for acquire/tryAcquire the permit; a synchronous call's the JIT keeps in
 * registers); its release: the ticket's give-back (the lease's decrement, one clock reading:
 * overran?) before the gate's (releaseTaken). The lease comes first because the gate's
 * admission cannot be taken back once counted, and the lease's slot can: given back unused when the
 * gate has none free at once. A synchronous call gives both back on its own thread; a permit, which
 * may be closed on several threads at once, behind its ticket's flag. A call not admitted at once takes
 * a provisional gate slot (stage 1) and waits in it; its release is then the gate slot's CAS, which
 * runs the ticket's give-back first.
 * The ticket's own flag is CASed for a permit admitted at once and where no gate slot guards it (a
 * submit's stage, the line's R1).
 * A wait deadline is computed only by a call that waits, from what the gate says is left of its
 * maxWait (ProvisionalSlot.remainingWaitNanos).
 *
 * Threads: a synchronous caller waits, runs and releases on its own thread. A submit admitted at once
 * starts on the caller's thread; one that waited starts on `threads`, this compartment's own, as does the
 * completion of one refused after waiting: never on the fleet's sync thread or timer, which every
 * compartment of the fleet shares. Round trips to Redis happen on the sync thread only.
 *
 * Invariants
 * ----------
 *   I1 every admitted call holds exactly one ticket, given back exactly once, and a gate slot confirmed
 *      once (a call admitted at once: by the gate's CAS that admitted it); a gate slot leaves its
 *      provisional state once and is freed once. The once is: for a synchronous call admitted at once,
 *      its own thread, the only one that holds the two; for a permit admitted at once, its ticket's flag
 *      (Ticket.claim), whose winner gives back the ticket and then the gate's slot; for a call or
 *      permit that waited, the gate slot's close(GIVE_BACK, ticket) CAS; Ticket.release's flag for the
 *      rest. A ticket goes through one of them, never two; one the gate refused at once goes through
 *      none: its slot of the lease is given back unused by the thread that took it (giveBackUnused).
 *   I2 a call admitted under the lease took its slot before the lease's admitUntil (LeaseSlots M3), and
 *      when it waited for its slot, still could when it started (R2 below).
 *   I3 a submit cancelled while it waits never runs its supplier and keeps no ticket, and is counted
 *      cancelled by the gate, not admitted.
 *
 * Races, as interleavings
 * -----------------------
 *   R1 cancel vs grant, async. The caller cancels `out` while the line completes its waiter with a ticket.
 *      If the cancel wins the waiter's CAS, it never gets a ticket. If the grant wins, the continuation on
 *      `threads` finds `out` done and releases the ticket without calling the supplier. A cancel between
 *      that check and slot.confirm() is decided by the slot: if the gate's close wins, confirm() returns
 *      false and the ticket is released unused; if confirm() wins, the call runs and the gate releases
 *      its slot when `out` completes.
 *   R2 pause between grant and start. A waiter is handed a slot and its thread (or the continuation)
 *      runs only later, after the lease stopped admitting (a paused process, a long GC). Just before the
 *      call starts its ticket is checked (Ticket.usable): a lease slot that could no longer cover a call
 *      is given back (leasesLost) and the call waits again, in the same gate slot, for what is left of its
 *      wait. A pause after the check, once the call has started, makes the call overrun its
 *      maxCallDuration: the documented worst case.
 *   R3 timeout vs cancel, async. The timer refuses the waiter as its caller cancels `out`. If the
 *      continuation finds `out` done it does nothing: the gate counts the call cancelled. Otherwise it
 *      abandons the slot (WAIT_TIMEOUT) and fails `out`. One count either way.
 *   R4 release vs waiter: the releasing thread gives its slot back to the lease, then serves the line
 *      (LeaseLine W4), so a waiter that joined meanwhile gets it.
 *   R5 at once vs a full gate: a call takes a slot of the lease, finds the gate with none free (or a
 *      local waiter), and gives the slot back unused, then serves the line as a release does (R4). In
 *      between, the lease counts one slot more than runs: a waiter that found the lease full meanwhile
 *      joined the line and is served by that give-back; a sync reports one slot more than needed, which
 *      Redis may record (M1 allows more, never less).
 */
final class RedisBulkhead implements FleetBulkhead {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");

  private final RedisCompartments fleet;
  private final LeaseStore store;
  private final Bulkhead gate;
  private final ProvisionalAdmission admission; // the gate's two-step admission
  private final String name;
  private final boolean waitBounded;
  private final long maxCallNanos;
  private volatile Executor threads; // replaced only by tests, before any call (startWaitedCallsOn)

  private final FleetLimit limit;
  private final FallbackShare fallback;
  private final LeaseSlots slots;
  private final LeaseLine line;
  private final LeaseSync sync;
  private final AtomicInteger fallbackInFlight = new AtomicInteger();
  private final LongAdder fleetTimeouts = new LongAdder();
  private final LongAdder startsLost = new LongAdder();
  private final LongAdder callsOverran = new LongAdder();
  private final AtomicBoolean overrunLogged = new AtomicBoolean();
  private final LeaseSlots.Taken<SlotTicket> newTicket = this::newTicket;

  /** A sync of this compartment is pending on the sync thread (RedisCompartments.requestSync). */
  final AtomicBoolean syncRequested = new AtomicBoolean();

  private volatile @Nullable ScheduledFuture<?> lapseTimer; // written on the sync thread only

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
    this.maxCallNanos = maxCallNanos;
    this.threads = CompartmentThreads.forCompartment(name);
    this.limit = new FleetLimit(name, store, gate.config().limit());
    this.fallback = new FallbackShare(name, share);
    this.slots = new LeaseSlots(share);
    this.line = new LeaseLine(fleet::schedule, this::attempt, fleetTimeouts);
    this.sync =
        new LeaseSync(
            name,
            fleet.member(),
            store,
            slots,
            line,
            limit,
            fallback,
            fleet.leaseTtlMillis(),
            fleet.intervalMillis(),
            TimeUnit.NANOSECONDS.toMillis(maxCallNanos));
  }

  // ------------------------------------------------------------------------------------------------
  // Admission

  @Override
  public <T extends @Nullable Object> T call(Callable<T> task) throws Exception {
    Objects.requireNonNull(task, "task");
    return callWith(task, null);
  }

  @Override
  public <T extends @Nullable Object> T callFenced(FencedCall<T> task) throws Exception {
    Objects.requireNonNull(task, "task");
    return callWith(null, task);
  }

  /** A synchronous call: {@code task}, or {@code fenced} told the fencing token. */
  private <T extends @Nullable Object> T callWith(
      @Nullable Callable<T> task, @Nullable FencedCall<T> fenced) throws Exception {
    // permitAtOnce()'s steps, written out: compiled apart, that method is too big for the JIT to
    // inline here, and the ticket it returns would then be allocated; in this method it is not.
    SlotTicket ticket = leaseAtOnce();
    if (ticket != null) {
      int admitted = admission.admitAtOnce();
      if (admitted != ProvisionalAdmission.NOT_TAKEN) {
        // Admitted at once, without the gate's slot object (I1): this thread alone gives both back.
        long admittedAt = admission.admittedAt(admitted);
        try {
          return run(task, fenced, ticket);
        } finally {
          // The lease's slot first: a local waiter handed the gate's finds it free.
          try {
            ticket.giveBack();
          } finally {
            admission.releaseTaken(admitted, admittedAt);
          }
        }
      }
      ticket.giveBackUnused();
    }
    ProvisionalSlot slot = admission.acquireProvisionally(); // a local refusal: counted by the gate
    ticket = obtainOrClose(slot);
    try {
      return run(task, fenced, ticket);
    } finally {
      // The ticket first, inside the slot's once-only CAS: a local waiter handed the slot finds the
      // lease's slot free.
      slot.close(GIVE_BACK, ticket);
    }
  }

  private static <T extends @Nullable Object> T run(
      @Nullable Callable<T> task, @Nullable FencedCall<T> fenced, SlotTicket ticket)
      throws Exception {
    return task != null ? task.call() : Objects.requireNonNull(fenced).call(ticket.token);
  }

  @Override
  public FleetPermit acquire() {
    SlotTicket ticket = permitAtOnce();
    if (ticket != null) {
      return ticket;
    }
    ProvisionalSlot slot = admission.acquireProvisionally();
    return obtainOrClose(slot).heldWith(slot);
  }

  @Override
  public Optional<Permit> tryAcquire() {
    SlotTicket atOnce = permitAtOnce();
    if (atOnce != null) {
      return Optional.of(atOnce);
    }
    Optional<ProvisionalSlot> local = admission.tryAcquireProvisionally();
    if (local.isEmpty()) {
      return Optional.empty(); // counted QUEUE_FULL by the gate
    }
    ProvisionalSlot slot = local.get();
    try {
      SlotTicket ticket = line.isEmpty() ? attempt() : null;
      if (ticket != null) {
        slot.confirmOwned(); // nobody else holds a slot tryAcquire took
        return Optional.of(ticket.heldWith(slot));
      }
      unmet();
      slot.abandon(BulkheadFullException.Reason.QUEUE_FULL); // tryAcquire does not wait
    } catch (Refusal r) {
      unmet();
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
    return submitWith(token -> task.get());
  }

  @Override
  public <T extends @Nullable Object> CompletableFuture<T> submitFenced(
      LongFunction<? extends CompletionStage<T>> task) {
    Objects.requireNonNull(task, "task");
    return submitWith(task);
  }

  private <T extends @Nullable Object> CompletableFuture<T> submitWith(
      LongFunction<? extends CompletionStage<T>> task) {
    return admission.submitProvisionally(
        slot -> {
          SlotTicket now;
          LeaseLine.Waiter w = null;
          long deadline = 0;
          try {
            now = line.isEmpty() ? attempt() : null;
            if (now == null) {
              unmet();
              deadline = deadlineOf(slot);
              w = line.joinAsync(deadline, slot, false);
              slots.noteWaiting(line.size());
            }
          } catch (Refusal r) {
            unmet();
            return CompletableFuture.failedFuture(refuse(slot, r));
          }
          if (now != null) {
            // Admitted at once: on the caller's thread, as core does. Nobody else holds `slot` yet
            // (the gate forwards a cancel only to the stage this returns).
            slot.confirmOwned();
            return start(task, now);
          }
          CompletableFuture<T> out = new CompletableFuture<>();
          startWhenServed(task, w, deadline, slot, out);
          return out;
        });
  }

  private static <T extends @Nullable Object> CompletionStage<T> start(
      LongFunction<? extends CompletionStage<T>> task, SlotTicket ticket) {
    CompletionStage<T> stage;
    try {
      stage =
          Objects.requireNonNull(
              task.apply(ticket.token), "the task returned null instead of a stage");
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
   * slot, which counts the call cancelled. A stale ticket (R2) is given back and the call waits
   * again, holding the same slot, for what is left of its wait.
   */
  private <T extends @Nullable Object> void startWhenServed(
      LongFunction<? extends CompletionStage<T>> task,
      LeaseLine.Waiter w,
      long deadline,
      ProvisionalSlot slot,
      CompletableFuture<T> out) {
    w.whenCompleteAsync(
        (ticket, failure) -> {
          if (out.isDone()) {
            if (ticket != null) {
              ticket.release(); // R1: withdrawn after the line handed it a ticket
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
            ticket.release(); // R1: withdrawn between the check above and the confirmation
          } else {
            CompletionStage<T> stage;
            try {
              stage = start(task, (SlotTicket) ticket);
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

  /**
   * A call admitted at once, when nobody waits in the lease line: a slot of the lease (one CAS and
   * LeaseSlots M3's clock reading, also the call's start), then the gate's, counted admitted by the
   * gate's own CAS (admitAtOnce). Null when either has none free at once: a slot of the lease taken
   * for nothing is given back unused, and the caller goes the provisional way (its attempt() takes
   * it again, or waits, or is refused). In fallback the slot is one of the share's.
   */
  private @Nullable SlotTicket permitAtOnce() {
    SlotTicket ticket = leaseAtOnce();
    if (ticket == null) {
      return null;
    }
    int admitted = admission.admitAtOnce();
    if (admitted == ProvisionalAdmission.NOT_TAKEN) {
      ticket.giveBackUnused();
      return null;
    }
    return ticket.heldAtOnce(admitted, admission.admittedAt(admitted));
  }

  /** The first step of an admission at once: a slot of the lease, when nobody waits in its line. */
  private @Nullable SlotTicket leaseAtOnce() {
    return line.isEmpty() ? slots.tryTake(newTicket) : null;
  }

  /**
   * The instant a call that must wait for a slot of the lease gives up: what is left of its maxWait
   * (counted by the gate from when it asked) from now. Read only by a call that waits, so an
   * admission at once reads no clock for it.
   */
  private long deadlineOf(ProvisionalSlot slot) {
    if (!waitBounded) {
      return Long.MAX_VALUE;
    }
    long left = slot.remainingWaitNanos();
    long now = System.nanoTime();
    return left > Long.MAX_VALUE / 2 ? now + Long.MAX_VALUE / 2 : now + Math.max(0, left);
  }

  /**
   * Stage 2 for a caller that may park: a ticket and the slot confirmed, or the slot abandoned (or,
   * on an unexpected failure, closed) and the exception thrown.
   */
  private SlotTicket obtainOrClose(ProvisionalSlot slot) {
    try {
      // A ticket of attempt() was checked against the clock just now (LeaseSlots M3): only one
      // handed over by the line may be stale (R2).
      SlotTicket ticket = line.isEmpty() ? attempt() : null;
      if (ticket == null) {
        unmet();
        long deadline = deadlineOf(slot);
        boolean queued = false;
        Ticket served;
        do {
          LeaseLine.Waiter w = line.join(deadline, slot, queued);
          if (!queued) {
            slots.noteWaiting(line.size());
          }
          served = line.await(w, deadline);
          queued = true;
        } while (stale(served));
        ticket = (SlotTicket) served;
      }
      slot.confirmOwned(); // a synchronous caller's slot: the line never hands it to anyone else
      return ticket;
    } catch (Refusal r) {
      unmet();
      throw refuse(slot, r);
    } catch (RuntimeException | Error e) {
      slot.close(); // counted cancelled by the gate: the call never ran
      throw e;
    }
  }

  /**
   * A call found no slot of the lease: demand for the next sync, which comes at once if Redis does
   * not know this process is short (LeaseSync.demandRose).
   */
  private void unmet() {
    slots.noteUnmet();
    if (sync.demandRose()) {
      fleet.requestSync(this);
    }
  }

  /**
   * Whether a ticket handed over by the line can no longer admit its call (R2): given back and
   * counted in leasesLost if so. A good one starts its call's clock.
   */
  private boolean stale(Ticket ticket) {
    if (ticket.usable()) {
      return false;
    }
    ticket.release();
    startsLost.increment();
    LOG.log(
        Level.WARNING,
        "compartment '"
            + name
            + "': a call was handed a slot of the lease after the lease stopped admitting (this"
            + " process paused?); the slot was given back, and the call waits for another within"
            + " what is left of its maxWait");
    return true;
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
   * One admission attempt, in memory: a slot of the lease, or in fallback a slot of the share; null
   * when the lease has none free; the fallback policy's refusal when the share has none.
   */
  private @Nullable SlotTicket attempt() {
    SlotTicket ticket = slots.tryTake(newTicket);
    if (ticket != null) {
      return ticket;
    }
    if (LeaseSlots.inFallback(slots.word())) {
      throw fallback.refusal();
    }
    return null;
  }

  // ------------------------------------------------------------------------------------------------
  // The lease, for RedisCompartments (sync thread, timer)

  boolean syncDue(long now) {
    return sync.due(now);
  }

  long sync() {
    return sync.sync();
  }

  boolean owesSlots() {
    return sync.owesSlots();
  }

  /** Sets the timer to the instant the lease stops admitting unless a sync extends it first. */
  void lapseAt(long until) {
    ScheduledFuture<?> previous = lapseTimer;
    lapseTimer = fleet.schedule(sync::lapse, until - System.nanoTime());
    if (previous != null) {
      previous.cancel(false);
    }
  }

  /** For tests: only the syncs that calls, announcements and give-backs ask for from now on. */
  void holdPeriodicSyncs() {
    sync.holdPeriodicSyncs();
  }

  /** For tests: how many syncs Redis answered. */
  long syncsAnswered() {
    return sync.syncsAnswered.sum();
  }

  void startedInFallback(String why) {
    if (LeaseSlots.inFallback(slots.word())) {
      sync.startedInFallback(why);
    }
  }

  void closeLease() {
    ScheduledFuture<?> timer = lapseTimer;
    if (timer != null) {
      timer.cancel(false);
    }
    sync.close();
  }

  /**
   * For tests: where a submit that waited for a slot starts, in place of this compartment's
   * threads, so a test can hold one between its grant and its start (R2). Call before the first
   * call.
   */
  void startWaitedCallsOn(Executor executor) {
    this.threads = executor;
  }

  // ------------------------------------------------------------------------------------------------
  // Compartment

  @Override
  public FleetStats fleetStats() {
    long w = slots.word();
    boolean inFallback = LeaseSlots.inFallback(w);
    int unleased = fallbackInFlight.get();
    return new FleetStats(
        inFallback,
        fallback.switches.sum(),
        inFallback ? 0 : LeaseSlots.cap(w),
        Math.max(0, LeaseSlots.inUse(w) - unleased),
        unleased,
        line.size(),
        fleetTimeouts.sum(),
        fallback.refused.sum(),
        sync.leasesLost.sum() + startsLost.sum(),
        callsOverran.sum(),
        sync.learning(),
        slots.fencingToken(),
        store.scriptReloads(),
        store.reconnects());
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
   * Changes this process's limit and the one it asks the fleet for, from the next sync (requested
   * now); see docs/fleet.md for disagreements.
   */
  @Override
  public void setLimit(int newLimit) {
    if (newLimit > LeaseSlots.MAX_SLOTS) {
      throw new IllegalArgumentException(
          "limit of fleet compartment '"
              + name
              + "' must be at most "
              + LeaseSlots.MAX_SLOTS
              + " but was "
              + newLimit);
    }
    gate.setLimit(newLimit);
    limit.set(newLimit);
    fleet.requestSync(this);
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
    long w = slots.word();
    return "FleetBulkhead{name="
        + name
        + ", limit="
        + limit.own()
        + ", leaseSlots="
        + LeaseSlots.cap(w)
        + ", inUse="
        + LeaseSlots.inUse(w)
        + (LeaseSlots.inFallback(w) ? ", fallback" : "")
        + "}";
  }

  // ------------------------------------------------------------------------------------------------

  /**
   * Gives a ticket back without its flag's CAS: for the gate slot's close, whose CAS runs it once.
   */
  private static final Consumer<Ticket> GIVE_BACK = Ticket::giveBack;

  /**
   * A slot of the lease, or of the fallback share; for acquire() and tryAcquire() also the permit,
   * with the gate's slot, given back before the gate's slot: one object per call.
   */
  private final class SlotTicket extends Ticket implements FleetPermit {
    private final boolean leased;
    final long token;
    // Written by the thread that takes the slot, or that the line hands it to (usable()), before
    // the call starts; read by its release, which the call's own hand-offs order after it.
    private long startedAt;
    private @Nullable ProvisionalSlot slot; // the gate's, when this ticket is a permit
    // A call admitted at once holds its gate slot as admitAtOnce's code instead (NOT_TAKEN else),
    // with the gate's reading at admission; written before the call starts or the permit returns.
    private int gateTaken;
    private long gateAdmittedAt;

    SlotTicket(boolean leased, long token, long startedAt) {
      this.leased = leased;
      this.token = token;
      this.startedAt = startedAt;
    }

    SlotTicket heldWith(ProvisionalSlot gateSlot) {
      this.slot = gateSlot;
      return this;
    }

    /** A ticket whose call the gate admitted at once, by admitAtOnce's code {@code admitted}. */
    SlotTicket heldAtOnce(int admitted, long admittedAt) {
      this.gateTaken = admitted;
      this.gateAdmittedAt = admittedAt;
      return this;
    }

    /**
     * A permit's release at once, by the thread that won its flag: the lease's slot first, so that
     * a local waiter handed the gate's finds it free.
     */
    void giveBackBoth() {
      try {
        giveBack();
      } finally {
        admission.releaseTaken(gateTaken, gateAdmittedAt);
      }
    }

    /** A slot of the lease no call used (the gate had none free at once): no overrun to check. */
    void giveBackUnused() {
      slots.giveBack();
      if (!leased) {
        fallbackInFlight.decrementAndGet();
      }
      line.serveIfWaiting(); // R4
    }

    @Override
    boolean usable() {
      if (leased && !slots.coversFromNow()) {
        return false;
      }
      startedAt = System.nanoTime(); // handed over by the line: its call starts now
      return true;
    }

    @Override
    void giveBack() {
      slots.giveBack();
      if (!leased) {
        fallbackInFlight.decrementAndGet();
      }
      if (System.nanoTime() - startedAt > maxCallNanos) {
        overran();
      }
      line.serveIfWaiting(); // R4
    }

    @Override
    public long fencingToken() {
      return token;
    }

    /**
     * Gives the ticket back before the gate's slot, so that a local waiter handed that slot finds
     * the lease's free; the gate slot's CAS, or for a permit admitted at once the ticket's own,
     * makes it happen once, however many threads close.
     */
    @Override
    public void close() {
      ProvisionalSlot gateSlot = slot;
      if (gateSlot != null) {
        gateSlot.close(GIVE_BACK, this);
      } else if (gateTaken != ProvisionalAdmission.NOT_TAKEN) {
        if (claim()) {
          giveBackBoth();
        }
      } else {
        release();
      }
    }

    @Override
    public boolean isClosed() {
      ProvisionalSlot gateSlot = slot;
      return gateSlot != null ? gateSlot.isClosed() : released();
    }
  }

  private SlotTicket newTicket(boolean leased, long at) {
    if (leased) {
      return new SlotTicket(true, slots.fencingToken(), at);
    }
    fallbackInFlight.incrementAndGet();
    return new SlotTicket(false, 0, at);
  }

  private void overran() {
    callsOverran.increment();
    if (overrunLogged.compareAndSet(false, true)) {
      LOG.log(
          Level.WARNING,
          "compartment '"
              + name
              + "': a call ran longer than its maxCallDuration ("
              + TimeUnit.NANOSECONDS.toMillis(maxCallNanos)
              + " ms); the fleet counts such a call only while this process reaches Redis, so it can"
              + " take the fleet past its limit: raise maxCallDuration or bound the call (counted in"
              + " fleetStats().callsOverran(); logged once)");
    }
  }
}
