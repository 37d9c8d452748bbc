package io.bulkhead.config;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How much of one budget the file's compartments take: their limits, in file order, against the
 * capacity. This class is immutable.
 */
public final class BudgetUse {

  private final BudgetSpec budget;
  private final Map<String, Integer> shares;
  private final long allocated;

  BudgetUse(BudgetSpec budget, LinkedHashMap<String, Integer> shares) {
    this.budget = budget;
    this.shares = Collections.unmodifiableMap(new LinkedHashMap<>(shares));
    long sum = 0;
    for (int v : shares.values()) {
      sum += v;
    }
    this.allocated = sum;
  }

  public BudgetSpec budget() {
    return budget;
  }

  /** Compartment name to limit, in the order the file declares them. */
  public Map<String, Integer> shares() {
    return shares;
  }

  /** The sum of the limits. */
  public long allocated() {
    return allocated;
  }

  /** Whether the limits add up to more than the capacity. */
  public boolean overSubscribed() {
    return allocated > budget.capacity();
  }

  /**
   * One line, in the form {@link io.bulkhead.Budget} uses for its own error: every compartment with
   * its limit, and the total against the capacity. For example {@code budget 'postgres': checkout 6
   * + reports 4 = 10, within its capacity of 10}, or {@code budget 'postgres' is over-subscribed:
   * checkout 6 + reports 6 = 12, more than its capacity of 10}.
   */
  public String describe() {
    StringBuilder sb = new StringBuilder("budget '").append(budget.name()).append('\'');
    sb.append(overSubscribed() ? " is over-subscribed: " : ": ");
    if (shares.isEmpty()) {
      sb.append("no compartment draws on it");
    } else {
      boolean first = true;
      for (Map.Entry<String, Integer> e : shares.entrySet()) {
        if (!first) {
          sb.append(" + ");
        }
        first = false;
        sb.append(e.getKey()).append(' ').append(e.getValue());
      }
      sb.append(" = ").append(allocated);
    }
    sb.append(overSubscribed() ? ", more than its capacity of " : ", within its capacity of ")
        .append(budget.capacity());
    return sb.toString();
  }

  @Override
  public String toString() {
    return describe();
  }
}
