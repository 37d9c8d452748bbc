package io.bulkhead;

/**
 * Runs a task once after a delay: the timer a compartment uses to expire waiters that hold no
 * thread. Package-private so that tests can drive time by hand; the default is {@link SharedTimer}.
 * The tasks it is given run no user code (they hand that to the compartment's executor), so one
 * timer can serve every compartment.
 *
 * <p>Implementations must never run the task on the calling thread: compartments schedule while
 * holding their lock, and the task takes that lock.
 */
interface Scheduler {

  void schedule(Runnable task, long delayNanos);
}
