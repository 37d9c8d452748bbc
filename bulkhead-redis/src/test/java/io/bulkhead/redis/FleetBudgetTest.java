package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Members of one fleet budget in this JVM, each with its own connection to the Redis on
 * 127.0.0.1:6379, joining and leaving. Every member's listener reports the share it applied to a
 * ledger that checks, at each change, that the applied shares add up to at most the capacity. That
 * holds while every heartbeat comes within a TTL of the one before; a member paused longer (a whole
 * JVM stalled on a starved host: the first member to beat afterwards finds the others expired) may
 * be counted dead while it holds its share, the documented worst case, which that member counts as
 * a late heartbeat. The ledger's sum is checked unless a late heartbeat explains it.
 */
class FleetBudgetTest {

  private static final String REDIS = "redis://127.0.0.1:6379";
  private static final int CAPACITY = 10;
  private static final Duration TTL = Duration.ofMillis(900);
  private static final Duration SETTLES = Duration.ofSeconds(15);

  private final String name = "budget-" + UUID.randomUUID();
  private final List<FleetBudget> members = new ArrayList<>();
  private final List<FleetBudget> everyMember = new ArrayList<>();
  private final Ledger ledger = new Ledger();

  /** The shares the members' listeners applied, checked at every change. */
  private static final class Ledger {
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Integer> applied = new HashMap<>();
    private final List<String> violations = new ArrayList<>();
    private int maxSum;
    private int changes;

    void applied(FleetBudget member, int share) {
      lock.lock();
      try {
        applied.put(member.memberId(), share);
        int sum = applied.values().stream().mapToInt(Integer::intValue).sum();
        maxSum = Math.max(maxSum, sum);
        changes++;
        if (sum > CAPACITY) {
          violations.add("shares " + applied + " add up to " + sum);
        }
      } finally {
        lock.unlock();
      }
    }

    void left(FleetBudget member) {
      lock.lock();
      try {
        applied.remove(member.memberId());
      } finally {
        lock.unlock();
      }
    }
  }

  private FleetBudget join() {
    FleetBudget member = FleetBudget.builder(name).capacity(CAPACITY).ttl(TTL).join(REDIS);
    members.add(member);
    everyMember.add(member);
    ledger.applied(member, member.share()); // joined at this share, before any listener could run
    member.addListener((budget, before, share) -> ledger.applied(budget, share));
    return member;
  }

  /**
   * Checks the ledger: the applied shares never added up to more than the capacity, unless a
   * heartbeat came later than the TTL (then the sum is printed, not checked).
   */
  private void assertWithinCapacity() {
    long late = everyMember.stream().mapToLong(FleetBudget::lateHeartbeats).sum();
    if (late == 0) {
      assertThat(ledger.violations).isEmpty();
      assertThat(ledger.maxSum).isLessThanOrEqualTo(CAPACITY);
    } else {
      System.out.println(
          "fleet budget: "
              + late
              + " heartbeat(s) came more than the TTL of "
              + TTL.toMillis()
              + " ms after the one before (load on this host); the applied shares added up to at"
              + " most "
              + ledger.maxSum
              + ": "
              + ledger.violations);
    }
  }

  @AfterEach
  void closeAll() {
    members.forEach(FleetBudget::close);
  }

  @Test
  void sharesFollowJoinsAndLeavesAndNeverAddUpToMoreThanTheCapacity() throws Exception {
    FleetBudget a = join();
    assertThat(a.reachable()).isTrue();
    assertThat(a.share()).as("no growth in the heartbeat that registers a member").isZero();
    assertThat(a.awaitShare(CAPACITY, SETTLES)).as("alone, it has everything").isEqualTo(CAPACITY);

    FleetBudget b = join();
    assertThat(b.awaitShare(5, SETTLES)).isEqualTo(5);
    await().atMost(SETTLES).until(a::share, s -> s == 5);

    FleetBudget c = join();
    assertThat(c.awaitShare(3, SETTLES)).isGreaterThanOrEqualTo(3);
    // floor(10 / 3) = 3 each, and the remainder of 1 to the member that joined first
    await()
        .atMost(SETTLES)
        .until(
            () -> List.of(a.share(), b.share(), c.share()),
            shares -> shares.equals(List.of(4, 3, 3)));
    assertThat(a.liveMembers()).isEqualTo(3);

    b.close(); // leaves at once
    members.remove(b);
    ledger.left(b);
    await().atMost(SETTLES).until(() -> a.share() + c.share(), sum -> sum == CAPACITY);
    assertThat(a.share()).isEqualTo(5);
    assertThat(c.share()).isEqualTo(5);

    assertWithinCapacity();
    assertThat(ledger.maxSum).isGreaterThanOrEqualTo(CAPACITY);
    System.out.println(
        "fleet budget: "
            + ledger.changes
            + " share changes, applied shares added up"
            + " to at most "
            + ledger.maxSum
            + " of "
            + CAPACITY);
  }

