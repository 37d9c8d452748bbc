package io.bulkhead.reactor;

import io.bulkhead.Bulkhead;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/*
 * One subscription through BulkheadOperator: the subscriber's Subscription, the upstream's Subscriber,
 * and the task it hands to the compartment.
 *
 * Algorithm
 * ---------
 * start() gives the subscriber this object as its Subscription, then calls
 * bulkhead.submit(this::admit) and keeps the returned future as `ticket`. Bulkhead.submit does all the
 * waiting: it runs admit() at once if a slot is free, or later on the thread that hands it a slot, and
 * until then the subscription is a node in the compartment's queue; no thread waits. admit() subscribes
 * to the upstream and returns `slot`, a CompletableFuture that this class completes when the
 * subscription ends; the compartment frees the slot when `slot` completes. A rejection (QUEUE_FULL at
 * once, WAIT_TIMEOUT from the compartment's timer) fails `ticket`, and admissionEnded() passes it on.
 *
 * `state` decides who ends the subscription; every transition out of WAITING or ADMITTED is one CAS:
 *
 *   WAITING ──admit()──> ADMITTED ──onComplete/onError──> TERMINATED
 *      │                     └─────────cancel()─────────> CANCELLED
 *      ├──cancel()──> WITHDRAWN
 *      └──rejection─> TERMINATED
 *
 * Demand requested before admission is summed in `requested` and forwarded when the upstream's
 * Subscription arrives in `upstream`; later requests go straight to it. `upstream` becomes the shared
 * cancelled Subscription when cancel() after admission takes it.
 *
 * Invariants
 * ----------
 *   S1  The upstream is subscribed at most once, and only by the admit() that moved WAITING ->
 *       ADMITTED; so a subscription that was withdrawn or rejected never reaches the upstream.
 *   S2  The subscriber gets at most one terminal signal: only the CAS that reaches TERMINATED sends one.
 *   S3  `ticket` is cancelled only by the cancel() that moved WAITING -> WITHDRAWN (or by start() on its
 *       behalf, C1). Once admitted, nobody cancels it, so Bulkhead.submit never forwards a cancellation
 *       to `slot`: the slot is freed only by this class, when the upstream is done with it.
 *   S4  The slot is freed exactly once: `slot` is completed at most once (CompletableFuture), and the
 *       compartment frees a slot behind a CAS of its own when the stage completes. Every path out of
 *       ADMITTED completes `slot`: onComplete and onError directly; cancel() after it has cancelled the
 *       upstream's Subscription, or, if that Subscription has not arrived yet, onSubscribe() when it
 *       does (C4).
 *   S5  No lock: the subscriber and the upstream are always called without one held by us.
 *
 * Races, as interleavings
 * -----------------------
 *   C1 cancel vs submit. T1 is in start(), inside submit() or just after it; T2 cancels (a timeout
 *      downstream). T2 CASes WAITING -> WITHDRAWN, then reads `ticket`; T1 writes `ticket`, then reads
 *      `state`. Both are volatile, so at least one of them sees the other and cancels the ticket; a
 *      second cancel is a no-op. If T2 cancelled inside the subscriber's onSubscribe, start() sees
 *      WITHDRAWN before submitting and never touches the compartment.
 *   C2 cancel vs admission. T1 cancels a waiting subscription as T2 frees a slot and grants it.
 *      (a) T1's ticket.cancel withdraws the node before T2 grants it: T2 grants the next waiter; admit()
 *          never runs (counted as cancelled).
 *      (b) T2 granted the node but has not started it: the compartment sees the ticket done, counts the
 *          call as cancelled and passes the slot on without running admit() (Bulkhead#submit: a call
 *          cancelled while it waits never runs).
 *      (c) T2 already runs admit(): whichever CAS on `state` comes first wins. If T1's (WAITING ->
 *          WITHDRAWN), admit() returns an already completed stage, so the slot is given straight back
 *          (the call counts as admitted and completed, not cancelled) and the upstream is never
 *          subscribed. If T2's (WAITING -> ADMITTED), T1's CAS fails, T1 re-reads ADMITTED and cancels
 *          after admission (C3, C4).
 *   C3 cancel vs completion. T1 cancels as T2 delivers the upstream's onComplete. One CAS out of
 *      ADMITTED wins. If T2's, it completes `slot` and signals onComplete; T1 finds TERMINATED and does
 *      nothing. If T1's, it cancels the upstream's Subscription (already finished: a no-op), then
 *      completes `slot`; T2's CAS fails and the completion is dropped, as Reactive Streams allows after
 *      a cancel. Error vs cancel is the same, except that a dropped error goes to
 *      Operators.onErrorDropped so that it is not lost silently. Either way `slot` completes once.
 *   C4 cancel vs the upstream's onSubscribe. T2 runs admit() and is inside upstream.subscribe() when T1
 *      cancels (ADMITTED -> CANCELLED) and swaps `upstream` to the cancelled marker. If T1 found null,
 *      the Subscription has not arrived: T1 leaves the rest to onSubscribe, whose CAS null -> s fails;
 *      it cancels s and only then completes `slot`. If T2's CAS came first, T1 finds s and cancels it,
 *      then completes `slot`. Both orders cancel the upstream before the slot is freed, so a waiter
 *      admitted by that free never overlaps the cancelled subscription at the dependency (as far as the
 *      upstream stops on cancel, which Reactive Streams requires).
 *   C5 request vs onSubscribe. T1 requests n before admission as T2's onSubscribe arrives: T1 adds n
 *      to `requested` and then re-reads `upstream`; T2 sets `upstream` and then takes `requested`. At
 *      least one of them sees the other's write and forwards n, and the getAndSet(0) hands each unit of
 *      demand to exactly one of them.
 *
 * Threads: admit() and so the upstream's subscription run on the subscribing thread if a slot is free,
 * otherwise on one of the compartment's own threads once a slot is handed over; rejections run on
 * the subscribing thread (QUEUE_FULL) or the compartment's own threads (WAIT_TIMEOUT). Nothing here
 * switches threads: the core does, so that no subscription starts inside another one's completion.
 */
