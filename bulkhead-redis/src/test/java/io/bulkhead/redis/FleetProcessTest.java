package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Permit;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Several real JVMs on one compartment of the Redis on 127.0.0.1:6379. */
class FleetProcessTest {

  private static final String REDIS = "redis://127.0.0.1:6379";
  private static final long TTL_MILLIS = 1500;
  private static final Duration POLL = Duration.ofMillis(100);

  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void killLeftovers() throws InterruptedException {
    for (Process p : processes) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void threeProcessesNeverSendMoreThanTheLimitToTheDependency() throws Exception {
    String name = "fleet-" + UUID.randomUUID();
    int threads = 8;
    int calls = 40;
    try (CountingDependency dependency = new CountingDependency(5)) {
      List<BlockingQueue<String>> outputs = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        outputs.add(
            launch(
                "hammer",
                REDIS,
                name,
                Long.toString(TTL_MILLIS),
                Integer.toString(dependency.port()),
                Integer.toString(threads),
                Integer.toString(calls)));
      }
      long admitted = 0;
      for (BlockingQueue<String> out : outputs) {
        // The bound includes starting three JVMs, which took 50 s on a 2-core host at load 23.
        String done = WorkerJvms.lineStartingWith(out, "DONE ", Duration.ofSeconds(120));
        String[] f = done.split(" ");
        admitted += Long.parseLong(f[1]);
        assertThat(Long.parseLong(f[3])).as("leases still held after the run").isZero();
        assertThat(Long.parseLong(f[4])).as("switches to the fallback share").isZero();
      }
      for (Process p : processes) {
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
      }
      System.out.println(
          "three processes: dependency saw at most "
              + dependency.maxOpen()
              + " concurrent calls; "
              + dependency.served()
              + " served, "
              + admitted
              + " admitted");
      assertThat(dependency.maxOpen()).isLessThanOrEqualTo(FleetWorker.LIMIT).isGreaterThan(1);
      assertThat(dependency.served()).isEqualTo(admitted);
      assertThat(admitted).isPositive();
    }
  }

  @Test
  void slotsOfAProcessKilledWithSigkillComeBackWithinTheLeaseTtl() throws Exception {
    String name = "fleet-" + UUID.randomUUID();
    int heldByVictim = 4;
    BlockingQueue<String> out =
        launch("hold", REDIS, name, Long.toString(TTL_MILLIS), Integer.toString(heldByVictim));
    WorkerJvms.lineStartingWith(out, "HELD ", Duration.ofSeconds(90));
    Process victim = processes.get(0);

    try (RedisCompartments fleet =
        RedisCompartments.settings()
            .leaseTtl(Duration.ofMillis(TTL_MILLIS))
            .pollInterval(POLL)
            .connect(REDIS)) {
      FleetBulkhead here =
          fleet
              .builder(name)
              .limit(FleetWorker.LIMIT)
              .maxQueue(FleetWorker.LIMIT)
              .maxWait(Duration.ofSeconds(20))
              .build();
      List<Permit> mine = new ArrayList<>();
      for (int i = 0; i < FleetWorker.LIMIT - heldByVictim; i++) {
        mine.add(here.tryAcquire().orElseThrow());
      }
      Optional<Permit> beyond = here.tryAcquire();
      assertThat(beyond).as("the victim's slots are taken while it lives").isEmpty();

      long killedAt = System.nanoTime();
      victim.destroyForcibly(); // SIGKILL: no release, no shutdown hook
      assertThat(victim.waitFor(10, TimeUnit.SECONDS)).isTrue();
      for (int i = 0; i < heldByVictim; i++) {
        mine.add(here.acquire()); // waits until the victim's leases expire
      }
      long reclaimMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
      System.out.println(
          "kill -9: the victim's "
              + heldByVictim
              + " slots came back after "
              + reclaimMillis
              + " ms (lease TTL "
              + TTL_MILLIS
              + " ms, poll "
              + POLL.toMillis()
              + " ms)");
      // At most one TTL after its last renewal, plus the poll that notices; a second of slack for a
      // loaded machine.
      assertThat(reclaimMillis).isLessThan(TTL_MILLIS + POLL.toMillis() + 1000);
      assertThat(here.tryAcquire()).as("never more than the limit").isEmpty();
      mine.forEach(Permit::close);
      assertThat(here.fleetStats().leasesHeld()).isZero();
    }
  }

  private BlockingQueue<String> launch(String... args) throws IOException {
    WorkerJvms.Started started = WorkerJvms.start(FleetWorker.class, args);
    processes.add(started.process());
    return started.lines();
  }
}
