package io.bulkhead.config;

/**
 * A budget as the file declares it: a named, finite resource ("postgres" with 10 connections) that
 * compartments draw on. This class is immutable.
 */
public final class BudgetSpec {

  private final String name;
  private final int capacity;
  private final int line;

  BudgetSpec(String name, int capacity, int line) {
    this.name = name;
    this.capacity = capacity;
    this.line = line;
  }

  public String name() {
    return name;
  }

  /** How many units the real resource has: connections, concurrent calls. */
  public int capacity() {
    return capacity;
  }

  /** The line of the file where the budget is declared. */
  public int line() {
    return line;
  }

  @Override
  public String toString() {
    return "BudgetSpec{name=" + name + ", capacity=" + capacity + "}";
  }
}
