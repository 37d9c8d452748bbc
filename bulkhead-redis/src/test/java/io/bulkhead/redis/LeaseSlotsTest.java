package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The in-memory lease on its own: its modes, its clock check and its invariants (M1 to M4). */
class LeaseSlotsTest {

  private static final long FUTURE = TimeUnit.HOURS.toNanos(1);

  @Test
  void startsInFallbackWithItsShareAndAGrantLeasesThatMany() {
    LeaseSlots slots = new LeaseSlots(1);
    assertThat(slots.tryTake()).isEqualTo(LeaseSlots.FALLBACK);
    assertThat(slots.tryTake()).as("the share of 1").isEqualTo(LeaseSlots.NONE);

    assertThat(slots.grant(3, System.nanoTime() + FUTURE, 42)).as("left FALLBACK").isTrue();
    assertThat(slots.fencingToken()).isEqualTo(42);
    assertThat(slots.tryTake()).as("the fallback call still counts").isEqualTo(LeaseSlots.LEASED);
    assertThat(slots.tryTake()).isEqualTo(LeaseSlots.LEASED);
    assertThat(slots.tryTake()).isEqualTo(LeaseSlots.NONE);
    slots.giveBack();
    assertThat(slots.tryTake()).isEqualTo(LeaseSlots.LEASED);
    assertThat(slots.grant(3, System.nanoTime() + FUTURE, 0)).as("already LEASED").isFalse();
    assertThat(slots.fencingToken()).as("0 keeps the token").isEqualTo(42);
  }

  @Test
  void aSlotTakenAfterTheLeaseStoppedAdmittingIsGivenBackAtOnce() {
    LeaseSlots slots = new LeaseSlots(0);
    slots.grant(2, System.nanoTime() - 1, 1); // answered, but too long ago to cover a call
    assertThat(slots.tryTake()).isEqualTo(LeaseSlots.NONE);
    assertThat(LeaseSlots.inUse(slots.word())).as("M3: never used").isZero();
    assertThat(slots.coversFromNow()).isFalse();
  }

  @Test
  void aLoweringGrantLetsTheCallsAboveItDrainAndAdmitsNoneUntilThen() {
    LeaseSlots slots = new LeaseSlots(0);
    slots.grant(5, System.nanoTime() + FUTURE, 1);
    for (int i = 0; i < 4; i++) {
      slots.tryTake();
    }
    slots.grant(2, System.nanoTime() + FUTURE, 0); // another process wants more: the target fell
    assertThat(LeaseSlots.cap(slots.word())).isEqualTo(2);
    assertThat(slots.tryTake()).as("4 run above a cap of 2").isEqualTo(LeaseSlots.NONE);
    slots.giveBack();
    slots.giveBack();
    assertThat(slots.tryTake()).as("still 2 run").isEqualTo(LeaseSlots.NONE);
    slots.giveBack();
    assertThat(slots.tryTake()).isEqualTo(LeaseSlots.LEASED);
    assertThat(LeaseSlots.inFallback(new LeaseSlots(3).word())).isTrue();
  }

  @Test
  void aLapseSwitchesToTheShareCountingTheCallsStillRunning() {
    LeaseSlots slots = new LeaseSlots(2);
    slots.grant(4, System.nanoTime() + TimeUnit.SECONDS.toNanos(2), 7);
    for (int i = 0; i < 3; i++) {
      assertThat(slots.tryTake()).isEqualTo(LeaseSlots.LEASED);
    }
    slots.grant(4, System.nanoTime() - 1, 0); // an older send time never moves admitUntil back
    assertThat(slots.coversFromNow()).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> slots.lapseIfDue(2)); // once 2 s passed
    assertThat(slots.lapseIfDue(2)).as("once").isFalse();
    assertThat(LeaseSlots.inFallback(slots.word())).isTrue();
    assertThat(slots.tryTake()).as("M4: the share of 2 counts the 3 still running").isEqualTo(0);
    slots.giveBack();
    slots.giveBack();
    assertThat(slots.tryTake()).isEqualTo(LeaseSlots.FALLBACK);
    assertThat(slots.tryTake()).as("the share of 2").isEqualTo(LeaseSlots.NONE);
    assertThat(slots.grant(4, System.nanoTime() + FUTURE, 0)).as("a sync ends it").isTrue();
    assertThat(slots.close()).as("the calls running when it closes").isEqualTo(2);
    slots.giveBack();
    assertThat(slots.tryTake()).as("closed: nothing more").isEqualTo(LeaseSlots.NONE);
  }

  @Test
  void demandIsThePeakOfTwoIntervalsPlusTheCallsThatFoundNoSlot() {
    LeaseSlots slots = new LeaseSlots(0);
    slots.grant(10, System.nanoTime() + FUTURE, 1);
    for (int i = 0; i < 4; i++) {
      slots.tryTake();
    }
    for (int i = 0; i < 4; i++) {
      slots.giveBack();
    }
    slots.noteUnmet();
    assertThat(slots.sampleWant(10, 0)).isEqualTo(5);
    assertThat(slots.sampleWant(10, 0)).as("the last interval's peak").isEqualTo(4);
    assertThat(slots.sampleWant(10, 0)).as("two intervals idle").isZero();
    slots.noteWaiting(3);
    assertThat(slots.sampleWant(10, 0)).isEqualTo(3);
    for (int i = 0; i < 20; i++) {
      slots.noteUnmet();
    }
    assertThat(slots.sampleWant(10, 0)).as("at most the limit").isEqualTo(10);
  }

  /**
   * M1 under contention: takers race a thread that lowers the cap as a sync does. After each
   * lowering returns what the sync would report as kept, no number of calls running that anyone can
   * observe exceeds it, until the next grant. A take that checked the cap and the count apart would
   * break it.
   */
  @Test
  void noTakeExceedsWhatALoweringReported() throws Exception {
    LeaseSlots slots = new LeaseSlots(0);
    slots.grant(64, System.nanoTime() + FUTURE, 1);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger keep = new AtomicInteger(64);
    AtomicInteger violations = new AtomicInteger();
    int takers = 3;
    CountDownLatch started = new CountDownLatch(takers);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < takers; t++) {
      Thread taker =
          new Thread(
              () -> {
                started.countDown();
                while (!stop.get()) {
                  if (slots.tryTake() == LeaseSlots.LEASED) {
                    int reported = keep.get(); // read before the count it bounds
                    if (LeaseSlots.inUse(slots.word()) > reported) {
                      violations.incrementAndGet();
                    }
                    slots.giveBack();
                  }
                }
              });
      taker.start();
      threads.add(taker);
    }
    started.await();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int round = 0; round < 5_000; round++) {
      int lowered = random.nextInt(0, 2);
      slots.grant(lowered, System.nanoTime() + FUTURE, 0);
      long w = slots.word(); // what runs now includes every call taken before the lowering landed
      keep.set(Math.max(LeaseSlots.inUse(w), lowered));
      for (int spin = 0; spin < 1_000; spin++) {
        Thread.onSpinWait(); // the sync's round trip, while the takers go on
      }
      keep.set(64); // raised only after the grant lands, as Redis records it first
      slots.grant(64, System.nanoTime() + FUTURE, 0);
    }
    stop.set(true);
    for (Thread t : threads) {
      t.join();
    }
    assertThat(violations).hasValue(0);
    assertThat(LeaseSlots.inUse(slots.word())).as("every slot given back").isZero();
  }
}
