package io.bulkhead.benchmarks.peer;

import io.bulkhead.scenarios.DemoSettings;
import java.time.Duration;
import java.time.Instant;

/**
 * Both variants of the experiment and the conditions they ran in.
 *
 * @param settings the slow-upstream experiment's numbers (the chat guard's limit, queue and wait
 *     are {@code llmLimit}, {@code llmQueue} and {@code llmWait}; Resilience4j takes the limit and
 *     the wait)
 * @param sampleEvery the sampler's period
 * @param bulkhead the run with our compartment
 * @param resilience4j the run with Resilience4j's SemaphoreBulkhead
 * @param startedAt when the measured runs started
 * @param elapsed from the start of the first measured run to the end of the second
 * @param loadAverageBefore the one-minute load average before the measured runs (negative: unknown)
 * @param loadAverageAfter the same after them
 * @param processors available processors
 * @param javaVersion the JVM that ran it
 * @param resilience4jVersion Resilience4j's version, read from its jar
 */
record PeerResult(
    DemoSettings settings,
    Duration sampleEvery,
    VariantResult bulkhead,
    VariantResult resilience4j,
    Instant startedAt,
    Duration elapsed,
    double loadAverageBefore,
    double loadAverageAfter,
    int processors,
    String javaVersion,
    String resilience4jVersion) {

  /** Both runs, Bulkhead first. */
  java.util.List<VariantResult> variants() {
    return java.util.List.of(bulkhead, resilience4j);
  }

  /**
   * How far the charts reach: a second past the last moment anything waited in either run (at least
   * three seconds, at most the whole run); from there to the end nothing waits.
   */
  long chartEndNanos() {
    long last = 0;
    long whole = 0;
    for (VariantResult v : variants()) {
      last = Math.max(last, v.timeline().lastWaitingNanos());
      whole = Math.max(whole, v.load().wallNanos());
    }
    long half = 500_000_000L;
    long end = Math.max(3_000_000_000L, ((last + 1_000_000_000L + half - 1) / half) * half);
    return Math.min(end, Math.max(whole, 3_000_000_000L));
  }
}
