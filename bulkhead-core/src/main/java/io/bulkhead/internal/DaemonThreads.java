package io.bulkhead.internal;

import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Named daemon platform threads: every thread the library starts for itself is a daemon (it never
 * keeps a JVM from exiting) and carries a name that says whose it is in a thread dump.
 */
public final class DaemonThreads {

  private DaemonThreads() {}

  /** A factory of daemon threads named {@code prefix1}, {@code prefix2}, and so on. */
  public static ThreadFactory numbered(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    AtomicLong count = new AtomicLong();
    return task -> daemon(task, prefix + count.incrementAndGet(), 0);
  }

  /**
   * Like {@link #numbered(String)}, with a stack of {@code stackBytes} (a hint to the JVM; 0 for
   * its default), for callers that start many threads which need little stack.
   */
  public static ThreadFactory numbered(String prefix, long stackBytes) {
    Objects.requireNonNull(prefix, "prefix");
    AtomicLong count = new AtomicLong();
    return task -> daemon(task, prefix + count.incrementAndGet(), stackBytes);
  }

  /** A factory whose daemon threads are all named {@code name}: a single thread's executor. */
  public static ThreadFactory named(String name) {
    Objects.requireNonNull(name, "name");
    return task -> daemon(task, name, 0);
  }

  /** Starts a daemon thread named {@code name} that runs {@code task}. */
  public static Thread start(String name, Runnable task) {
    Thread thread = daemon(Objects.requireNonNull(task, "task"), name, 0);
    thread.start();
    return thread;
  }

  private static Thread daemon(Runnable task, String name, long stackBytes) {
    Thread thread = new Thread(null, task, name, stackBytes);
    thread.setDaemon(true);
    return thread;
  }
}
