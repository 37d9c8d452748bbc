package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
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
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A call handed a slot of the lease that can no longer cover a call by the time it starts (R2 in
 * RedisBulkhead): it must not start under it. The submit's start is held in a queue the test runs
 * by hand, standing for a process paused at that moment; meanwhile the process is cut off from its
 * Redis (a proxy of the test's own holds every byte) for longer than the lease TTL, so its lease
 * stops admitting. The compartment counts such a call as it counts any call: refused by the
 * fallback policy, or admitted once, on a slot of the share.
 */
class SlotLapsedBeforeStartTest {

  private static final Duration TTL = Duration.ofSeconds(1);
  private static final Duration POLL = Duration.ofMillis(100);
  private static final Duration CALL = Duration.ofMillis(500);

  /** The events of one compartment, without durations. */
  private static final class Events implements BulkheadListener {
    final List<String> seen = Collections.synchronizedList(new ArrayList<>());

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
    }

    @Override
    public void onCancelled(Compartment bulkhead, long waitedNanos) {
      seen.add("cancelled");
    }

    @Override
    public void onReleased(Compartment bulkhead, long heldNanos) {
      seen.add("released");
    }
  }

  @Test
  void aCallHandedASlotThatLapsedBeforeItStartedIsRefusedByTheFallbackPolicy() throws Exception {
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start();
        FaultProxy proxy = new FaultProxy(redis.port());
        RedisCompartments fleet = connect(proxy.uri());
        RedisCompartments other = connect(redis.uri())) {
      FleetBulkhead ours = build(fleet, false);
      Run run = handASlotThenCutOff(ours, build(other, false), proxy);

      run.start.run(); // the "resumed" process gets to start the call: stale, given back
      Runnable refusal = run.starts.poll(10, TimeUnit.SECONDS);
      assertThat(refusal).as("waited again, and refused at once by the policy").isNotNull();
      refusal.run(); // on the compartment's own threads, which the test holds
      BulkheadFullException e =
          (BulkheadFullException)
              catchThrowableOfType(
                      () -> run.call.get(10, TimeUnit.SECONDS), ExecutionException.class)
                  .getCause();
      assertThat(e.reason()).isEqualTo(Reason.QUEUE_FULL);
      assertThat(run.started).as("nothing starts under a lease that lapsed").hasValue(0);
      FleetStats fleetStats = ours.fleetStats();
      assertThat(fleetStats.leasesLost()).isEqualTo(1);
      assertThat(fleetStats.refusedByFallback()).as("fail closed").isEqualTo(1);
      assertThat(fleetStats.leaseWaiting()).isZero();
      BulkheadStats s = ours.stats();
      assertThat(s.rejected(Reason.QUEUE_FULL) - run.before.rejected(Reason.QUEUE_FULL))
          .isEqualTo(1);
      assertThat(s.admitted() - run.before.admitted())
          .as("never admitted: it never started")
          .isZero();
      assertThat(s.waiting()).isZero();
      assertThat(s.inFlight()).isZero();
      assertThat(run.events.seen).containsExactly("queued", "released", "rejected QUEUE_FULL");

      proxy.heal(); // the next sync ends the fallback: the lease admits again
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(POLL)
          .until(
              () -> {
                Optional<Permit> p = ours.tryAcquire();
                p.ifPresent(Permit::close);
                return p.isPresent() && !ours.fleetStats().inFallback();
              });
    }
  }

  @Test
  void withAShareTheCallStartsOnceOnASlotOfTheShareInstead() throws Exception {
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start();
        FaultProxy proxy = new FaultProxy(redis.port());
        RedisCompartments fleet = connect(proxy.uri());
        RedisCompartments other = connect(redis.uri())) {
      FleetBulkhead ours = build(fleet, true);
      Run run = handASlotThenCutOff(ours, build(other, false), proxy);

      run.start.run(); // stale: given back; waits again and is served at once by the share
      Runnable second = run.starts.poll(10, TimeUnit.SECONDS);
      assertThat(second).as("served again, by the share").isNotNull();
      assertThat(run.started).hasValue(0);
      assertThat(run.call).isNotDone();
      assertThat(ours.stats().waiting()).as("still waiting, in the same local slot").isEqualTo(1);
      second.run();
      assertThat(run.call.get(10, TimeUnit.SECONDS)).isEqualTo("done");
      assertThat(run.started).hasValue(1);
      assertThat(run.tokenSeen).as("admitted without a lease: token 0").hasValue(0);
      assertThat(ours.fleetStats().leasesLost()).isEqualTo(1);
      assertThat(ours.fleetStats().fallbackInFlight()).isZero();
      BulkheadStats s = ours.stats();
      assertThat(s.admitted() - run.before.admitted())
          .as("admitted once, on the share")
          .isEqualTo(1);
      assertThat(s.completed() - run.before.completed()).isEqualTo(2); // `only`, and this one
      assertThat(s.rejected() - run.before.rejected()).isZero();
      assertThat(run.events.seen).containsExactly("queued", "released", "admitted", "released");
      proxy.heal();
    }
  }

  @Test
  void aMaxCallDurationIsRequiredAndPositive() {
    try (RedisCompartments fleet = connect("redis://127.0.0.1:" + freePort())) {
      assertThatThrownBy(() -> fleet.builder("r2").limit(2).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("maxCallDuration of fleet compartment 'r2' is not set");
      assertThatThrownBy(() -> fleet.builder("r2").maxCallDuration(Duration.ZERO))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("maxCallDuration must be at least 1 ms but was PT0S");
    }
  }

  /** What handASlotThenCutOff leaves: a submit handed a slot, its start held. */
  private record Run(
      CompletableFuture<String> call,
      Runnable start,
      BlockingQueue<Runnable> starts,
      AtomicInteger started,
      AtomicLong tokenSeen,
      Events events,
      BulkheadStats before) {}

  /**
   * With another process holding one of the fleet's two slots, takes the lease's only slot, submits
   * a call that waits for it (the local gate, of limit 2, has room), frees the slot (the line hands
   * it to the call, whose start is held), then holds every byte to Redis until the lease stops
   * admitting and the compartment switches to its fallback policy.
   */
  private static Run handASlotThenCutOff(FleetBulkhead ours, FleetBulkhead theirs, FaultProxy proxy)
      throws Exception {
    BlockingQueue<Runnable> starts = new LinkedBlockingQueue<>();
    ((RedisBulkhead) ours).startWaitedCallsOn(starts::add);
    takeOnce(theirs); // held to the end: a fresh server grants nothing for one term, then the slot
    Permit only = takeOnce(ours);
    assertThat(ours.fleetStats().leaseSlots()).as("the other slot is theirs").isEqualTo(1);
    Events events = new Events();
    ours.addListener(events);
    BulkheadStats before = ours.stats();
    AtomicInteger started = new AtomicInteger();
    AtomicLong tokenSeen = new AtomicLong(-1);
    CompletableFuture<String> call =
        ours.submitFenced(
            token -> {
              started.incrementAndGet();
              tokenSeen.set(token);
              return CompletableFuture.completedFuture("done");
            });
    assertThat(ours.fleetStats().leaseWaiting()).isEqualTo(1);
    only.close(); // the slot goes to the waiting call; its start is held
    Runnable start = starts.poll(10, TimeUnit.SECONDS);
    assertThat(start).as("handed a slot, not started").isNotNull();
    assertThat(ours.fleetStats().leaseInUse()).isEqualTo(1);

    proxy.hold();
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(POLL)
        .until(() -> ours.fleetStats().inFallback());
    assertThat(started).hasValue(0);
    assertThat(call).isNotDone();
    return new Run(call, start, starts, started, tokenSeen, events, before);
  }

  private static FleetBulkhead build(RedisCompartments fleet, boolean share) {
    RedisCompartmentBuilder b =
        fleet
            .builder("r2")
            .limit(2)
            .maxQueue(1)
            .maxWait(Duration.ofSeconds(60))
            .maxCallDuration(CALL);
    return (share ? b.fallbackToLocalShare(1) : b).build();
  }

  private static Permit takeOnce(FleetBulkhead b) {
    AtomicReference<Permit> taken = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(10))
        .until(
            () -> {
              b.tryAcquire().ifPresent(taken::set);
              return taken.get() != null;
            });
    return taken.get();
  }

  private static RedisCompartments connect(String uri) {
    return RedisCompartments.settings()
        .leaseTtl(TTL)
        .rebalanceInterval(POLL)
        .commandTimeout(Duration.ofMillis(200))
        .connectTimeout(Duration.ofMillis(500))
        .connect(uri);
  }

  private static int freePort() {
    try {
      return RedisServerProcess.freePort();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
