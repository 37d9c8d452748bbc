package io.bulkhead;

/*
 * The compartment's state word, and the two fields written with it, on a cache line of their own.
 *
 * Every admission and every release CASes `state`; every admission also reads the compartment's
 * read-mostly fields (the limit, the sampling mask, the listeners, the ticker). Were they on the
 * state's cache line, each CAS by one core would evict them from every other core, and the next call
 * there would miss on fields that never changed. The JVM lays out a superclass's fields before its
 * subclass's and never moves them across that boundary, so 56 bytes of unused longs on either side of
 * the three fields below keep any 64-byte line that holds `state` free of anything read-mostly.
 * (jdk.internal.vm.annotation.Contended does the same but needs a JVM flag outside the JDK.)
 *
 * `fastCarried` and `serviceEstimate` sit next to `state` because they are written by threads that
 * have just taken, or are about to take, that line for a CAS anyway: a carry right after the CAS that
 * wrapped the word's `fast` count, a timed release just before the CAS that frees its slot. Anywhere
 * else each of those writes would evict a line that every other core reads on every call.
 */

/** Padding before the state word; never read. */
abstract class PaddingBefore {
  long p01, p02, p03, p04, p05, p06, p07;
}

/** The state word itself, read and CASed by DefaultBulkhead through a VarHandle. */
abstract class StateWord extends PaddingBefore {
  /** See DefaultBulkhead's design comment: available, waiting, carrying and fast in one word. */
  volatile long state;
  /** Fast admissions carried out of the word's `fast` bits (DefaultBulkhead C1); one writer at a time. */
  volatile long fastCarried;
  /**
   * Exponentially weighted mean of admitted latency, for retryAfter, accessed through a VarHandle with
   * opaque reads and writes: a lost update under contention only makes a hint slightly staler.
   */
  long serviceEstimate;
}

/** Padding after the state word; DefaultBulkhead's own fields come after it. */
abstract class PaddedState extends StateWord {
  long q01, q02, q03, q04, q05;
}
