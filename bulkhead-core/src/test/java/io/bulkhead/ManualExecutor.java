package io.bulkhead;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;

/**
 * An executor that only queues: the test decides when the compartment's hand-offs and timeout
 * rejections run, by calling {@link #runPending()}, so that the gap between a grant and the start
 * of the call it granted is a step of its own that other operations can race with.
 */
final class ManualExecutor implements Executor {

  private final ConcurrentLinkedQueue<Runnable> pending = new ConcurrentLinkedQueue<>();

  @Override
  public void execute(Runnable task) {
    pending.add(task);
  }

  /** Runs what is queued, including what those tasks queue; returns how many ran. */
  int runPending() {
    int ran = 0;
    Runnable next;
    while ((next = pending.poll()) != null) {
      next.run();
      ran++;
    }
    return ran;
  }
}
