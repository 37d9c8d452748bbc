package io.bulkhead;

import io.bulkhead.internal.DaemonThreads;
import java.lang.System.Logger.Level;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The default {@link Scheduler}: one platform daemon thread serving every compartment in the JVM.
 *
 * <p>Because every compartment's timeouts depend on it, this thread runs no user code (no callback
 * runs on a thread shared with other compartments: {@link Bulkhead#submit}): a sweep takes its
 * compartment's lock, moves the waiters whose maxWait has passed to {@code TIMED_OUT}, unlinks
 * them, re-arms, unparks the synchronous ones and hands each asynchronous one to its compartment's
 * own executor, where its rejection, its {@code onRejected} listeners and its future's dependents
 * run. A listener that blocks therefore delays no other compartment's timeouts, nor its own
 * compartment's next sweep.
 *
 * <p>A compartment arms at most one timer at a time (see the sweep in {@link DefaultBulkhead}), so
 * the thread's queue holds at most one task per compartment with waiters, however many waiters
 * there are. The thread starts when a task is first scheduled and ends after a second with nothing
 * scheduled, so an idle process keeps no timer thread alive; the next schedule starts a new one.
 */
final class SharedTimer implements Scheduler {

  static final SharedTimer INSTANCE = new SharedTimer();

  private static final System.Logger LOG = System.getLogger("io.bulkhead");
  private static final long IDLE_SECONDS = 1;
  private static final ThreadFactory TIMER_THREAD = DaemonThreads.named("bulkhead-timer");

  private final ScheduledThreadPoolExecutor executor;

  private SharedTimer() {
    executor =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread thread = TIMER_THREAD.newThread(task);
              thread.setContextClassLoader(null); // holds no application's class loader alive
              return thread;
            });
    executor.setKeepAliveTime(IDLE_SECONDS, TimeUnit.SECONDS);
    executor.allowCoreThreadTimeOut(true);
    executor.setRemoveOnCancelPolicy(true);
  }

  @Override
  public void schedule(Runnable task, long delayNanos) {
    executor.schedule(
        () -> {
          try {
            task.run();
          } catch (Throwable t) {
            // The executor would store the failure in a future nobody reads; say it out loud
            // instead.
            LOG.log(Level.ERROR, "bulkhead timer task failed", t);
          }
        },
        Math.max(0, delayNanos),
        TimeUnit.NANOSECONDS);
  }
}
