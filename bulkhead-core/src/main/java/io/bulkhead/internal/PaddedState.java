package io.bulkhead.internal;

/*
 * A state word on a cache line of its own, for the classes whose every call CASes one word: core's
 * compartment (DefaultBulkhead) and a fleet compartment's lease (bulkhead-redis LeaseSlots).
 *
 * Every admission and every release CASes `state`; every admission also reads the class's read-mostly
 * fields (a limit, a sampling mask, the listeners, a deadline). Were they on the state's cache line,
 * each CAS by one core would evict them from every other core, and the next call there would miss on
 * fields that never changed. The JVM lays out a superclass's fields before its subclass's and never
 * moves them across that boundary, so 56 bytes of unused longs on either side keep any 64-byte line
 * that holds `state` free of anything else. (jdk.internal.vm.annotation.Contended does the same but
 * needs a JVM flag outside the JDK.)
 */

/**
 * A {@code volatile long state} with a cache line of its own: extend it and CAS {@code state}
 * through a {@link java.lang.invoke.VarHandle}. Not an API (see the package description).
 */
public abstract class PaddedState extends StateWord {
  long q01, q02, q03, q04, q05, q06, q07;

  /** For subclasses. */
  protected PaddedState() {}
}
