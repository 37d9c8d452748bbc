package io.bulkhead;

import io.bulkhead.testing.FakeTicker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A scheduler driven by a {@link FakeTicker}: tasks run only when the test calls {@link #runDue()},
 * on the test's thread, once the fake time has reached them.
 */
final class ManualScheduler implements Scheduler {

  private final FakeTicker ticker;
  private final ReentrantLock lock = new ReentrantLock();
  private final List<long[]> dueAt = new ArrayList<>();
  private final List<Runnable> tasks = new ArrayList<>();
  private int scheduledCount;

  ManualScheduler(FakeTicker ticker) {
    this.ticker = ticker;
  }

  @Override
  public void schedule(Runnable task, long delayNanos) {
    lock.lock();
    try {
      dueAt.add(new long[] {ticker.read() + delayNanos});
      tasks.add(task);
      scheduledCount++;
    } finally {
      lock.unlock();
    }
  }

  /** Runs every task whose time has come (including ones they schedule that are already due). */
  int runDue() {
    int ran = 0;
    for (; ; ) {
      Runnable next = null;
      lock.lock();
      try {
        long now = ticker.read();
        for (int i = 0; i < tasks.size(); i++) {
          if (now - dueAt.get(i)[0] >= 0) {
            next = tasks.remove(i);
            dueAt.remove(i);
            break;
          }
        }
      } finally {
        lock.unlock();
      }
      if (next == null) {
        return ran;
      }
      next.run();
      ran++;
    }
  }

  int pending() {
    lock.lock();
    try {
      return tasks.size();
    } finally {
      lock.unlock();
    }
  }

  int scheduledCount() {
    lock.lock();
    try {
      return scheduledCount;
    } finally {
      lock.unlock();
    }
  }
}
