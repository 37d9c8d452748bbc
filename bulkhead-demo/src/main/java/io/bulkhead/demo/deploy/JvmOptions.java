package io.bulkhead.demo.deploy;

import io.bulkhead.config.ConfigException;
import io.bulkhead.config.Quantities;
import io.bulkhead.config.internal.Printable;
import java.util.List;

/**
 * The few JVM options the deployment check needs, read from the options a container gives its JVM
 * (environment and command, in the order the JVM applies them, so a later one wins as it does in
 * the JVM): the heap ({@code -Xmx}, {@code -XX:MaxHeapSize}, or {@code -XX:MaxRAMPercentage} of the
 * container's memory), the thread stack ({@code -Xss}, {@code -XX:ThreadStackSize}) and {@code
 * -XX:ActiveProcessorCount}. A malformed value is a {@link ConfigException} naming where it was
 * given. Every other token is ignored.
 */
final class JvmOptions {

  private static final long KIB = 1024;
  private static final double ALL_OF_IT = 100.0;

  final Read<Long> heap; // null: not given
  final Read<Double> ramPercentage; // null: not given
  final Read<Long> stack; // null: not given
  final Read<Integer> processors; // null: not given

  private JvmOptions(
      Read<Long> heap, Read<Double> ramPercentage, Read<Long> stack, Read<Integer> processors) {
    this.heap = heap;
    this.ramPercentage = ramPercentage;
    this.stack = stack;
    this.processors = processors;
  }

  /** Whether any option about the heap is given: a container running a JVM. */
  boolean setsHeap() {
    return heap != null || ramPercentage != null;
  }

  static JvmOptions parse(List<Read<String>> tokens) {
    Read<Long> heap = null;
    Read<Double> ramPercentage = null;
    Read<Long> stack = null;
    Read<Integer> processors = null;
    for (Read<String> t : tokens) {
      String s = t.value();
      if (s.startsWith("-Xmx")) {
        heap = size(t, s.substring("-Xmx".length()), 1);
      } else if (s.startsWith("-XX:MaxHeapSize=")) {
        heap = size(t, s.substring("-XX:MaxHeapSize=".length()), 1);
      } else if (s.startsWith("-Xss")) {
        stack = size(t, s.substring("-Xss".length()), 1);
      } else if (s.startsWith("-XX:ThreadStackSize=")) {
        stack = size(t, s.substring("-XX:ThreadStackSize=".length()), KIB);
      } else if (s.startsWith("-XX:MaxRAMPercentage=")) {
        String v = s.substring("-XX:MaxRAMPercentage=".length());
        double p;
        try {
          p = Double.parseDouble(v);
        } catch (NumberFormatException e) {
          p = Double.NaN;
        }
        if (!(p > 0 && p <= ALL_OF_IT)) {
          throw bad(
              t,
              "expected a percentage above 0 and at most 100, like 75.0, but was "
                  + Printable.quote(v));
        }
        ramPercentage = new Read<>(p, s, t.file(), t.line(), t.key());
      } else if (s.startsWith("-XX:ActiveProcessorCount=")) {
        String v = s.substring("-XX:ActiveProcessorCount=".length());
        long n;
        try {
          n = Quantities.parseWhole(v);
        } catch (IllegalArgumentException e) {
          n = 0;
        }
        if (n < 1 || n > Integer.MAX_VALUE) {
          throw bad(
              t,
              "expected a whole number of processors, at least 1, but was " + Printable.quote(v));
        }
        processors = new Read<>((int) n, s, t.file(), t.line(), t.key());
      }
    }
    return new JvmOptions(heap, ramPercentage, stack, processors);
  }

  private static Read<Long> size(Read<String> t, String value, long unit) {
    long bytes;
    try {
      bytes = ResourceQuantities.jvmSize(value);
    } catch (IllegalArgumentException e) {
      throw bad(t, e.getMessage());
    }
    if (bytes > Long.MAX_VALUE / unit) {
      throw bad(t, "more bytes than a long holds");
    }
    return new Read<>(bytes * unit, t.value(), t.file(), t.line(), t.key());
  }

  private static ConfigException bad(Read<String> t, String problem) {
    return new ConfigException(
        t.file(), t.line(), t.key(), Printable.shown(t.value()) + ": " + problem);
  }
}
