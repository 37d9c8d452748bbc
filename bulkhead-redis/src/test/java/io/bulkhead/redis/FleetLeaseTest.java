package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadFullException.Reason;
import io.bulkhead.Permit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The lease on a batch of slots: admission in memory that never waits for Redis, the batches that
 * add up to at most the limit while processes rebalance, and the fencing token a call gets. Several
 * RedisCompartments in one JVM stand for several processes.
 */
class FleetLeaseTest {

  private static final String REDIS = "redis://127.0.0.1:6379";
  private static final Duration CALL = Duration.ofSeconds(5);

  @Test
  void noAdmissionWaitsForARedisThatDoesNotAnswer() throws Exception {
    // A round trip to this Redis would take the whole command timeout, 10 s: every bound below is
    // a fraction of it.
    Duration commandTimeout = Duration.ofSeconds(10);
    Duration maxWait = Duration.ofMillis(300);
    Duration bound = Duration.ofSeconds(3);
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start();
        FaultProxy proxy = new FaultProxy(redis.port());
        RedisCompartments fleet =
            RedisCompartments.settings()
                .leaseTtl(Duration.ofSeconds(8)) // covers the test while Redis is held
                .rebalanceInterval(Duration.ofMillis(200))
                .commandTimeout(commandTimeout)
                .connect(proxy.uri())) {
      FleetBulkhead llm =
          fleet
              .builder("llm")
              .limit(2)
              .maxQueue(2)
              .maxWait(maxWait)
              .maxCallDuration(Duration.ofMillis(500))
              .build();
      RedisOutageTest.awaitSlots(llm, 2); // a fresh server grants nothing for one term
      proxy.hold(); // connected, and nothing comes back: every sync now waits its 10 s

      long start = System.nanoTime();
      Permit a = llm.tryAcquire().orElseThrow();
      assertThat(llm.call(() -> "ran")).isEqualTo("ran");
      Permit b = llm.tryAcquire().orElseThrow();
      assertThat(llm.tryAcquire()).as("both slots of the lease taken").isEmpty();
      assertThat(elapsed(start)).as("three tryAcquire and a call").isLessThan(bound);

      start = System.nanoTime();
      BulkheadFullException timedOut =
          catchThrowableOfType(() -> llm.call(() -> "never"), BulkheadFullException.class);
      assertThat(timedOut.reason()).isEqualTo(Reason.WAIT_TIMEOUT);
      assertThat(elapsed(start)).as("call waits at most its maxWait").isLessThan(bound);

      start = System.nanoTime();
      CompletableFuture<String> submitted =
          llm.submit(() -> CompletableFuture.completedFuture("never"));
      assertThat(elapsed(start)).as("submit returns at once").isLessThan(bound);
      assertThat(submitted).isNotDone();
      Throwable failure =
          catchThrowableOfType(
                  () -> submitted.get(bound.toMillis(), TimeUnit.MILLISECONDS),
                  ExecutionException.class)
              .getCause();
      assertThat(((BulkheadFullException) failure).reason()).isEqualTo(Reason.WAIT_TIMEOUT);
      assertThat(elapsed(start)).as("its rejection comes after its maxWait").isLessThan(bound);

      a.close();
      b.close();
      assertThat(llm.fleetStats().inFallback()).as("the lease covers 8 s").isFalse();
      proxy.heal();
    }
  }

  @Test
  void idleProcessesGiveTheirSlotsToOneWithDemandWithoutWaitingForATick() throws Exception {
    String name = "rebalance-" + UUID.randomUUID();
    Duration interval = Duration.ofMillis(500);
    List<RedisCompartments> fleets = new ArrayList<>();
    try {
      List<FleetBulkhead> members = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        RedisCompartments fleet =
            RedisCompartments.settings()
                .leaseTtl(Duration.ofSeconds(10))
                .rebalanceInterval(interval)
                .connect(REDIS);
        fleets.add(fleet);
        members.add(fleet.builder(name).limit(9).maxCallDuration(CALL).build());
      }
      // Idle, the three spread the limit among them: each holds some, together at most 9.
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> members.stream().allMatch(m -> m.fleetStats().leaseSlots() == 3));
      // From here no periodic sync runs: whatever moves the slots is a sync that a call, an
      // announcement or an owed give-back asked for, so the rebalance is bounded by rounds, not by
      // the interval (were a tick needed, the slots would never come and the wait below would
      // fail).
      long[] syncsBefore = new long[3];
      for (int i = 0; i < 3; i++) {
        ((RedisBulkhead) members.get(i)).holdPeriodicSyncs();
        syncsBefore[i] = ((RedisBulkhead) members.get(i)).syncsAnswered();
      }

      FleetBulkhead busy = members.get(2);
      List<Permit> held = new ArrayList<>();
      long start = System.nanoTime();
      long[] firstFromOthers = {0};
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(5))
          .until(
              () -> {
                busy.tryAcquire().ifPresent(held::add);
                if (held.size() > 3 && firstFromOthers[0] == 0) {
                  firstFromOthers[0] = System.nanoTime(); // a slot the idle ones held
                }
                return held.size() == 9;
              });
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      long[] rounds = new long[3];
      for (int i = 0; i < 3; i++) {
        rounds[i] = ((RedisBulkhead) members.get(i)).syncsAnswered() - syncsBefore[i];
      }
      System.out.println(
          "with no periodic sync, a process with new demand got its first slot from the idle ones"
              + " after "
              + TimeUnit.NANOSECONDS.toMillis(firstFromOthers[0] - start)
              + " ms and held the whole limit of 9 after "
              + millis
              + " ms, in "
              + rounds[2]
              + " syncs of its own and "
              + rounds[0]
              + " and "
              + rounds[1]
              + " of the idle ones (rebalance interval "
              + interval.toMillis()
              + " ms; load average "
              + loadAverage()
              + ")");
      assertThat(rounds[0])
          .as("an idle process learns the lower cap, then gives back")
          .isGreaterThanOrEqualTo(2);
      assertThat(busy.tryAcquire()).as("the limit").isEmpty();
      assertThat(members.get(0).tryAcquire()).as("the others gave everything").isEmpty();
      assertThat(members.get(1).tryAcquire()).as("the others gave everything").isEmpty();
      assertThat(FleetWaitTest.slotsInRedis(name)).isLessThanOrEqualTo(9);
      held.forEach(Permit::close);
    } finally {
      fleets.forEach(RedisCompartments::close);
    }
  }

  @Test
  void aProcessThatJoinsAnIdleFleetGetsItsShareWithoutWaitingForATick() throws Exception {
    String name = "join-" + UUID.randomUUID();
    List<RedisCompartments> fleets = new ArrayList<>();
    try {
      List<FleetBulkhead> members = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        RedisCompartments fleet =
            RedisCompartments.settings()
                .leaseTtl(Duration.ofSeconds(10))
                .rebalanceInterval(Duration.ofMillis(500))
                .connect(REDIS);
        fleets.add(fleet);
      }
      for (int i = 0; i < 2; i++) {
        members.add(fleets.get(i).builder(name).limit(9).maxCallDuration(CALL).build());
      }
      // Idle, the first two hold the whole limit between them.
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> members.stream().mapToInt(m -> m.fleetStats().leaseSlots()).sum() == 9);
      for (FleetBulkhead m : members) {
        ((RedisBulkhead) m).holdPeriodicSyncs();
      }
      // The third joins and makes no call: only the announcement of its join can move the slots
      // (its own periodic syncs are held too, and the others' were before it joined).
      FleetBulkhead newcomer = fleets.get(2).builder(name).limit(9).maxCallDuration(CALL).build();
      ((RedisBulkhead) newcomer).holdPeriodicSyncs();
      members.add(newcomer);
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(5))
          .until(() -> newcomer.fleetStats().leaseSlots() == 3);
      assertThat(members.stream().mapToInt(m -> m.fleetStats().leaseSlots()).sum())
          .isLessThanOrEqualTo(9);
      assertThat(FleetWaitTest.slotsInRedis(name)).isLessThanOrEqualTo(9);
      List<Permit> held = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        held.add(newcomer.tryAcquire().orElseThrow());
      }
      held.forEach(Permit::close);
    } finally {
      fleets.forEach(RedisCompartments::close);
    }
  }

  private static String loadAverage() {
    try {
      return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim();
    } catch (java.io.IOException e) {
      return "unknown";
    }
  }

  @Test
  void threeProcessesThatRebalanceUnderLoadNeverRunMoreThanTheLimit() throws Exception {
    String name = "under-load-" + UUID.randomUUID();
    int limit = 5;
    AtomicInteger running = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    AtomicInteger calls = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    List<RedisCompartments> fleets = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        RedisCompartments fleet =
            RedisCompartments.settings()
                .leaseTtl(Duration.ofSeconds(10))
                .rebalanceInterval(Duration.ofMillis(50))
                .connect(REDIS);
        fleets.add(fleet);
        FleetBulkhead member =
            fleet
                .builder(name)
                .limit(limit)
                .maxQueue(4)
                .maxWait(Duration.ofMillis(50))
                .maxCallDuration(CALL)
                .build();
        // Uneven load, so that slots move: 1, 2 and 4 threads, each a call of about a millisecond.
        for (int t = 0; t < (1 << i); t++) {
          Thread worker =
              new Thread(
                  () -> {
                    while (!stop.get()) {
                      try {
                        member.call(
                            () -> {
                              int now = running.incrementAndGet();
                              most.accumulateAndGet(now, Math::max);
                              Thread.sleep(1); // the dependency's service time
                              running.decrementAndGet();
                              return calls.incrementAndGet();
                            });
                      } catch (BulkheadFullException e) {
                        // refused: the fleet is full
                      } catch (Exception e) {
                        throw new IllegalStateException(e);
                      }
                    }
                  });
          worker.start();
          threads.add(worker);
        }
      }
      await().atMost(Duration.ofSeconds(60)).until(() -> calls.get() >= 2_000);
    } finally {
      stop.set(true);
      for (Thread t : threads) {
        t.join();
      }
      fleets.forEach(RedisCompartments::close);
    }
    System.out.println(
        "three processes, limit "
            + limit
            + ": at most "
            + most
            + " ran at once, "
            + calls
            + " calls");
    assertThat(most.get()).isLessThanOrEqualTo(limit).isPositive();
  }

  @Test
  void aCallGetsTheFencingTokenOfItsGrantAndLaterGrantsHaveHigherOnes() throws Exception {
    String name = "fence-" + UUID.randomUUID();
    try (RedisCompartments first =
            RedisCompartments.settings().rebalanceInterval(Duration.ofMillis(100)).connect(REDIS);
        RedisCompartments second =
            RedisCompartments.settings().rebalanceInterval(Duration.ofMillis(100)).connect(REDIS)) {
      FleetBulkhead one = first.builder(name).limit(1).maxCallDuration(CALL).build();
      long token = one.callFenced(t -> t);
      assertThat(token).isPositive();
      FleetPermit permit = one.acquire();
      assertThat(permit.fencingToken()).isEqualTo(token);
      permit.close();

      // The slot moves to another process: its grant carries a higher token.
      FleetBulkhead two = second.builder(name).limit(1).maxCallDuration(CALL).build();
      AtomicReference<Permit> taken = new AtomicReference<>();
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(10))
          .until(
              () -> {
                two.tryAcquire().ifPresent(taken::set);
                return taken.get() != null;
              });
      assertThat(((FleetPermit) taken.get()).fencingToken()).isGreaterThan(token);
      taken.get().close();
    }
  }

  @Test
  void aPermitClosedOnSeveralThreadsAtOnceGivesItsTwoSlotsBackOnce() throws Exception {
    String name = "closes-" + UUID.randomUUID();
    int closers = 4;
    ExecutorService pool = Executors.newFixedThreadPool(closers);
    try (RedisCompartments fleet = RedisCompartments.connect(REDIS)) {
      FleetBulkhead two = fleet.builder(name).limit(2).maxCallDuration(CALL).build();
      for (int round = 0; round < 200; round++) {
        FleetPermit permit = two.acquire(); // admitted at once: the gate's slot without an object
        CyclicBarrier together = new CyclicBarrier(closers);
        List<Future<?>> closes = new ArrayList<>();
        for (int i = 0; i < closers; i++) {
          closes.add(
              pool.submit(
                  () -> {
                    together.await();
                    permit.close();
                    return null;
                  }));
        }
        for (Future<?> close : closes) {
          close.get(10, TimeUnit.SECONDS);
        }
        assertThat(permit.isClosed()).isTrue();
        // Each slot given back once: neither counts a call any more (a second give-back of the
        // lease's would wrap its count below zero).
        assertThat(two.fleetStats().leaseInUse()).as("round %d", round).isZero();
        assertThat(two.stats().inFlight()).as("round %d", round).isZero();
        // A slot given back twice would let a third permit in; one never given back, only one.
        Optional<Permit> a = two.tryAcquire();
        Optional<Permit> b = two.tryAcquire();
        Optional<Permit> c = two.tryAcquire();
        assertThat(a).as("round %d", round).isPresent();
        assertThat(b).as("round %d", round).isPresent();
        assertThat(c).as("round %d: the limit is 2", round).isEmpty();
        a.get().close();
        b.get().close();
      }
      assertThat(two.stats().completed()).isEqualTo(200 * 3);
      assertThat(two.stats().inFlight()).isZero();
    } finally {
      pool.shutdownNow();
    }
  }

  private static Duration elapsed(long since) {
    return Duration.ofNanos(System.nanoTime() - since);
  }
}
