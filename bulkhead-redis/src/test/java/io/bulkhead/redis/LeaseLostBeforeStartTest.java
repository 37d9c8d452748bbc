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
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
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
 * A lease that expires between its grant and the start of its call (R10 in RedisBulkhead), on the
 * Redis at 127.0.0.1:6379: the call must not start under it. The submit's start is held in a queue
 * the test runs by hand, standing for a process paused at that moment; its lease runs out by its
 * maxCallDuration, and another process takes the slot meanwhile. The compartment counts such a call
 * as it counts any call: waiting until it starts under a good lease, then admitted once; or
 * rejected with WAIT_TIMEOUT when no time is left to wait again.
 */
class LeaseLostBeforeStartTest {

  private static final String REDIS = "redis://127.0.0.1:6379";
  private static final Duration MAX_CALL = Duration.ofMillis(500);

  private static RedisCompartments connect() {
    return RedisCompartments.settings().pollInterval(Duration.ofMillis(100)).connect(REDIS);
  }

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
  void aCallWhoseLeaseExpiredBeforeItStartedWaitsForANewOne() throws Exception {
    String name = "r8-" + UUID.randomUUID();
    RedisClient client = RedisClient.create(RedisURI.create(REDIS));
    try (RedisCompartments otherProcess = connect();
        RedisCompartments thisProcess = connect();
        StatefulRedisConnection<String, String> connection = client.connect()) {
      RedisCommands<String, String> redis = connection.sync();
      FleetBulkhead theirs = otherProcess.builder(name).limit(1).build();
      FleetBulkhead ours =
          thisProcess
              .builder(name)
              .limit(1)
              .maxQueue(1)
              .maxWait(Duration.ofSeconds(60))
              .maxCallDuration(MAX_CALL)
              .build();
      BlockingQueue<Runnable> starts = new LinkedBlockingQueue<>();
      ((RedisBulkhead) ours).startWaitedCallsOn(starts::add);
      Events events = new Events();
      ours.addListener(events);

      Permit held = theirs.tryAcquire().orElseThrow();
      AtomicReference<Permit> takenMeanwhile = new AtomicReference<>();
      AtomicInteger started = new AtomicInteger();
      AtomicLong leasesWhenStarted = new AtomicLong(-1);
      CompletableFuture<String> call =
          ours.submit(
              () -> {
                started.incrementAndGet();
                leasesWhenStarted.set(redis.zcard(LettuceLeaseStore.leasesKey(name)));
                return CompletableFuture.completedFuture("done");
              });
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(10))
          .until(() -> ours.fleetStats().leaseWaiting() == 1);

      held.close(); // the release message: our scheduler takes the lease, the start is held
      Runnable firstStart = starts.poll(10, TimeUnit.SECONDS);
      assertThat(firstStart).as("granted, not started").isNotNull();
      assertThat(ours.fleetStats().leasesHeld()).isEqualTo(1);
      // Not renewed past maxCallDuration, the lease expires; the other process's admission purges
      // it
      // and takes the slot.
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20))
          .until(
              () -> {
                Optional<Permit> p = theirs.tryAcquire();
                p.ifPresent(takenMeanwhile::set);
                return p.isPresent();
              });
      assertThat(redis.zcard(LettuceLeaseStore.leasesKey(name))).isEqualTo(1);

      firstStart.run(); // the "resumed" process gets to start the call
      assertThat(started).as("nothing starts under a lease that was lost").hasValue(0);
      assertThat(ours.fleetStats().leasesLost()).isEqualTo(1);
      assertThat(ours.fleetStats().leaseWaiting()).as("waiting for a new lease").isEqualTo(1);
      assertThat(call).isNotDone();
      BulkheadStats waiting = ours.stats();
      assertThat(waiting.waiting()).as("still waiting, in the same local slot").isEqualTo(1);
      assertThat(waiting.inFlight()).isZero();
      assertThat(waiting.admitted()).as("not admitted: it never started").isZero();
      assertThat(events.seen).containsExactly("queued");

      takenMeanwhile.get().close();
      Runnable secondStart = starts.poll(10, TimeUnit.SECONDS);
      assertThat(secondStart).as("granted a new lease").isNotNull();
      secondStart.run();
      assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("done");
      assertThat(started).hasValue(1);
      assertThat(leasesWhenStarted).as("its own lease, the only one").hasValue(1);
      assertThat(ours.fleetStats().leasesHeld()).isZero();
      assertThat(redis.zcard(LettuceLeaseStore.leasesKey(name))).isZero();
      BulkheadStats done = ours.stats();
      assertThat(done.admitted()).as("admitted once, under its second lease").isEqualTo(1);
      assertThat(done.completed()).isEqualTo(1);
      assertThat(done.rejected()).isZero();
      assertThat(done.waiting()).isZero();
      assertThat(events.seen).containsExactly("queued", "admitted", "released");
    } finally {
      client.shutdown();
    }
  }

  @Test
  void aCallWhoseLeaseExpiredBeforeItStartedWithNoWaitLeftIsAWaitTimeoutRejection()
      throws Exception {
    String name = "r10-timeout-" + UUID.randomUUID();
    Duration maxWait = Duration.ofSeconds(1);
    try (RedisCompartments otherProcess = connect();
        RedisCompartments thisProcess = connect()) {
      FleetBulkhead theirs = otherProcess.builder(name).limit(1).build();
      FleetBulkhead ours =
          thisProcess
              .builder(name)
              .limit(1)
              .maxQueue(1)
              .maxWait(maxWait)
              .maxCallDuration(MAX_CALL)
              .build();
      BlockingQueue<Runnable> starts = new LinkedBlockingQueue<>();
      ((RedisBulkhead) ours).startWaitedCallsOn(starts::add);
      Events events = new Events();
      ours.addListener(events);

      Permit held = theirs.tryAcquire().orElseThrow();
      AtomicInteger started = new AtomicInteger();
      CompletableFuture<String> call =
          ours.submit(
              () -> {
                started.incrementAndGet();
                return CompletableFuture.completedFuture("never");
              });
      long submittedBy = System.nanoTime(); // its deadline is at most maxWait after this
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(10))
          .until(() -> ours.fleetStats().leaseWaiting() == 1);
      held.close();
      Runnable start = starts.poll(10, TimeUnit.SECONDS);
      assertThat(start).as("granted, not started").isNotNull();
      // The "paused" process resumes after its whole wait and its lease's maxCallDuration are over.
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> System.nanoTime() - submittedBy > maxWait.toNanos());

      start.run();
      BulkheadFullException e =
          (BulkheadFullException)
              catchThrowableOfType(() -> call.get(10, TimeUnit.SECONDS), ExecutionException.class)
                  .getCause();
      assertThat(e.reason()).isEqualTo(Reason.WAIT_TIMEOUT);
      assertThat(started).hasValue(0);
      assertThat(ours.fleetStats().leasesLost()).isEqualTo(1);
      assertThat(ours.fleetStats().fleetTimeouts()).isEqualTo(1);
      assertThat(ours.fleetStats().leaseWaiting()).isZero();
      assertThat(ours.fleetStats().leasesHeld()).isZero();
      BulkheadStats s = ours.stats();
      assertThat(s.rejected(Reason.WAIT_TIMEOUT)).isEqualTo(1);
      assertThat(s.admitted()).isZero();
      assertThat(s.cancelled()).isZero();
      assertThat(s.waiting()).isZero();
      assertThat(s.inFlight()).isZero();
      assertThat(events.seen).containsExactly("queued", "rejected WAIT_TIMEOUT");
      Optional<Permit> again = theirs.tryAcquire();
      assertThat(again).as("the call holds nothing: the fleet's only slot is free").isPresent();
      again.get().close();
    }
  }

  @Test
  void aMaxCallDurationShorterThanTheShortestLeaseIsRefusedNamingTheField() {
    try (RedisCompartments fleet = connect()) {
      assertThatThrownBy(() -> fleet.builder("r8").maxCallDuration(Duration.ofMillis(299)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("maxCallDuration must be at least 300 ms but was PT0.299S");
    }
  }
}
