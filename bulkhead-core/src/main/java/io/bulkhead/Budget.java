package io.bulkhead;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A named, finite resource that several compartments draw on: "postgres" with 10 connections,
 * "llm-api" with 50 concurrent calls.
 *
 * <p>Compartments whose limits add up to more than the real resource allows are decoration: when
 * all of them fill at once, the resource itself becomes the shared pool they were meant to avoid. A
 * budget makes that mistake impossible to build: each compartment built with {@link
 * BulkheadBuilder#budget(Budget)} reserves its limit, and a reservation that would take the total
 * over the capacity fails with a message listing every compartment, its limit, and the total
 * against the capacity. {@link Bulkhead#setLimit(int)} is checked the same way.
 *
 * <p>This class is thread-safe; reservations are serialised by a lock held only for the arithmetic.
 */
public final class Budget {

  private final String name;
  private final int capacity;
  private final ReentrantLock lock = new ReentrantLock();
  private final LinkedHashMap<String, Integer> shares = new LinkedHashMap<>(); // guarded by lock
  // Adaptive compartments, which lend what they do not use and give back what they borrowed.
  private final LinkedHashMap<String, Member> members = new LinkedHashMap<>(); // guarded by lock
  // What members below their fair share asked for and did not get yet; guarded by lock.
  private final LinkedHashMap<String, Integer> claims = new LinkedHashMap<>();

  /*
   * Adaptive members
   * ----------------
   * An adaptive compartment's share is max(limit, inFlight): when its limit drops below the calls
   * in flight, the share stays until they finish (no call is preempted), so the sum of the calls in
   * flight never exceeds the capacity, whatever the limits do. A member's `min` is in its share
   * from the start and forever (its limit never goes below it), so it can always run `min` calls.
   * Its fair share is min + an equal part of what the mins and the static compartments leave.
   *
   * grant(): a member that wants more than its limit gets what is free at once, except that above
   * its fair share it may not take what the open claims of others need. If that is not enough and
   * it is below its fair share, the shortfall up to its fair share becomes its claim, and every
   * member above its fair share is asked to give back down to it (at most the claim): a borrower
   * gives back first, and cannot take the freed capacity back before the claimant. A claim ends
   * when its member is granted it, wants no more, or leaves. The give-back lowers the
   * borrower's limit now; its share frees as its calls finish and it or the next grant settles it.
   *
   * Locking: the budget's lock is held only for arithmetic; calls into members (settle, giveBack:
   * each takes its compartment's lock, never runs user code) happen after it is released. A
   * compartment may call reserve() while it holds its own lock, never the other way round.
   */

  /** An adaptive compartment as its budget sees it. */
  interface Member {
    int min();

    int limit();

    /** Records max(limit, inFlight) as the share. */
    void settle();

    /** Lowers the limit to {@code limit} (not below min) for another member. */
    void giveBack(int limit, String reason);
  }

  private Budget(String name, int capacity) {
    this.name = name;
    this.capacity = capacity;
  }

  /**
   * Returns a budget of {@code capacity} units.
   *
   * @throws IllegalArgumentException if {@code name} is blank or {@code capacity} is less than 1
   */
  public static Budget of(String name, int capacity) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("budget name must not be blank but was '" + name + "'");
    }
    if (capacity < 1) {
      throw new IllegalArgumentException(
          "capacity of budget '" + name + "' must be at least 1 but was " + capacity);
    }
    return new Budget(name, capacity);
  }

  public String name() {
    return name;
  }

  public int capacity() {
    return capacity;
  }

  /** The sum of the limits of the compartments drawing on this budget. */
  public int allocated() {
    lock.lock();
    try {
      return (int) sum(shares); // at most the capacity: reserve admits no more
    } finally {
      lock.unlock();
    }
  }

  /** A snapshot of compartment name to limit, in the order the compartments joined. */
  public Map<String, Integer> shares() {
    lock.lock();
    try {
      return Collections.unmodifiableMap(new LinkedHashMap<>(shares));
    } finally {
      lock.unlock();
    }
  }

  /**
   * Records that {@code compartment} draws {@code limit} units, or changes what it draws.
   *
   * @throws IllegalArgumentException if the total would exceed the capacity; nothing changes then
   */
  void reserve(String compartment, int limit) {
    lock.lock();
    try {
      LinkedHashMap<String, Integer> next = new LinkedHashMap<>(shares);
      next.put(compartment, limit);
      long total = sum(next);
      if (total > capacity) {
        throw new IllegalArgumentException(overSubscribed(compartment, limit, next, total));
      }
      shares.put(compartment, limit);
    } finally {
      lock.unlock();
    }
  }

  /** Adds a compartment that must not be in the budget yet; {@code member} null if static. */
  void join(String compartment, int limit, Member member) {
    lock.lock();
    try {
      if (shares.containsKey(compartment)) {
        throw new IllegalArgumentException(
            "budget '"
                + name
                + "' already has a compartment named '"
                + compartment
                + "' (limit "
                + shares.get(compartment)
                + ")");
      }
      reserve(compartment, limit);
      if (member != null) {
        members.put(compartment, member);
      }
    } finally {
      lock.unlock();
    }
  }

  /** Returns what {@code compartment} drew, for a compartment that is discarded. */
  void leave(String compartment) {
    lock.lock();
    try {
      shares.remove(compartment);
      members.remove(compartment);
      claims.remove(compartment);
    } finally {
      lock.unlock();
    }
  }

  /**
   * For an adaptive member at {@code current} that wants {@code wanted}: returns the limit it may
   * move to, having reserved it, and asks borrowers to give back when it is below its fair share.
   */
  int grant(String compartment, int current, int wanted) {
    List<Member> others = new ArrayList<>();
    lock.lock();
    try {
      for (Map.Entry<String, Member> e : members.entrySet()) {
        if (!e.getKey().equals(compartment)) {
          others.add(e.getValue());
        }
      }
    } finally {
      lock.unlock();
    }
    for (Member m : others) {
      m.settle(); // shares of calls that have finished come back
    }
    List<Member> lenders = new ArrayList<>();
    List<Integer> giveBackTo = new ArrayList<>();
    int result;
    lock.lock();
    try {
      Integer share = shares.get(compartment);
      if (share == null || wanted <= current) {
        claims.remove(compartment);
        return wanted; // a drop is recorded by the compartment itself
      }
      long fair = fairShare(compartment);
      long free = capacity - sum(shares);
      long claimed = 0;
      for (Map.Entry<String, Integer> c : claims.entrySet()) {
        if (!c.getKey().equals(compartment)) {
          claimed += c.getValue();
        }
      }
      // Up to its fair share, a member takes what is free; above it, only what nobody claims.
      long room = Math.max(share + free - claimed, Math.min(share + free, fair));
      result = (int) Math.max(current, Math.min(wanted, room));
      if (result > share) {
        shares.put(compartment, result);
      }
      long claim = Math.min(wanted - result, fair - result);
      if (claim > 0) {
        claims.put(compartment, (int) claim);
      } else {
        claims.remove(compartment);
      }
      for (Map.Entry<String, Member> e : members.entrySet()) {
        if (claim <= 0) {
          break;
        }
        Member m = e.getValue();
        if (e.getKey().equals(compartment)) {
          continue;
        }
        long above = m.limit() - fairShare(e.getKey());
        if (above > 0) {
          long give = Math.min(claim, above);
          claim -= give;
          lenders.add(m);
          giveBackTo.add((int) (m.limit() - give));
        }
      }
    } finally {
      lock.unlock();
    }
    for (int i = 0; i < lenders.size(); i++) {
      lenders
          .get(i)
          .giveBack(
              giveBackTo.get(i),
              "gave back to '" + compartment + "' its fair share of budget '" + name + "'");
    }
    return result;
  }

  /** min + an equal part of the capacity nobody is guaranteed; under the lock. */
  private long fairShare(String compartment) {
    long spare = capacity;
    for (Map.Entry<String, Integer> e : shares.entrySet()) {
      Member m = members.get(e.getKey());
      spare -= m == null ? e.getValue() : m.min();
    }
    return members.get(compartment).min() + Math.max(0, spare) / Math.max(1, members.size());
  }

  private String overSubscribed(
      String compartment, int limit, Map<String, Integer> proposed, long total) {
    StringBuilder sb = new StringBuilder();
    sb.append("budget '")
        .append(name)
        .append("' is over-subscribed: giving '")
        .append(compartment)
        .append("' a limit of ")
        .append(limit)
        .append(" makes ");
    boolean first = true;
    for (Map.Entry<String, Integer> e : proposed.entrySet()) {
      if (!first) {
        sb.append(" + ");
      }
      first = false;
      sb.append(e.getKey()).append(' ').append(e.getValue());
    }
    sb.append(" = ").append(total).append(", more than its capacity of ").append(capacity);
    return sb.toString();
  }

  /**
   * The exact sum, in a {@code long}: two limits of {@link Integer#MAX_VALUE} must add up to more
   * than a capacity of {@link Integer#MAX_VALUE}, not saturate into fitting it. A {@code long}
   * holds the sum of any number of {@code int}s a map can hold ({@code 2^31} of them at most).
   */
  private static long sum(Map<String, Integer> m) {
    long total = 0;
    for (int v : m.values()) {
      total = Math.addExact(total, v);
    }
    return total;
  }

  @Override
  public String toString() {
    return "Budget{name=" + name + ", capacity=" + capacity + ", allocated=" + allocated() + "}";
  }
}
