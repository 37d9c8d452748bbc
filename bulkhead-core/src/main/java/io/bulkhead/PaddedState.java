package io.bulkhead;

/*
 * The compartment's state word on a cache line of its own.
 *
 * Every admission and every release CASes `state`; every admission also reads the compartment's
 * read-mostly fields (the limit, the sampling mask, the listeners, the ticker). Were they on the
 * state's cache line, each CAS by one core would evict them from every other core, and the next call
 * there would miss on fields that never changed. The JVM lays out a superclass's fields before its
 * subclass's and never moves them across that boundary, so 56 bytes of unused longs on either side
 * keep any 64-byte line that holds `state` free of anything else. (jdk.internal.vm.annotation.Contended
 * does the same but needs a JVM flag outside the JDK.)
 */

/** Padding before the state word; never read. */
abstract class PaddingBefore {
  long p01, p02, p03, p04, p05, p06, p07;
}

/** The state word itself, read and CASed by DefaultBulkhead through a VarHandle. */
abstract class StateWord extends PaddingBefore {
  /** See DefaultBulkhead's design comment: available, waiting and fast in one word. */
  volatile long state;
}

/** Padding after the state word; DefaultBulkhead's own fields come after it. */
abstract class PaddedState extends StateWord {
  long q01, q02, q03, q04, q05, q06, q07;
}
