package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadFullException.Reason;
import io.bulkhead.BulkheadListener;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Compartment;
import io.bulkhead.Permit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A fleet compartment counts a call that waited for a lease, or was refused by the fallback policy,
 * as core counts a call that waited in its own queue: a rejection or a cancellation, never an
 * admission. On the Redis at 127.0.0.1:6379 ({@code other} holds the leases, {@code mine} waits),
 * and on an unreachable address for the fallback.
 */
class FleetAccountingTest {

  private static final String REDIS = "redis://127.0.0.1:6379";
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration POLL = Duration.ofMillis(100);
  private static final Duration MAX_WAIT = Duration.ofMillis(300);
  private static final Duration CALL = Duration.ofSeconds(5);

  private static RedisCompartments connect(String uri) {
    return RedisCompartments.settings().leaseTtl(TTL).rebalanceInterval(POLL).connect(uri);
  }

  /** The events of one compartment, without durations; and the last held time it reported. */
  private static final class Events implements BulkheadListener {
    final List<String> seen = Collections.synchronizedList(new ArrayList<>());
    final List<String> rejectedOn = Collections.synchronizedList(new ArrayList<>());
    volatile long lastHeldNanos = -1;

    @Override
    public void onAdmitted(Compartment bulkhead, long waitedNanos) {
      seen.add("admitted");
    }

    @Override
    public void onQueued(Compartment bulkhead) {
      seen.add("queued");
    }

    @Override
    public void onRejected(Compartment bulkhead, Reason reason) {
      seen.add("rejected " + reason);
      rejectedOn.add(Thread.currentThread().getName());
    }

    @Override
    public void onCancelled(Compartment bulkhead, long waitedNanos) {
      seen.add("cancelled");
    }

    @Override
    public void onReleased(Compartment bulkhead, long heldNanos) {
      seen.add("released");
      lastHeldNanos = heldNanos;
    }
  }

  /**
   * One call, so that the compartment's retry-after estimate is that call's held time: with nobody
   * waiting and a limit of 1, core estimates one service time, the first sample's.
   */
  private static long calibrate(FleetBulkhead b, Events events) throws Exception {
    b.call(() -> "calibration");
    long held = events.lastHeldNanos;
    assertThat(held).isNotNegative();
    events.seen.clear();
    return held;
  }

