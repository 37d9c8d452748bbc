package io.bulkhead.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The default executor of a compartment: where it runs the user code no caller's thread is there
 * for, such as a call that waited for a slot, and the dependents of a rejection at {@code maxWait}
 * (see {@link io.bulkhead.Bulkhead#submit}). Core's compartments and the fleet compartments of
 * {@code bulkhead-redis} use it.
 *
 * <p>Each compartment gets its own pool of daemon platform threads, named {@code
 * bulkhead-<name>-<n>}, created when a task finds none idle and ended after {@link #IDLE_SECONDS}
 * without work: a compartment that never queues never starts one, and an idle process keeps none.
 * Because a task never waits for a busy thread (the queue is a hand-off, the pool has no maximum),
 * a callback that blocks holds only its own thread: the next task of the same compartment runs on
 * another, and no other compartment shares the pool at all. Each task starts one waiter or rejects
 * the waiters one sweep expired, so the pool holds one thread per such task of this compartment
 * running at that moment (plus idle ones, for at most {@link #IDLE_SECONDS}); a thread dump names
 * the compartment whose callback is stuck.
 *
 * <p>Why not the alternatives: {@code ForkJoinPool.commonPool()} has one thread per core minus one
 * (a single thread on a 2-core host) and is shared with every other user of the JVM, so one blocked
 * listener would stall it again; a virtual thread per task (Java 21+) would be cheaper, but on Java
 * 21 to 23 a listener blocking while it holds a monitor pins its carrier, and a handful of them
 * would stall every virtual thread in the JVM, other compartments' included. A platform thread that
 * blocks stalls only itself.
 */
public final class CompartmentThreads {

  /** How long an idle thread is kept for the next task before it ends. */
  public static final long IDLE_SECONDS = 10;

  private CompartmentThreads() {}

  /**
   * A new executor for the compartment {@code name}, whose threads are {@code bulkhead-<name>-<n>}.
   */
  public static Executor forCompartment(String name) {
    return new ThreadPoolExecutor(
        0,
        Integer.MAX_VALUE,
        IDLE_SECONDS,
        TimeUnit.SECONDS,
        new SynchronousQueue<>(),
        DaemonThreads.numbered("bulkhead-" + name + "-"));
  }
}
