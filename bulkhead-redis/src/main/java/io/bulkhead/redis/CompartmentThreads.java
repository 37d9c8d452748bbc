package io.bulkhead.redis;

import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads of one fleet compartment: where a call that waited for a lease starts (its supplier,
 * and the dependents of a rejection), never on the fleet's scheduler thread, which every
 * compartment of a {@link RedisCompartments} shares (core's rule I7: no user code on a thread the
 * library shares between compartments).
 *
 * <p>The same choice as core's compartments make: daemon platform threads named {@code
 * bulkhead-<name>-<n>}, created when a task finds none idle (a hand-off queue, no maximum) and
 * ended after {@link #IDLE_SECONDS} without work. A supplier that blocks holds one thread of its
 * own compartment and nothing another compartment or the scheduler waits for; a compartment whose
 * calls never wait for a lease starts none, and an idle one keeps none (so the pool needs no
 * shutdown).
 */
final class CompartmentThreads {

  /** How long an idle thread is kept for the next task before it ends. */
  static final long IDLE_SECONDS = 10;

  private CompartmentThreads() {}

  static Executor forCompartment(String name) {
    AtomicInteger count = new AtomicInteger();
    return new ThreadPoolExecutor(
        0,
        Integer.MAX_VALUE,
        IDLE_SECONDS,
        TimeUnit.SECONDS,
        new SynchronousQueue<>(),
        task -> {
          Thread thread = new Thread(task, "bulkhead-" + name + "-" + count.incrementAndGet());
          thread.setDaemon(true);
          return thread;
        });
  }
}
