package io.bulkhead.process;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A supervisor JVM for the flood test, started with a small heap: it runs a {@link TestWorker} that
 * writes {@code args[0]} bytes without a newline, either handing every line to a consumer that
 * counts it ({@code count}) or with the default consumer that drops them ({@code drop}), and prints
 * one line of figures once the worker's process has ended (or {@code args[2]} seconds passed):
 * {@code deaths exit ooms chars fragments longest flooded heapPeakMiB allocatedMiB}.
 */
public final class FloodSupervisor {

  static final String RESULT = "result";

  private FloodSupervisor() {}

  public static void main(String[] args) throws Exception {
    long bytes = Long.parseLong(args[0]);
    boolean count = args[1].equals("count");
    long patienceSeconds = Long.parseLong(args[2]);
    AtomicInteger ooms = new AtomicInteger();
    Thread.setDefaultUncaughtExceptionHandler(
        (t, e) -> {
          if (e instanceof OutOfMemoryError) {
            ooms.incrementAndGet();
          }
        });
    AtomicLong chars = new AtomicLong();
    AtomicLong fragments = new AtomicLong();
    AtomicLong longest = new AtomicLong();
    AtomicInteger flooded = new AtomicInteger();
    BlockingQueue<ProcessStats> ended = new LinkedBlockingQueue<>();
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long allocatedBefore = threads.getTotalThreadAllocatedBytes();
    WorkerProcess.Builder b =
        WorkerProcess.builder("flood", TestWorker.class.getName())
            .arguments(List.of("flood", Long.toString(bytes)))
            .jvmOptions(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"))
            .backoff(Duration.ofMillis(10), Duration.ofMillis(10))
            .maxRestarts(3)
            .listener(
                s -> {
                  if (s.state() == WorkerProcess.State.BACKING_OFF
                      || s.state() == WorkerProcess.State.STOPPED) {
                    ended.add(s);
                  }
                });
    if (count) {
      b.output(
          line -> {
            if (line.equals(TestWorker.FLOODED)) {
              flooded.incrementAndGet();
              return;
            }
            chars.addAndGet(line.length());
            fragments.incrementAndGet();
            longest.accumulateAndGet(line.length(), Math::max);
          });
    }
    ProcessStats first;
    try (WorkerProcess w = b.start()) {
      first = ended.poll(patienceSeconds, TimeUnit.SECONDS);
    }
    long allocated = threads.getTotalThreadAllocatedBytes() - allocatedBefore;
    long heapPeak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        heapPeak += pool.getPeakUsage().getUsed();
      }
    }
    System.out.println(
        String.format(
            Locale.ROOT,
            "%s deaths=%d exit=%s ooms=%d chars=%d fragments=%d longest=%d flooded=%d"
                + " heapPeakMiB=%d allocatedMiB=%d",
            RESULT,
            first == null ? -1 : first.deaths(),
            first == null
                ? "none"
                : first.lastExit().map(e -> e.cause() + ":" + e.code()).orElse("none"),
            ooms.get(),
            chars.get(),
            fragments.get(),
            longest.get(),
            flooded.get(),
            heapPeak >> 20,
            allocated >> 20));
    System.exit(0);
  }
}
