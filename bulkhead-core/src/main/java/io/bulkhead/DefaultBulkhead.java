package io.bulkhead;

import io.bulkhead.internal.Durations;
import io.bulkhead.internal.PaddedState;
import io.bulkhead.spi.ProvisionalAdmission;
import io.bulkhead.spi.ProvisionalSlot;
import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/*
 * The compartment.
 *
 * Algorithm
 * ---------
 * One 64-bit state word holds three counts: the high 32 bits are `available`, the free slots (signed:
 * limit - inFlight, negative just after the limit was lowered); the next 24 bits are `waiting`, the
 * callers in the queue (at most MAX_WAITING); the low 8 bits are `fast`, the admissions by the fast
 * path modulo 256. Every change to the counts is one atomic operation on that word, so "take a slot
 * only if nobody waits" is a single CAS, not a check followed by an act, and the admission is counted
 * by the same CAS that takes the slot, at no extra cost.
 *
 * Fast paths, lock-free and allocation-free:
 *   acquire  CAS available-1, fast+1, allowed only when waiting == 0 && available > 0 && fast < 255.
 *            At fast == 255 the acquire takes the lock and carries: one CAS takes the slot and sets
 *            fast to 0, and `fastCarried` grows by 256, inside the `limitVersion` seqlock (C1).
 *   release  CAS available+1, allowed only when waiting == 0 || available < 0.
 * Slow paths take `lock`, which guards the waiter queue (an intrusive doubly linked FIFO of Waiter):
 *   acquire when full   re-check (take a slot that has just freed), reject if `waiting` reached
 *                       maxQueue, otherwise CAS waiting+1 and link a node at the tail; wait outside.
 *   release w/ waiters  (available == 0) unlink the head, waiting-1, CAS the node WAITING -> GRANTED.
 *                       The releaser's slot passes straight to that waiter and `available` never
 *                       rises, so no newcomer can slip in between. (A release() that decrements
 *                       first and lets the waiter increment opens exactly that gap.)
 *   setLimit            add the difference to `available`, then grant heads while available > 0.
 *
 * Invariants
 * ----------
 *   I1  waiting == number of linked nodes whenever `lock` is free: only lock holders link, unlink, or
 *       change `waiting`; the fast paths only read it.
 *   I2  waiting > 0 implies available <= 0. A node is linked only from a state with available <= 0;
 *       available then grows only by a release while available < 0 (to at most 0), or by setLimit,
 *       which grants under the same lock hold until available <= 0 or nobody waits.
 *   I3  inFlight (= limit - available) exceeds limit only after setLimit lowered it: no path takes a
 *       slot while available <= 0.
 *   I4  a node leaves WAITING exactly once, by one CAS: to GRANTED (it owns a slot) or to TIMED_OUT,
 *       INTERRUPTED or CANCELLED (it never will). Only a lock holder that has just unlinked a node
 *       grants it, so a granted node is never in the queue and a linked node is never granted.
 *   I5  a slot is freed exactly once: `call` frees it in a finally block; a Lease and an AsyncCall
 *       free it behind a CAS of their own.
 *   I6  admitted == slowAdmitted.sum() + fastCarried + fast at rest: every admission is counted once,
 *       by the fast CAS that took its slot, or by `slowAdmitted` for one taken under the lock or
 *       handed over. `fast` only grows outside the lock and is reset (with the carry) only under it.
 *   I7  No user code runs on a thread the library shares between compartments, and a granted call
 *       never starts on the thread that freed its slot. The timer (shared by every compartment) only
 *       takes the lock, flips states, unlinks, re-arms and hands the async waiters it expired to
 *       `executor`; the rejection, its onRejected listeners and the future's dependents run there. A
 *       granted async call starts (its supplier, its onAdmitted listeners) on `executor` too (R8).
 *       Parked threads are only unparked: they run their own rejection or admission.
 *
 * Races, as interleavings
 * -----------------------
 *   R1 timeout vs hand-off. T1 waits and its deadline passes as T2 releases. T2 unlinks T1's node and
 *      CASes WAITING -> GRANTED; T1 CASes WAITING -> TIMED_OUT. One CAS wins. If T2 wins, T1 proceeds
 *      with the slot (it was handed over before T1 gave up). If T1 wins, T2 moves on to the next node,
 *      or frees the slot if none is left: the slot is neither lost nor duplicated. T1 then takes the
 *      lock to unlink itself, finds `linked == false` (T2 did it and decremented `waiting`), and does
 *      not decrement again. Interrupt and cancel race with the hand-off the same way.
 *   R2 enqueue vs fast release. T1, holding the lock, reads available == 0, waiting == 0 and decides to
 *      queue; T2 fast-releases, available 0 -> 1. T1's CAS of waiting+1 fails because the word changed;
 *      T1 re-reads, sees the free slot and takes it. With two separate counters T1 would queue behind a
 *      free slot that nobody would ever hand it.
 *   R3 cancel vs grant, async. T1 cancels the future while T2 grants its node. If T1's CAS wins, as R1.
 *      If T2's wins, T1's withdraw fails (the node is GRANTED) and T2, after unlocking, hands the start
 *      to `executor`, whose thread T3 finds the future done in startAfterWait(): the call counts as
 *      withdrawn (not admitted) and T3 passes the slot to the next waiter or frees it, without calling
 *      the supplier. A cancel that lands after that check is R4.
 *   R4 cancel vs start, async. T2 runs the supplier, publishes the stage (volatile write), then checks
 *      isDone(); T1 completes the future (a CAS on its result), then reads the stage. Volatile accesses
 *      are sequentially consistent, so at least one of them sees the other and cancels the stage.
 *      Cancelling it twice is harmless.
 *   R5 timer vs new waiter. The sweep clears and re-arms `sweepScheduled` under the lock, and an async
 *      waiter checks it under the same lock when it queues, so a waiter linked after a sweep's scan
 *      either finds a timer armed for a deadline no later than its own, or arms one.
 *   R6 lowering vs fast acquire. T1 reads available == 1 and CASes it to 0; T2's setLimit adds -5 to the
 *      same word. Two atomic operations on one word: in either order available ends at -5, and no
 *      acquire after setLimit succeeds until five calls have finished.
 *   C1 carry vs readers. T1 holds the lock, finds fast == 255 and carries: limitVersion odd, CAS the
 *      word (slot taken, fast 255 -> 0), fastCarried += 256, limitVersion even. T2 in stats() reads
 *      limitVersion, the word and fastCarried, then limitVersion again, and retries if it was odd or
 *      changed, so it never adds a fast of 0 to a fastCarried without the 256 (or the reverse). No other
 *      thread can carry meanwhile: every acquire that sees fast == 255 queues for the lock, and the
 *      releases that race with T1's CAS change only `available`, so T1 re-reads and retries.
 *   R7 full-queue rejection without the lock. When every slot is taken and the queue is at maxQueue,
 *      call, acquire and submit reject after one read of the state word, before allocating a node,
 *      reading the ticker or taking the lock. Both counts come from that one read, so at that instant
 *      the compartment was full and so was its queue: the rejection linearizes there. If T2 frees a
 *      slot just after T1's read, T1's rejection still precedes T2's release, as if T1 had come first.
 *   R8 release inside user code vs the call it grants. T1 completes the stage of call X; X's release
 *      grants waiter W and then runs X's onReleased listeners and the dependents of X's future, all on
 *      T1. If W started on T1 after them (a run queue on T1), a dependent of X that joins W's future, or
 *      an onReleased listener that calls call() on this compartment (which queues behind W's granted
 *      slot), would wait for W while W waits for them: a deadlock, or a WAIT_TIMEOUT although W had the
 *      slot. If W started on T1 before them, W's supplier joining X's future would deadlock instead.
 *      So T1 only hands W to `executor` and goes on; thread T2 starts W whatever T1's user code does,
 *      and T1 no longer runs one call's supplier after another, so there is no recursion to bound
 *      either. A hand-off after a synchronous call() or a Permit's close goes the same way.
 *   R9 timeout vs another compartment's callbacks. The timer T0 serves every compartment. T0 expires
 *      A's async waiter; A's onRejected (or a dependent of its future) blocks for seconds. Were it run
 *      on T0, B's sweep would wait behind it and B's 100 ms maxWait would fire seconds late. T0 hands it
 *      to A's `executor` (thread T1) and runs B's sweep on time; only A's own thread is held. The
 *      waiters one sweep expires go to T1 as one batch, failed oldest first: a callback that blocks
 *      there delays the futures of its batch-mates (their slots and counts are settled already, by
 *      T0), never a later sweep's, which goes to another thread.
 *
 * Time: deadlines are enqueuedAt + maxWait on the injected Ticker. A parked thread expires itself
 * (parkNanos until its deadline). A waiter without a thread is expired by the sweep, one timer per
 * compartment armed for the head's deadline: FIFO order is deadline order, so a sweep stops at the first
 * waiter not yet due and the timer queue holds one entry per compartment, not one per waiter. The
 * ticker is read before the lock, so two waiters that race to the queue can be out of deadline order by
 * the time one of them waited for the lock; the later one is then expired that much late.
 * An unbounded wait arms no timer at all.
 *
 * Threads (I7): a synchronous caller runs its task, its own admission, rejection and release, and the
 * listeners of those, on its own thread. An async call admitted at once starts on the caller's thread;
 * one that waited starts on `executor`, as does the rejection of one whose maxWait passed. A call's
 * release, its onReleased listeners and its future's dependents run on the thread that completes its
 * stage. `executor` is the compartment's own (CompartmentThreads: its choice is argued there), so a
 * callback that blocks holds one thread of its own compartment and nothing anyone else waits for.
 *
 * What the hot path pays for: two CASes on the state word (one of which also counts the admission), and
 * two reads of the ticker for the admitted latency, which cost more than everything else together
 * (the figures are in DESIGN.md, "Where the admitted path's time went"). So the latency of a call is
 * measured whenever it can matter — a compartment more than half full, a call admitted after waiting,
 * every call while recent measured calls took FAST_CALL_NANOS or more, and every call while a
 * listener is attached (listeners get every call's duration) — and for one call in SPARSE_SAMPLE
 * otherwise: fast calls in a compartment with room to spare, where reading the clock would cost more
 * than the call. What can matter is never sparse: a slow call, a wait or a fuller compartment times
 * every call again. The counters stay exact; only the latency histogram and the retry-after estimate
 * are sampled. The sampled call is the one whose admitting CAS found the word's `fast` count at 0,
 * once per lap of the count (the carry's own CAS sees 255): the CAS that takes the slot also picks
 * the sample, so choosing writes nothing to shared memory. The sampling mode is one racy int, written
 * only when it changes: a lost update only changes which call gets timed.
 *
 * Memory layout: `state` sits alone on its cache line (io.bulkhead.internal.PaddedState), so that
 * the CASes on it do not evict the read-mostly fields every admission reads (limit, sampling mode,
 * listeners, ticker) from the other cores' caches. A Permit is a Lease whose close() CASes a flag of its own (see Lease for
 * what that costs and why it is not a monitor).
 *
 * `completed` is not counted on release: it is admitted - inFlight, derived in stats(). The derivation
 * never over-counts, so clamping it to the last value reported keeps it monotonic and exact at rest:
 * fast admissions are read from the same word as inFlight; `slowAdmitted` is read before the state
 * word, so a slow admission between the two reads raises inFlight but not admitted (an under-count);
 * `slowAdmitted` is incremented just after the CAS that admits, and a hand-off keeps inFlight while the
 * waiter's admission is not counted yet (under-counts again); and
 * (limit, state) are read as a pair behind `limitVersion`, a seqlock that setLimit holds odd while it
 * changes the two, so inFlight = limit - available is never computed from a torn pair.
 *
 * User code (tasks, suppliers, listeners, future callbacks) never runs while the lock is held.
 *
 * Provisional admission (io.bulkhead.spi, for integrations such as a fleet compartment whose calls
 * also need a lease): acquireProvisionally, tryAcquireProvisionally and submitProvisionally take a
 * slot by the same paths as acquire, tryAcquire and submit's slow path, but without counting the
 * admission (no `fast` +1, no slowAdmitted, no onAdmitted). acquireProvisionally and
 * tryAcquireProvisionally first try the fast path's lock-free CAS (without the `fast` +1), so a fleet
 * compartment's admission costs about what a local one does: no lock, no node, no ticker read unless
 * the call is sampled (shouldTime's rules, the one in 256 drawn at random) or waits; a free slot is
 * never taken while someone waits, as on the fast path. submitProvisionally does the same before it
 * queues, as submit does. The slot is then one of the state word's taken slots, in flight
 * for every invariant above, until the integration confirms it (counted then as an admission, after
 * waiting if it waited), abandons it (passed on like a release, counted as a rejection), or closes it
 * unconfirmed (passed on, counted as cancelled). Provisional has the states and races. While a
 * provisional call waits for the integration (queued()), stats() moves it from inFlight to waiting
 * (provisionalWaiting), retryAfter counts it ahead of a newcomer, and it takes a place of maxQueue.
 * `completed` stays admitted - inFlight of the word, which a provisional slot makes lag by one until
 * it is confirmed and released or passed on: an under-count, never an over-count, exact at rest.
 * admitAtOnce and releaseTaken are tryAcquire's admission and a Lease's release without the Lease, for
 * an integration that has what else its call needs before it asks and whose own permit frees the slot
 * once (its own CAS): the same CAS, the same count in the `fast` field, the same sample.
 */
