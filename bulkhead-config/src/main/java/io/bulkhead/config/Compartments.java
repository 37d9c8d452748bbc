package io.bulkhead.config;

import io.bulkhead.Budget;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.WorkerPool;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@link BulkheadFile#build()} makes: the compartments, registered, their budgets and the
 * running worker pools. {@link #close()} shuts the worker pools down.
 */
public final class Compartments implements AutoCloseable {

  /** How long {@link #close()} lets queued and running jobs go on, for all pools together. */
  public static final Duration CLOSE_GRACE = Duration.ofSeconds(30);

  private static final System.Logger LOG = System.getLogger("io.bulkhead.config");

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

  /**
   * Shuts every worker pool down, letting queued and running jobs go on until {@code deadline} has
   * passed (for all pools together); see {@link WorkerPool#shutdown(Duration)}.
   *
   * @return by pool, the jobs that never started, oldest first; pools that finished are absent
   * @throws InterruptedException if the calling thread is interrupted while it waits
   */
  public Map<String, List<Runnable>> shutdown(Duration deadline) throws InterruptedException {
    long end = System.nanoTime() + deadline.toNanos();
    Map<String, List<Runnable>> handedBack = new LinkedHashMap<>();
    for (WorkerPool pool : workerPools.values()) {
      Duration left = Duration.ofNanos(Math.max(0, end - System.nanoTime()));
      List<Runnable> jobs = pool.shutdown(left);
      if (!jobs.isEmpty()) {
        handedBack.put(pool.name(), jobs);
      }
    }
    return handedBack;
  }

  /**
   * Shuts the worker pools down with {@link #CLOSE_GRACE}; jobs that never started by then are
   * dropped, and their number logged as a warning per pool (call {@link #shutdown(Duration)} to
   * keep them). Does nothing without worker pools.
   */
  @Override
  public void close() {
    try {
      shutdown(CLOSE_GRACE)
          .forEach(
              (pool, jobs) ->
                  LOG.log(
                      System.Logger.Level.WARNING,
                      "worker pool ''{0}'' shut down with {1} queued jobs that never started",
                      pool,
                      jobs.size()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
