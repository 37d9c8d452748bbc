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
  private static final int NONE = 0;
  private static final int LEASED = 1;
  private static final int FALLBACK = 2;

  /** Takes a slot: the mode it was taken in, or NONE. */
  private static int take(LeaseSlots slots) {
    Integer kind = slots.tryTake((leased, at) -> leased ? LEASED : FALLBACK);
    return kind == null ? NONE : kind;
  }

  @Test
  void startsInFallbackWithItsShareAndAGrantLeasesThatMany() {
    LeaseSlots slots = new LeaseSlots(1);
    assertThat(take(slots)).isEqualTo(FALLBACK);
    assertThat(take(slots)).as("the share of 1").isEqualTo(NONE);

    assertThat(slots.grant(3, System.nanoTime() + FUTURE, 42)).as("left FALLBACK").isTrue();
    assertThat(slots.fencingToken()).isEqualTo(42);
    assertThat(take(slots)).as("the fallback call still counts").isEqualTo(LEASED);
    assertThat(take(slots)).isEqualTo(LEASED);
    assertThat(take(slots)).isEqualTo(NONE);
    slots.giveBack();
    assertThat(take(slots)).isEqualTo(LEASED);
    assertThat(slots.grant(3, System.nanoTime() + FUTURE, 0)).as("already LEASED").isFalse();
    assertThat(slots.fencingToken()).as("0 keeps the token").isEqualTo(42);
  }

  @Test
  void aSlotTakenAfterTheLeaseStoppedAdmittingIsGivenBackAtOnce() {
    LeaseSlots slots = new LeaseSlots(0);
    slots.grant(2, System.nanoTime() - 1, 1); // answered, but too long ago to cover a call
    assertThat(take(slots)).isEqualTo(NONE);
    assertThat(LeaseSlots.inUse(slots.word())).as("M3: never used").isZero();
    assertThat(slots.coversFromNow()).isFalse();
  }

  @Test
  void aLoweringGrantLetsTheCallsAboveItDrainAndAdmitsNoneUntilThen() {
    LeaseSlots slots = new LeaseSlots(0);
    slots.grant(5, System.nanoTime() + FUTURE, 1);
    for (int i = 0; i < 4; i++) {
      take(slots);
    }
    slots.grant(2, System.nanoTime() + FUTURE, 0); // another process wants more: the target fell
    assertThat(LeaseSlots.cap(slots.word())).isEqualTo(2);
    assertThat(take(slots)).as("4 run above a cap of 2").isEqualTo(NONE);
    slots.giveBack();
    slots.giveBack();
    assertThat(take(slots)).as("still 2 run").isEqualTo(NONE);
    slots.giveBack();
    assertThat(take(slots)).isEqualTo(LEASED);
    assertThat(LeaseSlots.inFallback(new LeaseSlots(3).word())).isTrue();
  }

  @Test
  void aLapseSwitchesToTheShareCountingTheCallsStillRunning() {
    LeaseSlots slots = new LeaseSlots(2);
    slots.grant(4, System.nanoTime() + TimeUnit.SECONDS.toNanos(2), 7);
    for (int i = 0; i < 3; i++) {
      assertThat(take(slots)).isEqualTo(LEASED);
    }
    slots.grant(4, System.nanoTime() - 1, 0); // an older send time never moves admitUntil back
    assertThat(slots.coversFromNow()).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> slots.lapseIfDue(2)); // once 2 s passed
    assertThat(slots.lapseIfDue(2)).as("once").isFalse();
    assertThat(LeaseSlots.inFallback(slots.word())).isTrue();
    assertThat(take(slots)).as("M4: the share of 2 counts the 3 still running").isEqualTo(NONE);
    slots.giveBack();
    slots.giveBack();
    assertThat(take(slots)).isEqualTo(FALLBACK);
    assertThat(take(slots)).as("the share of 2").isEqualTo(NONE);
    assertThat(slots.grant(4, System.nanoTime() + FUTURE, 0)).as("a sync ends it").isTrue();
    assertThat(slots.close()).as("the calls running when it closes").isEqualTo(2);
    slots.giveBack();
    assertThat(take(slots)).as("closed: nothing more").isEqualTo(NONE);
  }

  @Test
  void demandIsThePeakOfTwoIntervalsPlusTheCallsThatFoundNoSlot() {
    LeaseSlots slots = new LeaseSlots(0);
    slots.grant(10, System.nanoTime() + FUTURE, 1);
    for (int i = 0; i < 4; i++) {
      take(slots);
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
                  if (take(slots) == LEASED) {
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
