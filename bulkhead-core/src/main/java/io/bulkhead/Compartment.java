package io.bulkhead;

import java.util.Optional;

/**
 * What can be read and managed about a compartment, whatever admits its work: its name, settings
 * and numbers, its limit, its listeners and its share of a {@link Budget}.
 *
 * <p>Registries, metrics, diagnosis, dashboards and budgets work with this view. A {@link Bulkhead}
 * is one that also admits calls. A resource that admits work its own way exposes a view of its
 * compartment instead, whose {@link #setLimit} resizes the resource with it and which has no
 * admission methods: {@link WorkerPool#compartment()}, whose limit is the number of jobs running at
 * once, and a connection pool's in {@code bulkhead-jdbc}, whose limit is its number of connections.
 *
 * <pre>{@code
 * registry.register(reports.compartment());          // reports is a WorkerPool
 * registry.find("reports").orElseThrow().setLimit(8); // 8 workers now
 * }</pre>
 *
 * <p>A decorator of your own extends {@link ForwardingCompartment} and overrides only what it
 * changes; it leaves its budget through {@link #leaveBudget()} like any other: a {@link
 * BulkheadRegistry} that removes it calls that method, whatever the class.
 *
 * <p>Implementations are thread-safe.
 */
public interface Compartment {

  /** The compartment's name. */
  String name();

  /** The current settings; {@link BulkheadConfig#limit()} reflects the latest {@link #setLimit}. */
  BulkheadConfig config();

  /**
   * Changes how many calls may be in flight; never waits for a call.
   *
   * <p>Raising the limit hands the new slots to waiters at once. Lowering it lets the calls in
   * flight finish and admits no one until fewer than the new limit are in flight. A view resizes
   * its resource with the limit (a worker pool's workers, a connection pool's connections); a
   * failed call changes neither.
   *
   * @throws IllegalArgumentException if {@code limit} is less than 1, or the compartment's budget
   *     has no room for it
   * @throws IllegalStateException if the resource behind a view has been shut down or closed
   */
  void setLimit(int limit);

  /** A snapshot of the compartment's numbers. */
  BulkheadStats stats();

  /** Adds a listener for this compartment's events; see {@link BulkheadListener}. */
  void addListener(BulkheadListener listener);

  /** Removes a listener added earlier; returns whether it was present. */
  boolean removeListener(BulkheadListener listener);

  /**
   * The budget this compartment draws on, if any, until it {@linkplain #leaveBudget() leaves} it.
   */
  Optional<Budget> budget();

  /**
   * Gives this compartment's share back to its budget, for a compartment being discarded (a
   * registry calls it on removal). Later limit changes no longer touch the budget. Idempotent; does
   * nothing without a budget.
   */
  void leaveBudget();

  /**
   * Where this compartment's adaptive limit stands (its controller, range and last move), or empty
   * for a static limit. See {@link BulkheadBuilder#adaptive(AdaptiveLimit)}.
   */
  default Optional<AdaptiveLimit.Status> adaptive() {
    return Optional.empty();
  }
}