final class DefaultBulkhead extends PaddedState implements Bulkhead, ProvisionalAdmission {

  private static final System.Logger LOG = System.getLogger("io.bulkhead");

  private static final long ONE_PERMIT = 1L << 32;
  // admitAtOnce's codes for a call admitted without an object, and takeAtOnce's for a slot taken
  // provisionally (ProvisionalAdmission.NOT_TAKEN is 0).
  private static final int TAKEN = 1;
  private static final int TAKEN_TIMED = 2;
  private static final int FAST_BITS = 8;
  private static final long ONE_WAITER = 1L << FAST_BITS;
  private static final long FAST_MASK = ONE_WAITER - 1;

  /**
   * What one carry moves out of the word: the 255 counted there plus the admission that carries.
   */
  private static final long FAST_CARRY = FAST_MASK + 1;

  /** The most callers one compartment can count as waiting: the width of `waiting` in the word. */
  static final int MAX_WAITING = (1 << (32 - FAST_BITS)) - 1;

  private static final int ADMITTED = 0;
  private static final int QUEUED = 1;
  private static final int QUEUE_FULL = 2;
  private static final int WOULD_WAIT = 3;

  /** Calls faster than this may be timed one in {@link #SPARSE_SAMPLE} (see the design comment). */
  static final long FAST_CALL_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

