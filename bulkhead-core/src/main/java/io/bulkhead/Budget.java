package io.bulkhead;

import java.util.Collections;
import java.util.LinkedHashMap;
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

  /** Adds a compartment that must not be in the budget yet. */
  void join(String compartment, int limit) {
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
    } finally {
      lock.unlock();
    }
  }

  /** Returns what {@code compartment} drew, for a compartment that is discarded. */
  void leave(String compartment) {
    lock.lock();
    try {
      shares.remove(compartment);
    } finally {
      lock.unlock();
    }
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
