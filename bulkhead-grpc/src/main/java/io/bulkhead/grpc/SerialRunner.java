package io.bulkhead.grpc;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/*
 * Runs tasks one at a time, in the order they were given, once opened; until then it keeps them.
 * A delayed call buffers its callbacks (server) or its operations (client) here until the
 * compartment admits it, then replays them and passes later ones through the same queue, so that
 * the replay and a new callback never run at once or out of order.
 *
 * Algorithm: execute() offers the task and drains. drain() is the usual work-in-progress loop: the
 * thread that raises `wip` from 0 runs tasks until `wip` returns to 0; any other thread only adds to
 * `wip`, which makes the running drainer loop once more. Before open(), the drainer runs nothing and
 * the tasks stay queued; open() sets `opened` and drains.
 *
 * Races, as interleavings
 *   R1 execute vs open. T1 offers a task while T2 opens. T2 writes `opened` and then drains; T1
 *      offers and then drains. Whoever raises `wip` second only bumps it, and the drainer re-reads
 *      `opened` on its next pass: the task runs once, on one of the two threads.
 *   R2 a task that throws: it is handed to `onFailure` and the drain goes on, so a failing callback
 *      never leaves `wip` above 0 (which would stop every later task).
 * No lock: tasks run with nothing held.
 */
/** Runs tasks one at a time in submission order once {@link #open()} is called. */
final class SerialRunner {

  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicInteger wip = new AtomicInteger();
  private final Consumer<Throwable> onFailure;
  private volatile boolean opened;

  SerialRunner(Consumer<Throwable> onFailure) {
    this.onFailure = onFailure;
  }

  void execute(Runnable task) {
    tasks.offer(task);
    drain();
  }

  void open() {
    opened = true;
    drain();
  }

  boolean isOpen() {
    return opened;
  }

  private void drain() {
    if (wip.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      if (opened) {
        Runnable task;
        while ((task = tasks.poll()) != null) {
          try {
            task.run();
          } catch (Throwable failure) {
            onFailure.accept(failure);
          }
        }
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }
}
