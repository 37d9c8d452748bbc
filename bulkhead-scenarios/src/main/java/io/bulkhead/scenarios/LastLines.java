package io.bulkhead.scenarios;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The last few lines a child process printed, kept to explain its failure in one line. The thread
 * that reads the child's output adds; any thread may read. Thread-safe.
 */
public final class LastLines {

  private final int kept;
  private final Deque<String> lines = new ArrayDeque<>();
  private final ReentrantLock lock = new ReentrantLock();

  /** Keeps the last {@code kept} lines. */
  public LastLines(int kept) {
    if (kept < 1) {
      throw new IllegalArgumentException("kept must be at least 1 but was " + kept);
    }
    this.kept = kept;
  }

  /** Adds {@code line}, forgetting the oldest one beyond the number kept. */
  public void add(String line) {
    lock.lock();
    try {
      lines.addLast(line);
      if (lines.size() > kept) {
        lines.removeFirst();
      }
    } finally {
      lock.unlock();
    }
  }

  /** The lines kept, oldest first, joined by {@code " | "}; {@code (no output)} for none. */
  @Override
  public String toString() {
    lock.lock();
    try {
      return lines.isEmpty() ? "(no output)" : String.join(" | ", lines);
    } finally {
      lock.unlock();
    }
  }
}
