package io.bulkhead;

import io.bulkhead.internal.Durations;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A compartment for background work (emails, exports, webhooks): a fixed number of workers, a
 * bounded queue of jobs waiting for one, and an immediate {@link BulkheadFullException} when both
 * are full, so that a backlog of one kind of job cannot delay another.
 *
 * <pre>{@code
 * WorkerPool emails = WorkerPool.builder("emails").limit(4).maxQueue(200).unboundedWait().build();
 * registry.register(emails.compartment());          // metrics and dashboards see it like any compartment
 *
 * CompletableFuture<Void> sent = emails.submit(() -> mailer.send(receipt)); // or BulkheadFullException
 *
 * registry.find("emails").orElseThrow().setLimit(8); // 8 workers now, while jobs queue and run
 *
 * // On the way out: finish what is queued for up to 20 s, then take back what never started.
 * List<Runnable> unsent = emails.shutdown(Duration.ofSeconds(20));
 * unsent.forEach(outbox::persist);
 * }</pre>
 *
 * <p>Inside, a compartment whose limit is the worker count and whose queue is the job queue decides
 * which job runs, so the pool admits, queues, rejects, counts and reports exactly as every other
 * compartment does and draws on {@link Budget}s like them. Its {@linkplain #compartment() view} is
 * what registries, metrics and dashboards see: a {@link Compartment} whose {@code setLimit} changes
 * the number of jobs that run at once. Raising it starts queued jobs on new workers at once;
 * lowering it lets the running jobs finish and starts no queued one until fewer than the new number
 * run. The view has no admission methods: work enters only through {@link #submit}. Jobs run on
 * platform threads reused between jobs, or on a virtual thread each (Java 21+).
 *
 * <p>Nothing submitted is dropped silently: every job either runs, or its future fails with the
 * reason it did not ({@link BulkheadFullException} when it could not queue or waited past {@code
 * maxWait}), or it is handed back by {@link #shutdown(Duration)}.
 *
 * <p>This class is thread-safe.
 */
/*
 * Algorithm
 * ---------
 * `gate` is a DefaultBulkhead with limit = workers and maxQueue = queue. submit() registers a Job, then
 * calls gate.submit(job::dispatch). When the gate admits the job (at once, or later when a slot is
 * handed to it), dispatch() starts the job on a worker thread and returns the job's `done` stage; the
 * gate holds the slot until `done` completes, which the worker does right after the task returns. So
 * "at most `workers` jobs run" is the gate's invariant, not the executor's: the executor is a cached
 * pool (SynchronousQueue, no core threads) that runs whatever the gate lets through and never needs
 * resizing when setLimit changes the worker count. With virtual threads each job gets a new thread.
 *
 * A Job moves through one state word, each step one CAS:
 *   QUEUED ──dispatch──> DISPATCHED ──worker──> RUNNING ──> DONE
 *     │                      │
 *     ├─ gate rejects ─> REJECTED (future fails with the BulkheadFullException)
 *     ├─ submitter cancels or completes the future ─> WITHDRAWN
 *     └─ shutdown deadline ─> HANDED_BACK <─ shutdown deadline ─┘
 *   HANDED_BACK ──the caller runs the returned Runnable──> DONE
 *
 * Invariants
 * ----------
 *   W1 A job runs its task at most once: only the CAS DISPATCHED -> RUNNING (worker) or
 *      HANDED_BACK -> DONE (the caller running a leftover) leads to task.call().
 *   W2 `done` completes exactly once per admitted job, freeing the gate slot once: by the worker after
 *      RUNNING, by whoever wins DISPATCHED -> WITHDRAWN/HANDED_BACK, or by dispatch() itself when the
 *      job had left QUEUED before it was admitted or the executor refused it. The gate future is
 *      cancelled only by whoever wins QUEUED -> WITHDRAWN/HANDED_BACK, so the gate never sees a
 *      cancellation of a live `done` stage (which would free a slot under a running job).
 *   W3 `live` holds every job submitted and not yet settled; it is guarded by `lock`, as is `shut`.
 *      A job is added only while !shut, so after shutdown sets `shut` the set only shrinks, and the
 *      pool terminates (budget share returned, executor stopped) exactly once, when it is empty.
 *   W4 No user code runs under `lock` or a job's `runLock`: tasks, futures' dependents and gate
 *      listeners all run after they are released. Termination returns the budget share and stops
 *      the executor under `lock` (neither calls out), so a terminated pool holds no share.
 *
 * Races, as interleavings
 * -----------------------
 *   P1 submit vs shutdown. T1 submits while T2 shuts down. Registration and `shut` share `lock`: either
 *      T1 registers first and T2 waits for (or hands back) T1's job, or T2 sets `shut` first and T1
 *      gets RejectedExecutionException. No job slips in after shutdown has looked.
 *   P2 hand-back vs admission. T2 (shutdown) CASes QUEUED -> HANDED_BACK while T1 (a releasing worker)
 *      grants the job's gate waiter and runs dispatch(). If T2 wins, dispatch() finds the job not QUEUED
 *      and returns a completed stage: the slot is freed at once and the task is not started. If T1
 *      wins, T2 reads DISPATCHED and CASes it to HANDED_BACK (completing `done`), or finds RUNNING and
 *      interrupts the job. Once shutdown starts handing back, dispatch() moves a QUEUED job straight
 *      to HANDED_BACK itself, so a slot freed during the hand-back starts no new job after the deadline.
 *   P3 hand-back vs submit returning. T2 moves a job to HANDED_BACK before T1's gate.submit() has
 *      returned its future. T2 writes the state then reads `admission`; T1 writes `admission` then
 *      reads the state; both volatile, so at least one of them sees the other and cancels the gate
 *      future (twice is harmless), and the job does not linger in the gate's queue.
 *   P4 deadline interrupt vs job end. T2 decides to interrupt a RUNNING job as its worker T1 finishes
 *      it. Both take the job's `runLock`: T2 interrupts only while the state is still RUNNING; T1 sets
 *      DONE under the lock and then clears its interrupt status. So an interrupt meant for this job
 *      never leaks into the next job on the same thread, nor into the future's dependents.
 *   P5 submitter cancel vs admission: as P2, with WITHDRAWN in place of HANDED_BACK; a cancel that
 *      arrives once the job is RUNNING does not interrupt it (CompletableFuture.cancel never does),
 *      the task finishes and only its result is discarded.
 *   P6 job end vs the gate attaching its release. T1 (a releasing worker) grants the job's slot and
 *      runs dispatch(); the job's worker T2 runs a short task and completes `done` before T1's gate
 *      has attached its release to `done`. The release then runs on T1, when it attaches, while T2
 *      goes on. So T2 never settles the job's future itself: it stores the outcome and completes
 *      `done`; the gate releases the slot and only then completes its future (`admission`), whose
 *      dependent settles the job's future and retires the job, on T1 or T2. Either way a job's slot
 *      is free, and a queued job it hands the slot to started, before the job's future completes.
 *
 * Waiting in shutdown and awaitTermination uses `idle`, a Condition of `lock`, signalled when `live`
 * empties after shutdown: real time, not the ticker, because it bounds a real wait.
 */
public final class WorkerPool {

  private static final System.Logger LOG = System.getLogger("io.bulkhead");
  private static final long IDLE_THREAD_SECONDS = 10;

  private final String name;
  private final DefaultBulkhead gate;
  private final Executor executor;
  private final ThreadPoolExecutor platformExecutor; // null with virtual threads
  private final boolean virtual;
  private final PoolCompartment compartment = new PoolCompartment();

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition idle = lock.newCondition();
  private final LinkedHashSet<Job<?>> live =
      new LinkedHashSet<>(); // guarded by lock; submission order
  private boolean shut; // guarded by lock
  private boolean terminated; // guarded by lock
  private volatile boolean handingBack;

  WorkerPool(DefaultBulkhead gate, ThreadFactory threads, boolean virtual) {
    this.name = gate.name();
    this.gate = gate;
    gate.reportEventsAs(compartment); // listeners added through compartment() see that object
    this.virtual = virtual;
    if (virtual) {
      this.platformExecutor = null;
      this.executor = job -> threads.newThread(job).start();
    } else {
      this.platformExecutor =
          new ThreadPoolExecutor(
              0,
              Integer.MAX_VALUE,
              IDLE_THREAD_SECONDS,
              TimeUnit.SECONDS,
              new SynchronousQueue<>(),
              threads);
      this.executor = platformExecutor;
    }
  }

  /** Starts building a worker pool with this name. */
  public static WorkerPoolBuilder builder(String name) {
    return new WorkerPoolBuilder(name);
  }

  /** The pool's name, which is also its compartment's name. */
  public String name() {
    return name;
  }

  /** How many jobs may run at once: the number of workers, the compartment's limit. */
  public int limit() {
    return gate.config().limit();
  }

  /** Whether jobs run on virtual threads. */
  public boolean virtualThreads() {
    return virtual;
  }

  /**
   * Queues {@code task} to run on a worker, or rejects it at once.
   *
   * <p>The returned future completes with the task's result or exception. Cancelling it (or
   * completing it yourself) before a worker has started the task withdraws the job; once started,
   * the task runs to its end and only its result is discarded.
   *
   * @throws BulkheadFullException if every worker is busy and the queue is full; the task will not
   *     run
   * @throws RejectedExecutionException if the pool has been shut down
   */
  public <T extends @Nullable Object> CompletableFuture<T> submit(Callable<T> task) {
    Objects.requireNonNull(task, "task");
    return start(new Job<>(this, task, task));
  }

  /** Like {@link #submit(Callable)}, for a task without a result. */
  public CompletableFuture<Void> submit(Runnable task) {
    Objects.requireNonNull(task, "task");
    return start(
        new Job<Void>(
            this,
            () -> {
              task.run();
              return null;
            },
            task));
  }

  private <T> CompletableFuture<T> start(Job<T> job) {
    lock.lock();
    try {
      if (shut) {
        throw new RejectedExecutionException("worker pool '" + name + "' is shut down");
      }
      live.add(job);
    } finally {
      lock.unlock();
    }
    CompletableFuture<Void> admission = gate.submit(job::dispatch);
    job.admission = admission;
    int now = job.state;
    if (now == Job.WITHDRAWN || now == Job.HANDED_BACK) {
      job.cancelAdmissionIfWithdrawn(); // P3; never for a RUNNING job, whose slot the gate must
      // keep
    }
    admission.whenComplete(job::admissionSettled);
    BulkheadFullException rejection = job.rejection;
    if (rejection != null && rejection.reason() == BulkheadFullException.Reason.QUEUE_FULL) {
      throw rejection; // turned away at the door; a queued job that expires fails its future
      // instead
    }
    job.result.whenComplete(job::resultSettled);
    return job.result;
  }

  /** A snapshot of the pool's numbers: running jobs are in flight, queued ones waiting. */
  public BulkheadStats stats() {
    return gate.stats();
  }

  /**
   * The pool as a compartment, to register in a {@link BulkheadRegistry} so that metrics and
   * dashboards see it: its name, config, stats and listeners are the pool's, and {@link
   * Compartment#setLimit} changes the number of workers. It takes work only through {@link
   * #submit}: it has no admission methods of its own. Removing it from a registry returns its
   * budget share, as for any compartment.
   */
  public Compartment compartment() {
    return compartment;
  }

  /**
   * Stops taking jobs, lets the queued and running ones finish until {@code deadline} has passed,
   * and hands back whatever has not started by then.
   *
   * <p>From the moment this is called, {@link #submit} throws {@link RejectedExecutionException}.
   * If every job ends within {@code deadline}, the result is empty. Otherwise the jobs still queued
   * are taken out of the queue and returned, in the order they were submitted, and the jobs still
   * running are interrupted (they are not returned: they may have done part of their work). Running
   * a returned {@code Runnable} runs its task on the calling thread, at most once, and completes
   * the future that {@code submit} returned; until then that future stays incomplete. Persist them,
   * run them, or cancel their futures: the pool has let go of them.
   *
   * <p>The pool terminates when its last job has ended: its threads stop and its budget share is
   * returned. Calling this again waits again and returns an empty list.
   *
   * @param deadline how long to let queued and running work go on; zero hands back at once
   * @return the jobs that never started, oldest first
   * @throws InterruptedException if the calling thread is interrupted while it waits; the pool
   *     stays shut down and its jobs go on
   */
  public List<Runnable> shutdown(Duration deadline) throws InterruptedException {
    Objects.requireNonNull(deadline, "deadline");
    if (deadline.isNegative()) {
      throw new IllegalArgumentException("deadline must not be negative but was " + deadline);
    }
    long end = System.nanoTime() + Durations.toNanosSaturated(deadline);
    List<Job<?>> remaining;
    lock.lock();
    try {
      shut = true;
      settleIfIdle();
      while (!live.isEmpty()) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          break;
        }
        idle.awaitNanos(left);
      }
      handingBack = !live.isEmpty();
      remaining = new ArrayList<>(live);
    } finally {
      lock.unlock();
    }
    if (remaining.isEmpty()) {
      return Collections.emptyList();
    }
    List<Runnable> handedBack = new ArrayList<>();
    for (Job<?> job : remaining) {
      if (job.handBack()) {
        handedBack.add(job.leftover());
        retire(job);
      }
    }
    return Collections.unmodifiableList(handedBack);
  }

  /** Whether {@link #shutdown} has been called. */
  public boolean isShutdown() {
    lock.lock();
    try {
      return shut;
    } finally {
      lock.unlock();
    }
  }

  /** Whether the pool is shut down and its last job has ended. */
  public boolean isTerminated() {
    lock.lock();
    try {
      return terminated;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until the pool has terminated (after {@link #shutdown}, once interrupted jobs have
   * ended), at most {@code timeout}; returns whether it has.
   */
  public boolean awaitTermination(Duration timeout) throws InterruptedException {
    long end =
        System.nanoTime() + Durations.toNanosSaturated(Objects.requireNonNull(timeout, "timeout"));
    lock.lock();
    try {
      while (!terminated) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        idle.awaitNanos(left);
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public String toString() {
    BulkheadStats s = gate.stats();
    return "WorkerPool{name="
        + name
        + ", running="
        + s.inFlight()
        + "/"
        + s.limit()
        + ", queued="
        + s.waiting()
        + "/"
        + s.maxQueue().orElse(0)
        + (virtual ? ", virtual threads" : "")
        + (isShutdown() ? ", shut down" : "")
        + "}";
  }

  // ------------------------------------------------------------------------------------------------

  /** A job has settled (ran, was rejected, withdrawn or handed back); forget it. */
  void retire(Job<?> job) {
    lock.lock();
    try {
      live.remove(job);
      settleIfIdle();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Caller holds the lock. Terminates once, when shut and empty: the budget share and the threads
   * go before anyone waiting hears of it, so a caller that sees {@link #isTerminated()} sees them
   * gone. Both steps are short and call no user code (W4).
   */
  private void settleIfIdle() {
    if (shut && live.isEmpty() && !terminated) {
      gate.leaveBudget();
      if (platformExecutor != null) {
        platformExecutor.shutdown(); // idle threads end now; nothing will be dispatched again (W3)
      }
      terminated = true;
      idle.signalAll();
    }
  }

  void execute(Job<?> job) {
    executor.execute(job);
  }

  // ------------------------------------------------------------------------------------------------

  /** One submitted task and its state machine; see the design comment above. */
  static final class Job<T> implements Runnable {

    static final int QUEUED = 0;
    static final int DISPATCHED = 1;
    static final int RUNNING = 2;
    static final int DONE = 3;
    static final int REJECTED = 4;
    static final int WITHDRAWN = 5;
    static final int HANDED_BACK = 6;

    private static final VarHandle STATE;

    static {
      try {
        STATE = MethodHandles.lookup().findVarHandle(Job.class, "state", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final WorkerPool pool;
    private final Callable<T> task;
    private final Object submitted; // the task as the caller gave it, for toString
    final CompletableFuture<T> result = new CompletableFuture<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private final ReentrantLock runLock = new ReentrantLock();
    volatile int state = QUEUED;
    volatile CompletableFuture<Void> admission;
    volatile BulkheadFullException rejection;
    private Thread runner; // guarded by runLock
    // The task's outcome, written by the worker before it completes `done` and read after the
    // gate's
    // future completes, which the completion of `done` happens before (P6).
    private T outcome;
    private Throwable thrown;
    private boolean ran;

    Job(WorkerPool pool, Callable<T> task, Object submitted) {
      this.pool = pool;
      this.task = task;
      this.submitted = submitted;
    }

    private boolean move(int from, int to) {
      return STATE.compareAndSet(this, from, to);
    }

    /** The gate admitted this job: start it on a worker, and hold the slot until it is done. */
    CompletionStage<Void> dispatch() {
      if (pool.handingBack && move(QUEUED, HANDED_BACK)) {
        done.complete(null); // P2: past the deadline, start nothing new
        return done;
      }
      if (!move(QUEUED, DISPATCHED)) {
        done.complete(null); // withdrawn or handed back while the grant was on its way
        return done;
      }
      try {
        pool.execute(this);
      } catch (RuntimeException | Error refused) {
        // The executor could not start a thread. Fail the job rather than lose it.
        if (move(DISPATCHED, DONE)) {
          done.complete(null);
          result.completeExceptionally(refused);
          pool.retire(this);
        }
      }
      return done;
    }

    /** The worker thread's entry point. */
    @Override
    public void run() {
      runLock.lock();
      try {
        if (!move(DISPATCHED, RUNNING)) {
          return; // handed back or withdrawn before a worker got to it; `done` is already complete
        }
        runner = Thread.currentThread();
      } finally {
        runLock.unlock();
      }
      T value = null;
      Throwable failure = null;
      try {
        value = task.call();
      } catch (Throwable t) {
        failure = t;
      }
      runLock.lock();
      try {
        state = DONE;
        runner = null;
      } finally {
        runLock.unlock();
      }
      Thread.interrupted(); // P4: an interrupt aimed at this job ends with it
      outcome = value;
      thrown = failure;
      ran = true;
      // Frees the slot (which may start the next queued job), then the gate completes `admission`,
      // whose dependent, admissionSettled, settles the job's future (P6).
      done.complete(null);
    }

    private void settle(T value, Throwable failure) {
      if (failure != null) {
        result.completeExceptionally(failure);
      } else {
        result.complete(value);
      }
    }

    /**
     * The gate's future settled: the job ran and its slot is free (P6), a rejection before
     * admission, or our own cancellation.
     */
    void admissionSettled(Void ignored, Throwable failure) {
      if (failure == null) {
        if (ran) {
          settle(outcome, thrown);
          pool.retire(this);
        }
        return;
      }
      Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
      if (cause instanceof BulkheadFullException && move(QUEUED, REJECTED)) {
        rejection = (BulkheadFullException) cause;
        result.completeExceptionally(cause);
        pool.retire(this);
      } else if (cause != null
          && !(cause instanceof CancellationException)
          && !(cause instanceof BulkheadFullException)) {
        // A rejection that finds the job withdrawn or handed back already is no news: it is
        // settled.
        LOG.log(
            System.Logger.Level.ERROR,
            "worker pool '" + pool.name + "': unexpected failure admitting a job",
            cause);
      }
    }

    /** The submitter's future settled; if the job has not started, that withdraws it (P5). */
    void resultSettled(T ignored, Throwable ignoredFailure) {
      if (withdraw(WITHDRAWN)) {
        pool.retire(this);
      }
    }

    /** Moves a not-yet-started job to {@code to}; returns whether this call did so. */
    private boolean withdraw(int to) {
      for (; ; ) {
        int s = state;
        if (s == QUEUED) {
          if (move(QUEUED, to)) {
            cancelAdmissionIfWithdrawn();
            return true;
          }
        } else if (s == DISPATCHED) {
          if (move(DISPATCHED, to)) {
            done.complete(null); // not started: free its slot now
            return true;
          }
        } else {
          return false;
        }
      }
    }

    void cancelAdmissionIfWithdrawn() {
      CompletableFuture<Void> a = admission;
      if (a != null) {
        a.cancel(false); // leaves the gate's queue, or nothing if it was already admitted (W2)
      }
    }

    /**
     * At the deadline: hands the job back if it has not started, interrupts it if it is running.
     * Returns whether the job is (now) handed back.
     */
    boolean handBack() {
      if (withdraw(HANDED_BACK) || state == HANDED_BACK) {
        return true;
      }
      runLock.lock();
      try {
        if (state == RUNNING && runner != null) {
          runner.interrupt(); // P4
        }
      } finally {
        runLock.unlock();
      }
      return false;
    }

    Runnable leftover() {
      return new Runnable() {
        @Override
        public void run() {
          if (!move(HANDED_BACK, DONE) || result.isDone()) {
            return; // ran already, or its future was settled by someone else
          }
          T value = null;
          Throwable failure = null;
          try {
            value = task.call();
          } catch (Throwable t) {
            failure = t;
          }
          settle(value, failure);
        }

        @Override
        public String toString() {
          return "job of worker pool '" + pool.name + "' handed back at shutdown: " + submitted;
        }
      };
    }

    @Override
    public String toString() {
      return "job of worker pool '" + pool.name + "': " + submitted;
    }
  }

  /**
   * The pool seen as a compartment, for registries, metrics and dashboards: the gate's, except that
   * a pool that has shut down refuses a new limit.
   */
  final class PoolCompartment extends ForwardingCompartment {

    WorkerPool pool() {
      return WorkerPool.this;
    }

    @Override
    protected Compartment delegate() {
      return gate;
    }

    /**
     * Changes the number of workers; see {@link Bulkhead#setLimit}.
     *
     * @throws IllegalStateException if the pool has shut down (its budget share is already
     *     returned)
     */
    @Override
    public void setLimit(int limit) {
      if (isShutdown()) {
        throw new IllegalStateException(
            "worker pool '" + name + "' is shut down; its workers cannot" + " change");
      }
      gate.setLimit(limit);
    }

    @Override
    public String toString() {
      return WorkerPool.this.toString();
    }
  }
}
