package io.bulkhead.benchmarks.soak;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/*
 * Concurrency: the JVM delivers GC notifications on its own notification thread, after the
 * collection; heapAfterFullGc() runs on the soak's sampling thread. The listener publishes the heap
 * used after each full ("major") collection in a volatile, then releases one permit; the sampler asks
 * for a full collection and waits (bounded) for that permit, so the figure it reads is the one of the
 * collection it asked for:
 *
 *   T1 (sampler) drains stale permits, calls System.gc(); T2 (notification thread) stores the heap
 *   after it, releases. T1 acquires, reads the value T2 stored (the volatile write happens-before the
 *   release, the release before the acquire).
 *   A full collection the JVM starts on its own between the drain and System.gc() releases a permit
 *   too: T1 then may read that collection's figure, which is just as much "after the last full GC".
 */

/** What the soak samples about its own process: heap after full GC, threads, file descriptors. */
final class Probes implements AutoCloseable {

  private static final Path FDS = Path.of("/proc/self/fd");
  private static final Path LOAD_AVERAGE = Path.of("/proc/loadavg");
  private static final long GC_NOTICE_WAIT_SECONDS = 5;

  private final Set<String> heapPools = new HashSet<>();
  private final Semaphore fullGcs = new Semaphore(0);
  private volatile long heapAfterFullGc = -1;
  private final NotificationListener listener = this::onGc;

  Probes() {
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        heapPools.add(pool.getName());
      }
    }
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      ((NotificationEmitter) gc).addNotificationListener(listener, null, null);
    }
  }

  private void onGc(Notification n, Object handback) {
    if (!n.getType().equals(GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION)) {
      return;
    }
    GarbageCollectionNotificationInfo info =
        GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
    if (!info.getGcAction().contains("major")) {
      return; // a young collection leaves the old generation as it was: not a leak's measure
    }
    long used = 0;
    for (Map.Entry<String, MemoryUsage> e : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
      if (heapPools.contains(e.getKey())) {
        used += e.getValue().getUsed();
      }
    }
    heapAfterFullGc = used;
    fullGcs.release();
  }

  /**
   * Asks for a full collection and returns the heap in use after it, in bytes, as the collector's
   * notification reports it; -1 if no notification came within a few seconds.
   */
  long heapAfterFullGc() throws InterruptedException {
    fullGcs.drainPermits();
    System.gc();
    return fullGcs.tryAcquire(GC_NOTICE_WAIT_SECONDS, TimeUnit.SECONDS) ? heapAfterFullGc : -1;
  }

  static int liveThreads() {
    return ManagementFactory.getThreadMXBean().getThreadCount();
  }

  /** The process's open file descriptors (sockets included), or -1 where /proc is missing. */
  static int openFileDescriptors() {
    try (Stream<Path> fds = Files.list(FDS)) {
      return (int) fds.count() - 1; // the listing's own descriptor
    } catch (IOException e) {
      return -1;
    }
  }

  /** The machine's load averages over 1, 5 and 15 minutes ("3.10 2.87 2.50"), or "unknown". */
  static String loadAverage() {
    try {
      String[] f = Files.readString(LOAD_AVERAGE).trim().split("\\s+");
      return f.length >= 3 ? f[0] + " " + f[1] + " " + f[2] : "unknown";
    } catch (IOException e) {
      return "unknown";
    }
  }

  @Override
  public void close() {
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      try {
        ((NotificationEmitter) gc).removeNotificationListener(listener);
      } catch (ListenerNotFoundException ignored) {
        // never added to this one
      }
    }
  }
}