  /**
   * Takes a slot on {@code b} once the fleet has given it one: the process that held the fleet's
   * slots is idle, so it gives them back at its next sync. The empty attempts before count only in
   * {@code b}'s own stats.
   */
  static Permit takeOver(FleetBulkhead b) {
    AtomicReference<Permit> taken = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(10))
        .until(
            () -> {
              b.tryAcquire().ifPresent(taken::set);
              return taken.get() != null;
            });
    return taken.get();
  }

  @Test
  void aLeaseWaitThatTimesOutIsAWaitTimeoutRejection() throws Exception {
    String name = "acct-timeout-" + UUID.randomUUID();
    try (RedisCompartments other = connect(REDIS);
        RedisCompartments mine = connect(REDIS)) {
      // `ours` alone holds the fleet's one slot and runs the calibration with it; then `theirs`
      // takes the slot over (the fleet rebalances: `ours` is idle) and holds it: the fleet is full.
      FleetBulkhead ours =
          mine.builder(name).limit(1).maxQueue(1).maxWait(MAX_WAIT).maxCallDuration(CALL).build();
      Events events = new Events();
      ours.addListener(events);
      long serviceNanos = calibrate(ours, events);
      FleetBulkhead theirs = other.builder(name).limit(1).maxCallDuration(CALL).build();
      Permit held = takeOver(theirs);
      assertThat(ours.fleetStats().leaseSlots()).as("the fleet's one slot is theirs").isZero();

      AtomicBoolean ran = new AtomicBoolean();
      BulkheadFullException e =
          catchThrowableOfType(
              () -> ours.call(() -> ran.getAndSet(true)), BulkheadFullException.class);

      assertThat(e.reason()).isEqualTo(Reason.WAIT_TIMEOUT);
      assertThat(e.retryAfter())
          .as("core's estimate, not maxWait")
          .isEqualTo(Duration.ofNanos(serviceNanos));
      assertThat(ran).isFalse();
      BulkheadStats s = ours.stats();
      assertThat(s.rejected(Reason.WAIT_TIMEOUT)).isEqualTo(1);
      assertThat(s.admitted()).as("only the calibration").isEqualTo(1);
      assertThat(s.completed()).isEqualTo(1);
      assertThat(s.cancelled()).isZero();
      assertThat(s.inFlight()).isZero();
      assertThat(s.waiting()).isZero();
      assertThat(events.seen).containsExactly("queued", "rejected WAIT_TIMEOUT");
      assertThat(ours.fleetStats().fleetTimeouts()).isEqualTo(1);

      assertThat(ours.tryAcquire()).as("the fleet is still full").isEmpty();
      assertThat(ours.stats().rejected(Reason.QUEUE_FULL))
          .as("an empty tryAcquire, as core counts it")
          .isEqualTo(1);
      assertThat(ours.stats().admitted()).isEqualTo(1);
      held.close();
    }
  }

  @Test
  void aSubmitWhoseLeaseWaitTimesOutIsRejectedOnItsCompartmentsOwnThread() throws Exception {
    String name = "acct-async-" + UUID.randomUUID();
    try (RedisCompartments other = connect(REDIS);
        RedisCompartments mine = connect(REDIS)) {
      FleetBulkhead ours =
          mine.builder(name).limit(1).maxQueue(1).maxWait(MAX_WAIT).maxCallDuration(CALL).build();
      Events events = new Events();
      ours.addListener(events);
      long serviceNanos = calibrate(ours, events);
      FleetBulkhead theirs = other.builder(name).limit(1).maxCallDuration(CALL).build();
      Permit held = takeOver(theirs);

      AtomicBoolean ran = new AtomicBoolean();
      CompletableFuture<String> f =
          ours.submit(
              () -> {
                ran.set(true);
                return CompletableFuture.completedFuture("never");
              });
      BulkheadFullException e =
          (BulkheadFullException)
              catchThrowableOfType(
                      () -> f.get(10, TimeUnit.SECONDS),
                      java.util.concurrent.ExecutionException.class)
                  .getCause();

      assertThat(e.reason()).isEqualTo(Reason.WAIT_TIMEOUT);
      assertThat(e.retryAfter()).isEqualTo(Duration.ofNanos(serviceNanos));
      assertThat(ran).isFalse();
      assertThat(ours.stats().rejected(Reason.WAIT_TIMEOUT)).isEqualTo(1);
      assertThat(ours.stats().admitted()).isEqualTo(1);
      assertThat(ours.stats().inFlight()).isZero();
      assertThat(events.seen).containsExactly("queued", "rejected WAIT_TIMEOUT");
      assertThat(events.rejectedOn)
          .as("never the fleet's shared scheduler")
          .singleElement()
          .asString()
          .startsWith("bulkhead-" + name + "-");
      held.close();
    }
  }

  @Test
  void aSubmitCancelledWhileItWaitsForALeaseIsCountedCancelled() throws Exception {
    String name = "acct-cancel-" + UUID.randomUUID();
    try (RedisCompartments other = connect(REDIS);
        RedisCompartments mine = connect(REDIS)) {
      // `theirs` takes the fleet's one slot: whichever of the two it went to when they joined,
      // `ours` is idle, so the fleet gives it to the one with demand; `ours` then has none.
      FleetBulkhead theirs = other.builder(name).limit(1).maxCallDuration(CALL).build();
      FleetBulkhead ours =
          mine.builder(name)
              .limit(1)
              .maxQueue(1)
              .maxWait(Duration.ofSeconds(30))
              .maxCallDuration(CALL)
              .build();
      Events events = new Events();
      ours.addListener(events);
      Permit held = takeOver(theirs);

      AtomicBoolean ran = new AtomicBoolean();
      CompletableFuture<String> f =
          ours.submit(
              () -> {
                ran.set(true);
                return CompletableFuture.completedFuture("never");
              });
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(10))
          .until(() -> ours.fleetStats().leaseWaiting() == 1);
      assertThat(ours.stats().waiting()).as("waiting for a lease is waiting").isEqualTo(1);
      assertThat(ours.stats().inFlight())
          .as("not in flight: it has not reached the dependency")
          .isZero();

      assertThat(f.cancel(true)).isTrue();

      BulkheadStats s = ours.stats();
      assertThat(s.cancelled()).isEqualTo(1);
      assertThat(s.admitted()).isZero();
      assertThat(s.completed()).isZero();
      assertThat(s.rejected()).isZero();
      assertThat(s.waiting()).isZero();
      assertThat(s.inFlight()).isZero();
      assertThat(events.seen).containsExactly("queued", "cancelled");
      assertThat(ours.fleetStats().leaseWaiting()).isZero();
      held.close();
      assertThat(ran).isFalse();
      assertThat(catchThrowableOfType(f::join, CancellationException.class)).isNotNull();
    }
  }

  @Test
  void aSubmitWhoseSupplierThrowsAfterALeaseWaitFailsWithItAndFreesBothSlots() throws Exception {
    String name = "acct-throws-" + UUID.randomUUID();
    try (RedisCompartments other = connect(REDIS);
        RedisCompartments mine = connect(REDIS)) {
      // `theirs` takes the fleet's one slot: whichever of the two it went to when they joined,
      // `ours` is idle, so the fleet gives it to the one with demand; `ours` then has none.
      FleetBulkhead theirs = other.builder(name).limit(1).maxCallDuration(CALL).build();
      FleetBulkhead ours =
          mine.builder(name)
              .limit(1)
              .maxQueue(1)
              .maxWait(Duration.ofSeconds(30))
              .maxCallDuration(CALL)
              .build();
      Permit held = takeOver(theirs);
      CompletableFuture<String> f =
          ours.submit(
              () -> {
                throw new IllegalStateException("the supplier failed");
              });
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(10))
          .until(() -> ours.fleetStats().leaseWaiting() == 1);
      held.close();

      Throwable failure =
          catchThrowableOfType(
                  () -> f.get(10, TimeUnit.SECONDS), java.util.concurrent.ExecutionException.class)
              .getCause();
      assertThat(failure)
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("the supplier failed");
      BulkheadStats s = ours.stats();
      assertThat(s.admitted()).as("admitted: it had its lease").isEqualTo(1);
      assertThat(s.completed()).isEqualTo(1);
      assertThat(s.inFlight()).isZero();
      assertThat(ours.fleetStats().leaseInUse()).isZero();
      assertThat(ours.tryAcquire())
          .as("both slots are free again")
          .isPresent()
          .get()
          .satisfies(Permit::close);
    }
  }

  @Test
  void aFallbackRefusalIsAQueueFullRejection() throws Exception {
    int port = RedisServerProcess.freePort(); // nothing listens there: the fallback policy decides
    try (RedisCompartments fleet = connect("redis://127.0.0.1:" + port)) {
      FleetBulkhead ours =
          fleet
              .builder("acct-fallback")
              .limit(2)
              .maxQueue(2)
              .maxWait(MAX_WAIT)
              .maxCallDuration(CALL)
              .fallbackToLocalShare(1)
              .build();
      Events events = new Events();
      ours.addListener(events);
      ours.call(() -> "calibration"); // through the share
      long serviceNanos = events.lastHeldNanos;
      events.seen.clear();
      Permit share = ours.tryAcquire().orElseThrow(); // the whole share

      BulkheadFullException sync =
          catchThrowableOfType(() -> ours.call(() -> "no"), BulkheadFullException.class);
      CompletableFuture<String> async = ours.submit(() -> CompletableFuture.completedFuture("no"));
      BulkheadFullException asyncRefusal =
          (BulkheadFullException)
              catchThrowableOfType(async::join, CompletionException.class).getCause();

      for (BulkheadFullException e : List.of(sync, asyncRefusal)) {
        assertThat(e.reason()).isEqualTo(Reason.QUEUE_FULL);
        // Nobody waits, one service time on two slots: core's estimate.
        assertThat(e.retryAfter()).isEqualTo(Duration.ofNanos((long) (serviceNanos / 2.0)));
      }
      assertThat(ours.tryAcquire()).isEmpty();
      BulkheadStats s = ours.stats();
      assertThat(s.rejected(Reason.QUEUE_FULL)).isEqualTo(3);
      assertThat(s.admitted()).as("the calibration and the permit").isEqualTo(2);
      assertThat(s.completed()).isEqualTo(1);
      assertThat(s.inFlight()).isEqualTo(1);
      assertThat(events.seen)
          .containsExactly(
              "admitted", "rejected QUEUE_FULL", "rejected QUEUE_FULL", "rejected QUEUE_FULL");
      assertThat(ours.fleetStats().refusedByFallback()).isEqualTo(3);
      share.close();
      assertThat(ours.stats().completed()).isEqualTo(2);
    }
  }
}
