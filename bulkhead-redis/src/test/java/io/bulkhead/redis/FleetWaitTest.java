package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Permit;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Calls that wait for the fleet to free a lease, on the Redis at 127.0.0.1:6379. Two
 * RedisCompartments in one JVM stand for two processes: {@code other} holds the leases, {@code
 * mine} waits for them.
 */
class FleetWaitTest {

  private static final String REDIS = "redis://127.0.0.1:6379";
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration POLL = Duration.ofMillis(100);
  private static final Duration CALL = Duration.ofSeconds(5);

  private static RedisCompartments connect() {
    return RedisCompartments.settings().leaseTtl(TTL).rebalanceInterval(POLL).connect(REDIS);
  }

  @Test
  void aSubmitThatWaitedForALeaseStartsOnItsCompartmentsOwnThread() throws Exception {
    String name = "wait-" + UUID.randomUUID();
    try (RedisCompartments other = connect();
        RedisCompartments mine = connect()) {
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
      Permit held = FleetAccountingTest.takeOver(theirs);

      CompletableFuture<String> ranOn = new CompletableFuture<>();
      CompletableFuture<String> call =
          ours.submit(
              () -> {
                ranOn.complete(Thread.currentThread().getName());
                return CompletableFuture.completedFuture("done");
              });
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(10))
          .until(() -> ours.fleetStats().leaseWaiting() == 1);
      assertThat(ranOn).as("the fleet is full: nothing runs yet").isNotDone();

      // The slot goes back to `theirs`' lease; `theirs`, idle now, gives it back at a sync and
      // `mine`, which asked for it, takes it at its next.
      held.close();
      assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("done");
      assertThat(ranOn.get())
          .as("never the fleet's scheduler, which every compartment shares")
          .startsWith("bulkhead-" + name + "-");
      assertThat(ours.fleetStats().leaseInUse()).isZero();
      assertThat(slotsInRedis(name))
          .as("the fleet counts at most its limit")
          .isLessThanOrEqualTo(1);
    }
  }

  @Test
  void cancellingASubmitThatWaitsForALeaseWithdrawsIt() throws Exception {
    String name = "cancel-" + UUID.randomUUID();
    try (RedisCompartments other = connect();
        RedisCompartments mine = connect()) {
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
      Permit held = FleetAccountingTest.takeOver(theirs);

      AtomicInteger firstRan = new AtomicInteger();
      CompletableFuture<String> first =
          ours.submit(
              () -> {
                firstRan.incrementAndGet();
                return CompletableFuture.completedFuture("first");
              });
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(10))
          .until(() -> ours.fleetStats().leaseWaiting() == 1);
      assertThat(first.cancel(true)).isTrue();
      assertThat(ours.fleetStats().leaseWaiting()).as("withdrawn from the lease queue").isZero();

      // A second call queues where the first was: in FIFO order it gets the next lease only if the
      // first is really gone.
      CountDownLatch finish = new CountDownLatch(1);
      CompletableFuture<String> second =
          ours.submit(
              () ->
                  CompletableFuture.supplyAsync(
                      () -> {
                        try {
                          finish.await();
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                        return "second";
                      }));
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(10))
          .until(() -> ours.fleetStats().leaseWaiting() == 1);
      held.close();
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(10))
          .until(() -> ours.fleetStats().leaseInUse() == 1);
      assertThat(ours.fleetStats().leaseWaiting()).as("the slot went to the second call").isZero();
      assertThat(slotsInRedis(name)).as("the second call's slot, and no leaked one").isEqualTo(1);
      finish.countDown();
      assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo("second");
      assertThat(firstRan).as("a withdrawn call never runs").hasValue(0);
      assertThatThrownBy(first::join).isInstanceOf(CancellationException.class);
      assertThat(slotsInRedis(name)).isLessThanOrEqualTo(1);
      assertThat(ours.fleetStats().leaseInUse()).isZero();
    }
  }

  /** The slots Redis counts for the compartment's processes together. */
  static long slotsInRedis(String name) {
    RedisClient client = RedisClient.create(REDIS);
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      return c.sync().hvals(LettuceLeaseStore.heldKey(name)).stream()
          .mapToLong(Long::parseLong)
          .sum();
    } finally {
      client.shutdown();
    }
  }
}