  @Test
  void theShareOfAMemberThatStopsHeartbeatingReturnsAfterItsTtl() throws Exception {
    FleetBudget a = join();
    FleetBudget b = join();
    FleetBudget c = join();
    await()
        .atMost(SETTLES)
        .until(
            () -> List.of(a.share(), b.share(), c.share()),
            shares -> shares.stream().allMatch(s -> s >= 3));

    long stopped = System.nanoTime();
    c.abandon(); // as a process that dies: no goodbye, its entry stays until its heartbeat expires
    members.remove(c);
    ledger.left(c); // a dead process holds nothing
    await().atMost(SETTLES).until(() -> a.share() + b.share(), sum -> sum == CAPACITY);
    long tookMillis = Duration.ofNanos(System.nanoTime() - stopped).toMillis();
    assertThat(a.liveMembers()).isEqualTo(2);
    assertWithinCapacity();
    System.out.println(
        "fleet budget: the share of a member that stopped heartbeating came back in "
            + tookMillis
            + " ms (TTL "
            + TTL.toMillis()
            + " ms, heartbeats every "
            + TTL.toMillis() / 3
            + " ms)");
  }

  @Test
  void aShrinkAListenerCouldNotApplyIsNotReportedSoNobodyGrowsIntoIt() throws Exception {
    FleetBudget a = FleetBudget.builder(name).capacity(4).ttl(TTL).join(REDIS);
    members.add(a);
    assertThat(a.awaitShare(4, SETTLES)).isEqualTo(4);
    AtomicBoolean canShrink = new AtomicBoolean();
    CountDownLatch retried = new CountDownLatch(3);
    a.addListener(
        (budget, before, share) -> {
          if (share < before && !canShrink.get()) {
            retried.countDown();
            throw new IllegalStateException("cannot go below " + before); // as pools at one each
          }
        });
    FleetBudget b = FleetBudget.builder(name).capacity(4).ttl(TTL).join(REDIS);
    members.add(b);
    // a is told 2 at every heartbeat and fails each time; meanwhile b's heartbeats find a's 4 held.
    assertThat(retried.await(SETTLES.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(b.share()).as("b, while a still holds 4").isZero();
    canShrink.set(true);
    assertThat(b.awaitShare(2, SETTLES)).isEqualTo(2);
    assertThat(a.share()).isEqualTo(2);
  }

  @Test
  void membersBeyondCapacityOverMinimumAreParkedAtOnceUntilOneLeaves() throws Exception {
    FleetBudget a = FleetBudget.builder(name).capacity(5).minimumShare(2).ttl(TTL).join(REDIS);
    members.add(a);
    assertThat(a.awaitShare(5, SETTLES)).isEqualTo(5);
    FleetBudget b = FleetBudget.builder(name).capacity(5).minimumShare(2).ttl(TTL).join(REDIS);
    members.add(b);
    assertThat(b.awaitShare(2, SETTLES)).isEqualTo(2);
    FleetBudget c = FleetBudget.builder(name).capacity(5).minimumShare(2).ttl(TTL).join(REDIS);
    members.add(c);
    // 5 serves two members of at least 2: c, the last to join, is parked and told so at once.
    assertThat(c.awaitShare(2, Duration.ofDays(1))).isZero();
    assertThat(c.parked()).isTrue();
    assertThat(c.toString()).contains("parked");
    await()
        .atMost(SETTLES)
        .until(() -> List.of(a.share(), b.share()), s -> s.equals(List.of(3, 2)));
    assertThat(c.share()).isZero();

    a.close(); // room for c: b (joined first) gets the remainder
    members.remove(a);
    await().atMost(SETTLES).until(() -> !c.parked()); // its next heartbeat serves it
    assertThat(c.awaitShare(2, SETTLES)).isEqualTo(2);
    await()
        .atMost(SETTLES)
        .until(() -> List.of(b.share(), c.share()), s -> s.equals(List.of(3, 2)));
  }

  @Test
  void aMemberWithAnotherCapacityIsRefusedWithOneClearLine() {
    join();
    assertThatThrownBy(() -> FleetBudget.builder(name).capacity(CAPACITY + 1).ttl(TTL).join(REDIS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "fleet budget '"
                + name
                + "' has capacity 11 and minimum share 1 here but 10 and 1 in the 1 other live"
                + " instance(s): give every instance the same capacity and minimum share");
  }

  @Test
  void anUnreachableRedisNeverFailsStartUpAndKeepsTheStartingShare() {
    FleetBudget alone =
        FleetBudget.builder(name)
            .capacity(CAPACITY)
            .startingShare(2)
            .ttl(TTL)
            .connectTimeout(Duration.ofMillis(300))
            .join("redis://127.0.0.1:1");
    members.add(alone);
    assertThat(alone.reachable()).isFalse();
    assertThat(alone.share()).isEqualTo(2);
  }

  @Test
  void badInputIsRefusedNamingTheField() {
    assertThatThrownBy(() -> FleetBudget.builder(name).capacity(0))
        .hasMessage("capacity of fleet budget '" + name + "' must be at least 1 but was 0");
    assertThatThrownBy(() -> FleetBudget.builder(name).join(REDIS))
        .hasMessage("capacity of fleet budget '" + name + "' was not set: call capacity(int)");
    assertThatThrownBy(() -> FleetBudget.builder(name).minimumShare(0))
        .hasMessage("minimumShare of fleet budget '" + name + "' must be at least 1 but was 0");
    assertThatThrownBy(() -> FleetBudget.builder(name).capacity(3).minimumShare(4).join(REDIS))
        .hasMessage(
            "minimumShare of fleet budget '" + name + "' is 4, more than its capacity of 3");
    assertThatThrownBy(() -> FleetBudget.builder(name).ttl(Duration.ofMillis(10)))
        .hasMessageStartingWith("ttl of fleet budget '" + name + "' must be at least 300 ms");
    assertThatThrownBy(() -> FleetBudget.builder(name).capacity(3).join("http://nowhere"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("uri is not a Redis URI");
  }
}
