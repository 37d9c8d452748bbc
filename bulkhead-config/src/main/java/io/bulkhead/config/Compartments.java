package io.bulkhead.config;

import io.bulkhead.Budget;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.WorkerPool;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** What {@link BulkheadFile#build()} makes: the compartments, registered, and their budgets. */
public final class Compartments {

  private final BulkheadRegistry registry;
  private final Map<String, Budget> budgets;
  private final Map<String, WorkerPool> workerPools;

  Compartments(
      BulkheadRegistry registry,
      LinkedHashMap<String, Budget> budgets,
      LinkedHashMap<String, WorkerPool> workerPools) {
    this.registry = registry;
    this.budgets = Collections.unmodifiableMap(budgets);
    this.workerPools = Collections.unmodifiableMap(workerPools);
  }

  /**
   * The registry holding every compartment of the file, in file order; a worker pool is there as
   * its {@linkplain WorkerPool#compartment() view}, whose {@code setLimit} changes its number of
   * workers.
   */
  public BulkheadRegistry registry() {
    return registry;
  }

  /** The budgets by name, in file order. */
  public Map<String, Budget> budgets() {
    return budgets;
  }

  /** The worker pools by name, in file order: running, waiting for jobs. */
  public Map<String, WorkerPool> workerPools() {
    return workerPools;
  }

  /** The worker pool named {@code name}, if the file declares one. */
  public Optional<WorkerPool> workerPool(String name) {
    return Optional.ofNullable(workerPools.get(name));
  }

  /** The budget named {@code name}, if the file declares one. */
  public Optional<Budget> budget(String name) {
    return Optional.ofNullable(budgets.get(name));
  }
}