final class BulkheadSubscriber<T> implements CoreSubscriber<T>, Subscription, Scannable {

  private static final int WAITING = 0;
  private static final int ADMITTED = 1;
  private static final int WITHDRAWN = 2;
  private static final int CANCELLED = 3;
  private static final int TERMINATED = 4;

  private static final VarHandle STATE;
  private static final VarHandle UPSTREAM;
  private static final VarHandle REQUESTED;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      STATE = lookup.findVarHandle(BulkheadSubscriber.class, "state", int.class);
      UPSTREAM = lookup.findVarHandle(BulkheadSubscriber.class, "upstream", Subscription.class);
      REQUESTED = lookup.findVarHandle(BulkheadSubscriber.class, "requested", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Publisher<? extends T> source;
  private final Bulkhead bulkhead;
  private final CoreSubscriber<? super T> actual;
  // Completed when the subscription ends after admission; the compartment then frees the slot (S4).
  private final CompletableFuture<Void> slot = new CompletableFuture<>();

  private volatile int state = WAITING;
  private volatile CompletableFuture<Void> ticket;
  private volatile Subscription upstream;
  private volatile long requested;

  BulkheadSubscriber(
      Publisher<? extends T> source, Bulkhead bulkhead, CoreSubscriber<? super T> actual) {
    this.source = source;
    this.bulkhead = bulkhead;
    this.actual = actual;
  }

  /** Hands the subscriber its Subscription, then asks the compartment for a slot. */
  void start() {
    actual.onSubscribe(this);
    if (state != WAITING) {
      return; // cancelled from inside onSubscribe: never ask for a slot (C1)
    }
    CompletableFuture<Void> submitted = bulkhead.submit(this::admit);
    ticket = submitted;
    if (state == WITHDRAWN) {
      submitted.cancel(false); // cancel() ran before `ticket` was set (C1)
    }
    submitted.whenComplete(this::admissionEnded);
  }

  /** The compartment's task: runs once a slot is ours, on the thread that admits us. */
  private CompletionStage<Void> admit() {
    if (!STATE.compareAndSet(this, WAITING, ADMITTED)) {
      // Withdrawn while the slot was being handed over (C2c): give the slot straight back.
      return CompletableFuture.completedFuture(null);
    }
    try {
      source.subscribe(this);
    } catch (Throwable failure) {
      // Reactor's publishers report failures through onError; this is a broken one.
      Exceptions.throwIfJvmFatal(failure);
      onError(Operators.onOperatorError(failure, actual.currentContext()));
    }
    return slot;
  }

  /** The ticket completed: only a rejection while still waiting concerns us. */
  private void admissionEnded(Void ignored, Throwable rejection) {
    if (rejection != null && STATE.compareAndSet(this, WAITING, TERMINATED)) {
      actual.onError(rejection);
    }
  }

  // ------------------------------------------------------------------------------------------------
  // From the upstream

  @Override
  public void onSubscribe(Subscription subscription) {
    if (UPSTREAM.compareAndSet(this, null, subscription)) {
      long demand = (long) REQUESTED.getAndSet(this, 0L);
      if (demand != 0) {
        subscription.request(demand); // demand that arrived while we waited (C5)
      }
      return;
    }
    subscription.cancel();
    if (state == CANCELLED) {
      slot.complete(
          null); // cancelled between admission and now (C4): the upstream is cancelled first
    } else {
      Operators.reportSubscriptionSet();
    }
  }

  @Override
  public void onNext(T value) {
    int now = state;
    if (now == ADMITTED) {
      actual.onNext(value);
    } else if (now == CANCELLED) {
      Operators.onDiscard(value, actual.currentContext());
    } else {
      Operators.onNextDropped(value, actual.currentContext());
    }
  }

  @Override
  public void onError(Throwable failure) {
    if (STATE.compareAndSet(this, ADMITTED, TERMINATED)) {
      slot.complete(null);
      actual.onError(failure);
    } else {
      Operators.onErrorDropped(
          failure, actual.currentContext()); // after a cancel (C3) or a completion
    }
  }

  @Override
  public void onComplete() {
    if (STATE.compareAndSet(this, ADMITTED, TERMINATED)) {
      slot.complete(null);
      actual.onComplete();
    }
  }

  @Override
  public Context currentContext() {
    return actual.currentContext();
  }

  // ------------------------------------------------------------------------------------------------
  // From the subscriber

  @Override
  public void request(long n) {
    Subscription current = upstream;
    if (current != null) {
      current.request(n);
      return;
    }
    if (!Operators.validate(n)) {
      return;
    }
    addDemand(n);
    current = upstream;
    if (current != null) {
      long demand = (long) REQUESTED.getAndSet(this, 0L);
      if (demand != 0) {
        current.request(demand); // onSubscribe came in while we added (C5)
      }
    }
  }

  @Override
  public void cancel() {
    for (; ; ) {
      int now = state;
      if (now == WAITING) {
        if (STATE.compareAndSet(this, WAITING, WITHDRAWN)) {
          CompletableFuture<Void> waitingFor = ticket;
          if (waitingFor != null) {
            waitingFor.cancel(false); // leaves the queue (C2); null: start() will do it (C1)
          }
          return;
        }
      } else if (now == ADMITTED) {
        if (STATE.compareAndSet(this, ADMITTED, CANCELLED)) {
          Subscription current =
              (Subscription) UPSTREAM.getAndSet(this, Operators.cancelledSubscription());
          if (current != null) {
            current.cancel();
            slot.complete(null);
          } // else the upstream's onSubscribe has not come yet; it cancels and frees (C4)
          return;
        }
      } else {
        return; // already withdrawn, cancelled or terminated
      }
    }
  }

  private void addDemand(long n) {
    for (; ; ) {
      long current = requested;
      long sum = current + n;
      long capped =
          sum < 0 ? Long.MAX_VALUE : sum; // Long.MAX_VALUE means unbounded in Reactive Streams
      if (current == Long.MAX_VALUE || REQUESTED.compareAndSet(this, current, capped)) {
        return;
      }
    }
  }

  // ------------------------------------------------------------------------------------------------
  // For Reactor's debugging tools (Scannable)

  @Override
  @SuppressWarnings("rawtypes") // Scannable declares the raw Attr
  public Object scanUnsafe(Attr key) {
    int now = state;
    if (key == Attr.PARENT) {
      Subscription current = upstream;
      return current == Operators.cancelledSubscription() ? null : current;
    }
    if (key == Attr.ACTUAL) {
      return actual;
    }
    if (key == Attr.CANCELLED) {
      return now == WITHDRAWN || now == CANCELLED;
    }
    if (key == Attr.TERMINATED) {
      return now == TERMINATED;
    }
    if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
      return requested;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.ASYNC;
    }
    return null;
  }
}