  /**
   * Fast calls of a compartment with room to spare are timed one in this many: one lap of the
   * word's `fast` count, whose 0 picks the sample.
   */
  static final int SPARSE_SAMPLE = 1 << FAST_BITS;

  private static final int SPARSE_MASK = SPARSE_SAMPLE - 1;

  /**
   * What takeFree returns when it took no slot: a word no successful take starts from (available
   * -1).
   */
  private static final long NO_FREE_SLOT = -1L;

  /**
   * Service-time estimate for {@code retryAfter} before any call has finished and without maxWait.
   */
  static final long DEFAULT_SERVICE_ESTIMATE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private static final long NO_SAMPLE = -1;

  /** How long to wait before handing a callback to an executor that refused it once. */
  static final long EXECUTOR_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  private static final BulkheadFullException.Reason[] REASONS =
      BulkheadFullException.Reason.values();

  private static final VarHandle STATE;
  private static final VarHandle SERVICE_ESTIMATE;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      STATE = lookup.findVarHandle(DefaultBulkhead.class, "state", long.class);
      SERVICE_ESTIMATE = lookup.findVarHandle(DefaultBulkhead.class, "serviceEstimate", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  // The admission state word (available, waiting, fast) is `state`, inherited from PaddedState so
  // that it has a cache line of its own: see there.
  // Mirrors config.limit(), for the hot path's "more than half full" test.
  private volatile int limit;
  // Seqlock around setLimit's two writes (config, state) and a carry's (state, fastCarried); odd
  // while
  // they are in progress. Written only under the lock.
  private volatile int limitVersion;
  // Fast admissions carried out of the state word's `fast` bits, 256 at a time (C1); under the
  // lock.
  private volatile long fastCarried;
  // The last `completed` reported by stats(), so the derived count never goes down.
  private final java.util.concurrent.atomic.AtomicLong completedReported =
      new java.util.concurrent.atomic.AtomicLong();
  // Latency sampling (see the design comment): 0 times every call, SPARSE_MASK one in 256. Racy: a
  // lost update only changes which call gets timed.
  private int sampleMask;

  private final String name;
  private volatile BulkheadConfig config;
  private final boolean queueBounded;
  private final int maxQueue;
  private final boolean waitBounded;
  private final long maxWaitNanos;
  private final Ticker ticker;
  private final Scheduler scheduler;
  private final Executor executor;
  private final Budget budget;
  private final Listeners listeners;
  // Null for a static limit; see Adaptation and "Adaptive limit" in the design comment.
  private final @Nullable Adaptation adaptation;

  private final ReentrantLock lock = new ReentrantLock();
  private Waiter head; // guarded by lock
  private Waiter tail; // guarded by lock
  private boolean sweepScheduled; // guarded by lock
  private boolean leftBudget; // guarded by lock
  private final Runnable sweep = this::sweep;

  // Admissions not counted by the fast CAS: under the lock, or after waiting (I6).
  private final LongAdder slowAdmitted = new LongAdder();
  private final LongAdder cancelled = new LongAdder();
  // Provisional slots an integration made wait for something else (Provisional P3): reported as
  // waiting, not in flight, and counted against maxQueue when one more wants to wait.
  private final java.util.concurrent.atomic.AtomicInteger provisionalWaiting =
      new java.util.concurrent.atomic.AtomicInteger();
  private final LongAdder[] rejected = new LongAdder[REASONS.length];
  private final SlidingWindow window = new SlidingWindow();

  // Exponentially weighted mean of admitted latency, for retryAfter. Written with plain opaque
  // stores: a lost update under contention only makes a hint slightly staler.
  @SuppressWarnings("unused") // accessed through SERVICE_ESTIMATE
  private long serviceEstimate = NO_SAMPLE;

  DefaultBulkhead(
      BulkheadConfig config,
      BulkheadListener[] listeners,
      Ticker ticker,
      Scheduler scheduler,
      Executor executor,
      Budget budget,
      @Nullable AdaptiveLimit adaptive) {
    this.name = config.name();
    this.config = config;
    this.queueBounded = config.queueBounded();
    this.maxQueue = config.maxQueueValue();
    this.waitBounded = config.maxWaitOrNull() != null;
    this.maxWaitNanos = waitBounded ? Durations.toNanosSaturated(config.maxWaitOrNull()) : 0;
    this.ticker = ticker;
    this.scheduler = scheduler;
    this.executor = executor;
    this.budget = budget;
    this.listeners = new Listeners(this, listeners);
    for (int i = 0; i < rejected.length; i++) {
      rejected[i] = new LongAdder();
    }
    this.adaptation =
        adaptive == null ? null : new Adaptation(adaptive, config.limit(), ticker.read());
    if (budget != null) {
      // fails before the compartment exists
      budget.join(name, config.limit(), adaptive == null ? null : new BudgetMember());
    }
    this.limit = config.limit();
    this.state = (long) config.limit() << 32;
  }

  static int available(long s) {
    return (int) (s >> 32);
  }

  static int waiting(long s) {
    return (int) (s >>> FAST_BITS) & MAX_WAITING;
  }

  static int fastAdmissions(long s) {
    return (int) (s & FAST_MASK);
  }

  // ------------------------------------------------------------------------------------------------
  // Public API

  @Override
  public String name() {
    return name;
  }

  @Override
  public BulkheadConfig config() {
    return config;
  }

  @Override
  public <T extends @Nullable Object> T call(Callable<T> task) throws Exception {
    Objects.requireNonNull(task, "task");
    boolean timed;
    long admittedAt;
    long before = takeFree();
    if (before != NO_FREE_SLOT) {
      timed = shouldTime(before);
      admittedAt = admittedFast(timed);
    } else {
      timed = true;
      admittedAt = acquireSlow();
    }
    try {
      return task.call();
    } finally {
      release(timed, admittedAt);
    }
  }

  @Override
  public Permit acquire() {
    long before = takeFree();
    if (before != NO_FREE_SLOT) {
      boolean timed = shouldTime(before);
      return new Lease(this, timed, admittedFast(timed));
    }
    return new Lease(this, true, acquireSlow());
  }

  @Override
  public Optional<Permit> tryAcquire() {
    long before = takeFree();
    if (before != NO_FREE_SLOT) {
      boolean timed = shouldTime(before);
      return Optional.of(new Lease(this, timed, admittedFast(timed)));
    }
    countRejection(BulkheadFullException.Reason.QUEUE_FULL);
    return Optional.empty();
  }

  @Override
  public <T extends @Nullable Object> CompletableFuture<T> submit(
      Supplier<? extends CompletionStage<T>> task) {
    Objects.requireNonNull(task, "task");
    AsyncCall<T> call = new AsyncCall<>(this, task);
    long before = takeFree();
    if (before != NO_FREE_SLOT) {
      boolean timed = shouldTime(before);
      call.start(timed, admittedFast(timed));
      return call;
    }
    return enqueueAsync(call);
  }

  /**
   * submit's slow path, and submitProvisionally's only one: take a slot under the lock, or queue.
   */
  private <T extends @Nullable Object> CompletableFuture<T> enqueueAsync(AsyncCall<T> call) {
    if (fullWithQueueFull()) {
      call.reject(reject(BulkheadFullException.Reason.QUEUE_FULL)); // R7
      return call;
    }
    AsyncWaiter node = new AsyncWaiter(call);
    call.waiter = node;
    long now = ticker.read();
    int outcome;
    lock.lock();
    try {
      outcome = admitOrEnqueue(node, true, now);
      if (outcome == QUEUED && waitBounded && !sweepScheduled) {
        sweepScheduled = true;
        scheduler.schedule(sweep, maxWaitNanos);
      }
    } finally {
      lock.unlock();
    }
    if (outcome == QUEUED) {
      listeners.queued();
    } else {
      call.waiter = null; // never queued: nothing to withdraw
      if (outcome == ADMITTED) {
        call.start(true, call.provisional == null ? admittedNow() : 0L);
      } else {
        call.reject(reject(BulkheadFullException.Reason.QUEUE_FULL));
      }
    }
    return call;
  }

  @Override
  public void setLimit(int newLimit) {
    if (newLimit < 1) {
      throw new IllegalArgumentException(
          "limit of bulkhead '" + name + "' must be at least 1 but was " + newLimit);
    }
    int before = limit;
    if (changeLimit(newLimit) && adaptation != null) {
      adaptation.moved(before, newLimit, "set by setLimit");
    }
  }

  /**
   * Moves the limit; returns whether it changed. A static compartment reserves the new limit in its
   * budget; an adaptive one reserves max(limit, inFlight) (see "Adaptive limit" in the design
   * comment), checked before a raise and recorded after a drop.
   */
  private boolean changeLimit(int newLimit) {
    List<Waiter> granted = null;
    lock.lock();
    try {
      BulkheadConfig current = config;
      int delta = newLimit - current.limit();
      if (delta == 0) {
        return false;
      }
      boolean inBudget = budget != null && !leftBudget;
      if (inBudget) {
        // throws, and nothing has changed; a drop of an adaptive limit is recorded below instead
        if (adaptation == null) {
          budget.reserve(name, newLimit);
        } else if (delta > 0) {
          budget.reserve(name, Math.max(newLimit, current.limit() - available(state)));
        }
      }
      limitVersion++; // odd: (config, state) are changing
      config = current.withLimit(newLimit);
      limit = newLimit;
      STATE.getAndAdd(this, (long) delta << 32);
      limitVersion++;
      if (inBudget && adaptation != null && delta < 0) {
        // In flight now is the most this compartment will have in flight until it rises again.
        budget.reserve(name, Math.max(newLimit, newLimit - available(state)));
      }
      for (; ; ) {
        long s = state;
        if (waiting(s) == 0 || available(s) <= 0) {
          break;
        }
        Waiter w = head;
        unlink(w);
        if (w.grant()) {
          STATE.getAndAdd(this, -ONE_WAITER - ONE_PERMIT);
          if (granted == null) {
            granted = new ArrayList<>();
          }
          granted.add(w);
        } else {
          STATE.getAndAdd(this, -ONE_WAITER);
        }
      }
    } finally {
      lock.unlock();
    }
    if (granted != null) {
      for (Waiter w : granted) {
        w.granted(this);
      }
    }
    return true;
  }

  @Override
  public BulkheadStats stats() {
    Counts counts = counts();
    int aside = provisionalWaiting.get(); // holding slots, but waiting (Provisional P3)
    long[] rejectedByReason = new long[REASONS.length];
    for (int i = 0; i < REASONS.length; i++) {
      rejectedByReason[i] = rejected[i].sum();
    }
    LatencySummary[] recent = window.snapshot(ticker.read());
    return new BulkheadStats(
        name,
        counts.config().limit(),
        counts.config().maxQueue(),
        Math.max(0, counts.inFlight() - aside),
        counts.waiting() + aside,
        counts.admitted(),
        counts.completed(),
        cancelled.sum(),
        rejectedByReason,
        listeners.failures(),
        recent[0],
        recent[1]);
  }

  /**
   * The counts of stats(), read consistently (see the design comment); also for the model checker.
   */
  Counts counts() {
    long slowSoFar = slowAdmitted.sum(); // before the state word: see the design comment
    long s;
    long carried;
    BulkheadConfig c;
    for (; ; ) {
      int version = limitVersion;
      c = config;
      s = state;
      carried = fastCarried;
      if ((version & 1) == 0 && version == limitVersion) {
        break;
      }
      Thread.onSpinWait(); // a setLimit or a carry is between its two writes (C1)
    }
    long admittedSoFar = slowSoFar + carried + fastAdmissions(s);
    int inFlight = Math.max(0, c.limit() - available(s));
    long completedNow = completedReported.accumulateAndGet(admittedSoFar - inFlight, Math::max);
    return new Counts(c, inFlight, waiting(s), admittedSoFar, completedNow);
  }

  record Counts(BulkheadConfig config, int inFlight, int waiting, long admitted, long completed) {
    @Override
    public String toString() {
      return "limit="
          + config.limit()
          + " inFlight="
          + inFlight
          + " waiting="
          + waiting
          + " admitted="
          + admitted
          + " completed="
          + completed;
    }
  }

  @Override
  public void addListener(BulkheadListener listener) {
    listeners.add(listener);
  }

  @Override
  public boolean removeListener(BulkheadListener listener) {
    return listeners.remove(listener);
  }

  @Override
  public String toString() {
    long s = state;
    BulkheadConfig c = config;
    return "Bulkhead{name="
        + name
        + ", inFlight="
        + Math.max(0, c.limit() - available(s))
        + "/"
        + c.limit()
        + ", waiting="
        + waiting(s)
        + "/"
        + (queueBounded ? Integer.toString(maxQueue) : "unbounded")
        + "}";
  }

  // ------------------------------------------------------------------------------------------------
  // Admission

  /**
   * Takes a free slot if nobody waits. Returns the state word just before the CAS that took it (its
   * `available` and `fast` decide whether to time the call), or NO_FREE_SLOT if none was free.
   */
  private long takeFree() {
    long s = state;
    while (waiting(s) == 0 && available(s) > 0) {
      if (fastAdmissions(s) == FAST_MASK) {
        return takeFreeAndCarry();
      }
      long witness = (long) STATE.compareAndExchange(this, s, s - ONE_PERMIT + 1);
      if (witness == s) {
        return s;
      }
      s = witness;
    }
    return NO_FREE_SLOT;
  }

  /**
   * takeFree when the word's `fast` count is full: takes the slot and carries, under the lock (C1).
   */
  private long takeFreeAndCarry() {
    lock.lock();
    try {
      long s = state;
      while (waiting(s) == 0 && available(s) > 0) {
        boolean carry = fastAdmissions(s) == FAST_MASK;
        if (carry) {
          limitVersion++; // odd: (state, fastCarried) are changing
        }
        long witness =
            (long)
                STATE.compareAndExchange(
                    this, s, carry ? s - ONE_PERMIT - FAST_MASK : s - ONE_PERMIT + 1);
        if (carry) {
          if (witness == s) {
            fastCarried += FAST_CARRY;
          }
          limitVersion++;
        }
        if (witness == s) {
          return s;
        }
        s = witness;
      }
      return NO_FREE_SLOT;
    } finally {
      lock.unlock();
    }
  }

  /** Whether one read of the state word finds every slot taken and the queue at maxQueue (R7). */
  private boolean fullWithQueueFull() {
    long s = state;
    return queueBounded && available(s) <= 0 && waiting(s) >= maxQueue;
  }

  /**
   * Whether to time a call admitted from state word {@code before}; see the design comment. The one
   * in 256 is counted by the word's own `fast` bits, which the admitting CAS has just advanced, so
   * choosing costs no write.
   */
  private boolean shouldTime(long before) {
    int mask = sampleMask;
    return mask == 0
        || (available(before) - 1) * 2 < limit
        || listeners.any()
        || (fastAdmissions(before) & mask) == 0;
  }

  /**
   * The slow path of call and acquire: takes a slot that has just freed, or queues and parks.
   * Returns the ticker reading at admission (always timed); throws BulkheadFullException when not
   * admitted.
   */
  private long acquireSlow() {
    ThreadWaiter waited = awaitSlot();
    return waited == null ? admittedNow() : admittedAfterWait(waited);
  }

  /**
   * Takes a slot that has just freed, or queues and parks until one is handed over, without
   * counting the admission: returns null when a slot was free, the node when it waited. Throws
   * BulkheadFullException, counted, when no slot came.
   */
  private @Nullable ThreadWaiter awaitSlot() {
    if (fullWithQueueFull()) {
      throw reject(BulkheadFullException.Reason.QUEUE_FULL); // R7
    }
    boolean mayWait = !Thread.currentThread().isInterrupted();
    ThreadWaiter node = new ThreadWaiter(Thread.currentThread());
    long now = ticker.read();
    int outcome;
    lock.lock();
    try {
      outcome = admitOrEnqueue(node, mayWait, now);
    } finally {
      lock.unlock();
    }
    switch (outcome) {
      case ADMITTED:
        return null;
      case QUEUE_FULL:
        throw reject(BulkheadFullException.Reason.QUEUE_FULL);
      case WOULD_WAIT:
        throw reject(BulkheadFullException.Reason.INTERRUPTED); // interrupt status left set
      default:
        listeners.queued();
        awaitGrant(node);
        return node;
    }
  }

  /** Caller holds the lock. Takes a free slot, or links {@code node}, or says why it cannot. */
  private int admitOrEnqueue(Waiter node, boolean mayWait, long now) {
    long s = state;
    for (; ; ) {
      int waiting = waiting(s);
      if (waiting == 0 && available(s) > 0) {
        long witness = (long) STATE.compareAndExchange(this, s, s - ONE_PERMIT);
        if (witness == s) {
          return ADMITTED;
        }
        s = witness;
        continue;
      }
      if (queueBounded ? waiting >= maxQueue : waiting >= MAX_WAITING) {
        return QUEUE_FULL;
      }
      if (!mayWait) {
        return WOULD_WAIT;
      }
      long witness = (long) STATE.compareAndExchange(this, s, s + ONE_WAITER);
      if (witness != s) {
        s = witness; // R2: the word changed, perhaps a slot freed; decide again
        continue;
      }
      node.enqueuedAt = now;
      link(node);
      return QUEUED;
    }
  }

  private void awaitGrant(ThreadWaiter node) {
    boolean interrupted = false;
    try {
      for (; ; ) {
        int st = node.state;
        if (st == Waiter.GRANTED) {
          return;
        }
        if (st == Waiter.TIMED_OUT) {
          throw reject(BulkheadFullException.Reason.WAIT_TIMEOUT); // expired by the sweep
        }
        if (Thread.interrupted()) {
          interrupted = true;
          if (node.abandon(Waiter.INTERRUPTED)) {
            unlinkAbandoned(node);
            throw reject(BulkheadFullException.Reason.INTERRUPTED);
          }
          continue; // R1: granted or expired at the same moment; the loop reads which
        }
        if (waitBounded) {
          long remaining = maxWaitNanos - (ticker.read() - node.enqueuedAt);
          if (remaining <= 0) {
            if (node.abandon(Waiter.TIMED_OUT)) {
              unlinkAbandoned(node);
              throw reject(BulkheadFullException.Reason.WAIT_TIMEOUT);
            }
            continue;
          }
          LockSupport.parkNanos(this, remaining);
        } else {
          LockSupport.park(this);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * After takeFree, whose CAS counted the admission: returns the ticker reading when timed, else 0.
   */
  private long admittedFast(boolean timed) {
    long now = timed ? ticker.read() : 0L;
    listeners.admitted(0L);
    return now;
  }

  /** Counts an admission made under the lock without waiting; returns the ticker reading. */
  private long admittedNow() {
    slowAdmitted.increment();
    return admittedFast(true);
  }

  private long admittedAfterWait(Waiter node) {
    slowAdmitted.increment();
    long now = ticker.read();
    long waited = now - node.enqueuedAt;
    window.recordWait(now, waited);
    listeners.admitted(waited);
    return now;
  }

  /** Counts a rejection and returns the exception to throw or complete with. */
  BulkheadFullException reject(BulkheadFullException.Reason reason) {
    countRejection(reason);
    return new BulkheadFullException(name, reason, retryAfterNanos());
  }

  private void countRejection(BulkheadFullException.Reason reason) {
    rejected[reason.ordinal()].increment();
    listeners.rejected(reason);
  }

  /**
   * When a newcomer can expect a slot: the queue ahead of it plus itself, each taking one service
   * time on one of {@code limit} slots. The service time is the weighted mean of recent admitted
   * latency; before any call has finished it is maxWait, or a second when waiting is unbounded or
   * zero.
   */
  private long retryAfterNanos() {
    long service = (long) SERVICE_ESTIMATE.getOpaque(this);
    if (service == NO_SAMPLE) {
      service = waitBounded && maxWaitNanos > 0 ? maxWaitNanos : DEFAULT_SERVICE_ESTIMATE_NANOS;
    }
    int ahead = waiting(state) + provisionalWaiting.get();
    double estimate = (double) service * (ahead + 1.0) / config.limit();
    return estimate >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) estimate;
  }

  // ------------------------------------------------------------------------------------------------
  // Release and hand-off

  /**
   * Frees the slot of a call admitted at {@code admittedAt} (a ticker reading, meaningful only when
   * {@code timed}). Never throws.
   */
  void release(boolean timed, long admittedAt) {
    long held = 0;
    long now = 0;
    if (timed) {
      now = ticker.read();
      held = Math.max(0, now - admittedAt);
      window.recordLatency(now, held);
      long previous = (long) SERVICE_ESTIMATE.getOpaque(this);
      SERVICE_ESTIMATE.setOpaque(
          this, previous == NO_SAMPLE ? held : previous + (held - previous) / 8);
      int mask = held < FAST_CALL_NANOS && adaptation == null ? SPARSE_MASK : 0;
      if (sampleMask != mask) {
        sampleMask = mask;
      }
    }
    boolean decide =
        timed && adaptation != null && adaptation.record(now, held, limit - available(state));
    Waiter granted = freeSlot();
    if (granted != null) {
      granted.granted(this);
    }
    if (timed) {
      listeners.released(held);
    } else {
      listeners.releasedUntimed(); // only reached with no listener attached: a no-op
    }
    if (decide) {
      adapt();
    }
  }

  /**
   * Asks the controller for the next limit and applies it, clamped to the range and to what the
   * budget grants; on the thread of the release that found the interval over, holding no lock.
   */
  private void adapt() {
    Adaptation a = adaptation;
    if (!a.startDeciding()) {
      return; // the previous interval's decision is still running (A1)
    }
    try {
      long s = state;
      int current = limit;
      long rejectedNow = 0;
      for (LongAdder r : rejected) {
        rejectedNow += r.sum();
      }
      LimitController.Sample sample =
          new LimitController.Sample(
              current,
              a.drainMaxInFlight(Math.max(0, current - available(s))),
              a.drainLatency(),
              rejectedNow - a.lastRejected,
              waiting(s));
      a.lastRejected = rejectedNow;
      LimitController.Decision d;
      try {
        d = a.settings.controller().next(sample);
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "limit controller of bulkhead '" + name + "' failed; limit kept", e);
        return;
      }
      int target = a.clamp(d.limit());
      String reason = d.reason();
      if (budget != null && !leftBudget) {
        if (target <= current && !sample.saturated() && sample.inFlight() + 1 < target) {
          // In a budget, an idle share is lent: shrink to what is used so others may borrow.
          target = a.clamp(sample.inFlight() + 1);
          reason = "in budget '" + budget.name() + "', demand below the limit: lending the rest";
        }
        settleShare();
        int granted = budget.grant(name, current, target);
        if (granted < target) {
          reason = reason + " (budget '" + budget.name() + "' grants " + granted + ")";
        }
        target = Math.max(a.settings.min(), granted);
      }
      int before = limit; // the controller ran without a lock: someone may have moved it meanwhile
      if (target != before) {
        try {
          if (changeLimit(target)) {
            a.moved(before, target, reason);
          }
        } catch (IllegalArgumentException raced) {
          // the budget's room went to another compartment between grant and change: keep the limit
        }
      }
    } finally {
      a.doneDeciding();
    }
  }

  /**
   * Records in the budget the share this adaptive compartment still needs: max(limit, inFlight).
   */
  private void settleShare() {
    lock.lock();
    try {
      if (budget != null && !leftBudget) {
        int l = config.limit();
        budget.reserve(name, Math.max(l, l - available(state)));
      }
    } finally {
      lock.unlock();
    }
  }

  /** Where the limit stands, for an adaptive compartment. */
  @Override
  public Optional<AdaptiveLimit.Status> adaptive() {
    return adaptation == null ? Optional.empty() : Optional.of(adaptation.status.get());
  }

  /** This compartment as a member of its budget that may lend and give back. */
  private final class BudgetMember implements Budget.Member {
    @Override
    public int min() {
      return adaptation.settings.min();
    }

    @Override
    public int limit() {
      return limit;
    }

    @Override
    public void settle() {
      settleShare();
    }

    @Override
    public void giveBack(int newLimit, String reason) {
      int before = limit;
      int target = Math.max(min(), newLimit);
      if (target < before && changeLimit(target)) {
        adaptation.moved(before, target, reason);
      }
    }
  }

  private Waiter freeSlot() {
    long s = state;
    for (; ; ) {
      if (waiting(s) == 0 || available(s) < 0) {
        long witness = (long) STATE.compareAndExchange(this, s, s + ONE_PERMIT);
        if (witness == s) {
          return null;
        }
        s = witness;
      } else {
        return handOff();
      }
    }
  }

  /** Passes the caller's slot to the oldest waiter still waiting, or frees it if there is none. */
  private Waiter handOff() {
    lock.lock();
    try {
      for (; ; ) {
        long s = state;
        if (waiting(s) == 0 || available(s) < 0) {
          if (STATE.compareAndSet(this, s, s + ONE_PERMIT)) {
            return null;
          }
          continue;
        }
        Waiter w = head; // non-null by I1, since waiting > 0 and we hold the lock
        unlink(w);
        STATE.getAndAdd(this, -ONE_WAITER);
        if (w.grant()) {
          return w; // the slot is now w's: available unchanged
        }
        // w gave up a moment ago (R1); its owner will find it unlinked. Try the next one.
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Starts a granted async call on the compartment's executor, never on this thread: the thread
   * that freed the slot may be inside user code that waits for this very call (R8).
   */
  void dispatch(AsyncCall<?> call) {
    runElsewhere(() -> startAfterWait(call));
  }

  /**
   * Hands {@code task} (user code: a granted call's start, a timed-out call's rejection) to the
   * compartment's executor, so that neither the shared timer nor a releasing caller runs it. If the
   * executor refuses (no thread could be started), the timer retries a moment later: the task is
   * late, but it is neither lost nor run on a shared thread.
   */
  void runElsewhere(Runnable task) {
    try {
      executor.execute(task);
    } catch (RejectedExecutionException | OutOfMemoryError refused) {
      LOG.log(
          Level.ERROR,
          () ->
              "bulkhead '"
                  + name
                  + "' could not start a thread for a callback;"
                  + " retrying in "
                  + Durations.format(EXECUTOR_RETRY_NANOS),
          refused);
      scheduler.schedule(() -> runElsewhere(task), EXECUTOR_RETRY_NANOS);
    }
  }

  void startAfterWait(AsyncCall<?> call) {
    AsyncWaiter node = call.waiter;
    call.waiter = null;
    if (call.isDone()) {
      // R3: withdrawn between the grant and now. It never reaches the dependency: count it as
      // withdrawn, not admitted, and pass the slot on without a latency sample.
      cancelled.increment();
      listeners.cancelled(ticker.read() - node.enqueuedAt);
      Waiter next = freeSlot();
      if (next != null) {
        next.granted(this);
      }
      return;
    }
    Provisional slot = call.provisional;
    if (slot != null) {
      slot.waitedForSlot = true; // counted when the integration confirms or abandons it
      call.start(true, 0L);
      return;
    }
    call.start(true, admittedAfterWait(node));
  }

  // ------------------------------------------------------------------------------------------------
  // Provisional admission (io.bulkhead.spi), for integrations; off the hot path. See Provisional.

  @Override
  public ProvisionalSlot acquireProvisionally() {
    Provisional taken = takeFreeProvisionally();
    if (taken != null) {
      return taken;
    }
    long since = ticker.read();
    ThreadWaiter waited = awaitSlot(); // throws, counted, as acquire() does
    return new Provisional(this, since, waited != null);
  }

  @Override
  public Optional<ProvisionalSlot> tryAcquireProvisionally() {
    Provisional taken = takeFreeProvisionally();
    if (taken != null) {
      return Optional.of(taken);
    }
    countRejection(BulkheadFullException.Reason.QUEUE_FULL);
    return Optional.empty();
  }

  /**
   * Like takeFree, lock-free and without the ticker, but the `fast` count is left alone: nothing is
   * admitted yet. The slot's wait is counted from when it first waits (Provisional), and its
   * latency is sampled as a fast admission's is (shouldTime), the one in 256 drawn at random since
   * no `fast` count picks it. Null when no slot is free or someone waits.
   */
  private @Nullable Provisional takeFreeProvisionally() {
    int taken = takeAtOnce();
    return taken == NOT_TAKEN ? null : new Provisional(this, taken == TAKEN_TIMED);
  }

  /** takeFreeProvisionally's slot without its object: TAKEN or TAKEN_TIMED, or NOT_TAKEN. */
  private int takeAtOnce() {
    long s = state;
    while (waiting(s) == 0 && available(s) > 0) {
      long witness = (long) STATE.compareAndExchange(this, s, s - ONE_PERMIT);
      if (witness == s) {
        int mask = sampleMask;
        boolean timed =
            mask == 0
                || (available(s) - 1) * 2 < limit
                || listeners.any()
                || (ThreadLocalRandom.current().nextInt() & mask) == 0;
        return timed ? TAKEN_TIMED : TAKEN;
      }
      s = witness;
    }
    return NOT_TAKEN;
  }

  /** tryAcquire's admission without its Lease: takeFree's CAS counts it, as for any fast one. */
  @Override
  public int admitAtOnce() {
    long before = takeFree();
    if (before == NO_FREE_SLOT) {
      return NOT_TAKEN;
    }
    boolean timed = shouldTime(before);
    listeners.admitted(0L);
    return timed ? TAKEN_TIMED : TAKEN;
  }

  @Override
  public long admittedAt(int admitted) {
    return timedOf(admitted) ? ticker.read() : 0L;
  }

  /** As Lease.close for a call admitAtOnce admitted; the caller's permit makes it happen once. */
  @Override
  public void releaseTaken(int admitted, long admittedAt) {
    release(timedOf(admitted), admittedAt);
  }

  private static boolean timedOf(int admitted) {
    if (admitted != TAKEN && admitted != TAKEN_TIMED) {
      throw new IllegalArgumentException("not a code admitAtOnce() returned: " + admitted);
    }
    return admitted == TAKEN_TIMED;
  }

  @Override
  public <T extends @Nullable Object> CompletableFuture<T> submitProvisionally(
      Function<? super ProvisionalSlot, ? extends CompletionStage<T>> task) {
    Objects.requireNonNull(task, "task");
    Provisional taken = takeFreeProvisionally();
    if (taken != null) {
      // As enqueueAsync's ADMITTED, without its lock and node: a provisional call's own slot
      // decides what finishing counts, so `timed` and `admittedAt` are not used.
      AsyncCall<T> call = new AsyncCall<>(this, () -> task.apply(taken), taken);
      call.start(true, 0L);
      return call;
    }
    Provisional slot = new Provisional(this, ticker.read(), false);
    return enqueueAsync(new AsyncCall<T>(this, () -> task.apply(slot), slot));
  }

  long tickerRead() {
    return ticker.read();
  }

  /**
   * What is left of maxWait for a call that asked at {@code since}; Long.MAX_VALUE if unbounded.
   */
  long waitLeftNanos(long since) {
    return waitBounded ? maxWaitNanos - (ticker.read() - since) : Long.MAX_VALUE;
  }

  /** Takes a place in the queue for a provisional slot, if the queue has one (Provisional P3). */
  boolean reserveProvisionalWait() {
    for (; ; ) {
      int n = provisionalWaiting.get();
      // Read apart from the state word: a caller queueing in the compartment at the same moment
      // checks
      // only the word, so the two lines together can exceed maxQueue by the racing callers.
      if (queueBounded && n + waiting(state) >= maxQueue) {
        return false;
      }
      if (provisionalWaiting.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  void provisionalWaitEnded() {
    provisionalWaiting.decrementAndGet();
  }

  void provisionalQueued() {
    listeners.queued();
  }

  /**
   * A provisional slot was confirmed at {@code now} (a ticker reading only if it waited or is
   * timed); {@code waited} is negative if it never waited.
   */
  void provisionalAdmitted(long waited, long now) {
    slowAdmitted.increment();
    if (waited >= 0) {
      window.recordWait(now, waited);
      listeners.admitted(waited);
    } else {
      listeners.admitted(0L);
    }
  }

  /**
   * A provisional slot was abandoned: pass it on and count the rejection, if this caller left it.
   */
  BulkheadFullException provisionalRejected(BulkheadFullException.Reason reason, boolean counted) {
    if (!counted) {
      return new BulkheadFullException(name, reason, retryAfterNanos());
    }
    passSlotOn();
    return reject(reason);
  }

  /** A provisional slot was closed before it was confirmed: withdrawn, like a queued async call. */
  void provisionalWithdrawn(long since) {
    passSlotOn();
    cancelled.increment();
    listeners.cancelled(ticker.read() - since);
  }

  /** Frees a slot that was never admitted (no latency sample), or hands it to the oldest waiter. */
  private void passSlotOn() {
    Waiter next = freeSlot();
    if (next != null) {
      next.granted(this);
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Leaving the queue without a slot

  /**
   * The owner of {@code node} gave up (timeout or interrupt); unlink it unless a granter already
   * did.
   */
  private void unlinkAbandoned(Waiter node) {
    lock.lock();
    try {
      if (node.linked) {
        unlink(node);
        STATE.getAndAdd(this, -ONE_WAITER);
      }
    } finally {
      lock.unlock();
    }
  }

  /** A queued async call was withdrawn by its caller. */
  void withdrawn(AsyncWaiter node) {
    unlinkAbandoned(node);
    cancelled.increment();
    listeners.cancelled(ticker.read() - node.enqueuedAt);
  }

  /**
   * The timer task: expires every waiter whose deadline has passed and re-arms for the next one.
   */
  private void sweep() {
    List<Waiter> expired = null;
    lock.lock();
    try {
      sweepScheduled = false;
      long now = ticker.read();
      Waiter w = head;
      while (w != null && now - w.enqueuedAt >= maxWaitNanos) {
        Waiter next = w.next;
        boolean expiredHere = w.abandon(Waiter.TIMED_OUT);
        // Either it expires now, or its owner abandoned it and has not unlinked it yet: do it for
        // them.
        unlink(w);
        STATE.getAndAdd(this, -ONE_WAITER);
        if (expiredHere) {
          if (expired == null) {
            expired = new ArrayList<>();
          }
          expired.add(w);
        }
        w = next;
      }
      if (head != null) {
        sweepScheduled = true;
        scheduler.schedule(sweep, maxWaitNanos - (now - head.enqueuedAt));
      }
    } finally {
      lock.unlock();
    }
    if (expired == null) {
      return;
    }
    List<Waiter> rejections = null;
    for (Waiter e : expired) {
      if (e instanceof ThreadWaiter) {
        e.expired(this); // an unpark: the thread runs its own rejection
      } else {
        if (rejections == null) {
          rejections = new ArrayList<>(expired.size());
        }
        rejections.add(e);
      }
    }
    if (rejections != null) {
      // One task per sweep, not per waiter: a sweep can expire millions at once, and a hand-off
      // each
      // would cost more than the rejections themselves (R9).
      List<Waiter> batch = rejections;
      runElsewhere(() -> rejectExpired(batch));
    }
  }

  /** On the executor: fails the futures of async waiters the sweep expired, oldest first. */
  private void rejectExpired(List<Waiter> batch) {
    for (Waiter w : batch) {
      try {
        w.expired(this);
      } catch (Throwable t) {
        LOG.log(Level.ERROR, "bulkhead '" + name + "' could not reject a timed-out call", t);
      }
    }
  }

  // ------------------------------------------------------------------------------------------------
  // The queue (guarded by lock)

  private void link(Waiter w) {
    w.linked = true;
    w.prev = tail;
    w.next = null;
    if (tail == null) {
      head = w;
    } else {
      tail.next = w;
    }
    tail = w;
  }

  private void unlink(Waiter w) {
    Waiter p = w.prev;
    Waiter n = w.next;
    if (p == null) {
      head = n;
    } else {
      p.next = n;
    }
    if (n == null) {
      tail = p;
    } else {
      n.prev = p;
    }
    w.prev = null;
    w.next = null;
    w.linked = false;
  }

  /**
   * Makes listeners receive {@code face} as the compartment of every event: a WorkerPool registers
   * a view of this compartment, and a listener added through that view must see that view.
   */
  void reportEventsAs(Compartment face) {
    listeners.reportAs(face);
  }

  /**
   * Leaves the budget, for a compartment that is being discarded (removed from its registry). Later
   * limit changes no longer touch the budget, so a discarded compartment cannot take its share
   * back.
   */
  @Override
  public Optional<Budget> budget() {
    if (budget == null) {
      return Optional.empty();
    }
    lock.lock();
    try {
      return leftBudget ? Optional.empty() : Optional.of(budget);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void leaveBudget() {
    if (budget == null) {
      return;
    }
    lock.lock();
    try {
      if (!leftBudget) {
        leftBudget = true;
        budget.leave(name);
      }
    } finally {
      lock.unlock();
    }
  }
}
