package io.bulkhead.testing;

import io.bulkhead.Budget;
import io.bulkhead.BulkheadConfig;
import io.bulkhead.BulkheadListener;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Compartment;
import io.bulkhead.ScriptedStats;
import java.util.Optional;

/**
 * A compartment whose numbers a test writes second by second, for tests of what reads compartments
 * (diagnosis, sizing advice, meters), shared through core's test-jar; {@link ScriptedStats} builds
 * its stats with core's package-private constructors. Listener operations are unsupported.
 */
public final class ScriptedCompartment implements Compartment {
  /** {@link #latencyNanos} when no latency was observed. */
  public static final long NO_LATENCY = -1;

  private final String name;

  /** The limit {@link #config()} reports; {@link #setLimit} writes it. */
  public int limit;

  private int inFlight;
  private long admitted;
  private long rejected;
  private long completed;

  /** The latency every sampled call took, or {@link #NO_LATENCY}. */
  public long latencyNanos = NO_LATENCY;

  /** A compartment named {@code name} with {@code limit} and no traffic yet. */
  public ScriptedCompartment(String name, int limit) {
    this.name = name;
    this.limit = limit;
  }

  /** Adds one second of traffic and sets the in-flight count and the recent latency mean. */
  public void run(
      int admittedNow, int rejectedNow, int inFlightNow, int completedNow, long latencyMillis) {
    admitted += admittedNow;
    rejected += rejectedNow;
    completed += completedNow;
    inFlight = inFlightNow;
    latencyNanos = latencyMillis == NO_LATENCY ? NO_LATENCY : latencyMillis * 1_000_000L;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public BulkheadConfig config() {
    return ScriptedStats.config(name, limit);
  }

  @Override
  public BulkheadStats stats() {
    return ScriptedStats.stats(name, limit, inFlight, admitted, completed, rejected, latencyNanos);
  }

  @Override
  public Optional<Budget> budget() {
    return Optional.empty();
  }

  @Override
  public void leaveBudget() {}

  @Override
  public void setLimit(int limit) {
    this.limit = limit;
  }

  @Override
  public void addListener(BulkheadListener listener) {
    throw new UnsupportedOperationException();
  }

  @Override
  public boolean removeListener(BulkheadListener listener) {
    throw new UnsupportedOperationException();
  }
}
