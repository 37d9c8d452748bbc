package io.bulkhead.internal;

/** Padding before the state word; never read (see PaddedState). */
abstract class PaddingBefore {
  long p01, p02, p03, p04, p05, p06, p07;
}

/**
 * The state word itself, between its paddings; see {@link PaddedState}. Not an API (see the package
 * description).
 */
public abstract class StateWord extends PaddingBefore {
  /** The subclass's state word, read and CASed by it through a VarHandle. */
  protected volatile long state;

  StateWord() {}
}
