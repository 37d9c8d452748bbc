package io.bulkhead.benchmarks.soak;

import java.util.List;
import java.util.Map;

/**
 * What a soak measured.
 *
 * @param compartmentNames the compartments whose slots were sampled, in the samples' order
 * @param after one last sample once the load stopped and the calls in flight were let finish
 * @param loadBefore the machine's load averages (1, 5, 15 minutes) when the load started
 * @param loadAfter the same when it ended: other processes on the machine widen every latency
 */
record SoakResult(
    SoakOptions options,
    List<String> compartmentNames,
    List<Sample> samples,
    List<Minute> minutes,
    Sample after,
    String loadBefore,
    String loadAfter) {

  /** The workloads of each minute, in this order. */
  static final List<String> WORKLOADS = List.of("login", "chat", "checkout", "report");

  /** "/login" and "/chat" (HTTP routes), "checkout" and "report" (database queries). */
  static String label(int workload) {
    return workload < 2 ? "/" + WORKLOADS.get(workload) : WORKLOADS.get(workload);
  }

  /**
   * One sample.
   *
   * @param heapAfterFullGc bytes in use after the full collection the sample asked for (-1: none
   *     reported)
   */
  record Sample(
      double atSeconds,
      long heapAfterFullGc,
      int threads,
      int fileDescriptors,
      Map<String, Integer> inFlight) {}

  /** One minute of calls (the last may be shorter), per workload in {@link #WORKLOADS} order. */
  record Minute(int index, double endSeconds, List<Workload.Interval> workloads) {}
}
