package io.bulkhead;

import java.util.Optional;

/**
 * A {@link Compartment} that forwards every method to another: a decorator extends it and overrides
 * only what it changes, so a method added to {@code Compartment} later reaches the delegate without
 * an edit.
 *
 * <pre>{@code
 * final class Renamed extends ForwardingCompartment {
 *   private final Compartment delegate;
 *   Renamed(Compartment delegate) { this.delegate = delegate; }
 *   @Override protected Compartment delegate() { return delegate; }
 *   @Override public String name() { return "db." + delegate.name(); }
 * }
 * }</pre>
 *
 * <p>Each method reads {@link #delegate()} once and calls it; this class adds no state and no lock,
 * so a subclass is as thread-safe as its delegate and its own overrides.
 */
public abstract class ForwardingCompartment implements Compartment {

  /** Constructor for subclasses. */
  protected ForwardingCompartment() {}

  /** The compartment every method not overridden forwards to. */
  protected abstract Compartment delegate();

  @Override
  public String name() {
    return delegate().name();
  }

  @Override
  public BulkheadConfig config() {
    return delegate().config();
  }

  @Override
  public void setLimit(int limit) {
    delegate().setLimit(limit);
  }

  @Override
  public BulkheadStats stats() {
    return delegate().stats();
  }

  @Override
  public void addListener(BulkheadListener listener) {
    delegate().addListener(listener);
  }

  @Override
  public boolean removeListener(BulkheadListener listener) {
    return delegate().removeListener(listener);
  }

  @Override
  public Optional<Budget> budget() {
    return delegate().budget();
  }

  @Override
  public void leaveBudget() {
    delegate().leaveBudget();
  }

  @Override
  public Optional<AdaptiveLimit.Status> adaptive() {
    return delegate().adaptive();
  }

  /** The delegate's {@code toString()}. */
  @Override
  public String toString() {
    return delegate().toString();
  }
}
