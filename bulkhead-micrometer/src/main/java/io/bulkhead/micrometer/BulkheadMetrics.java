package io.bulkhead.micrometer;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import io.bulkhead.internal.MeterBindings;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/*
 * Concurrency
 * -----------
 * A BulkheadMetrics may be bound to several MeterRegistries (a composite, or one per exporter), and
 * bindTo() and close() may run on any thread. Each bindTo() creates one Binding, which owns the meters of
 * every compartment in that MeterRegistry; `bindings` is guarded by `lock`. Binding's own comment
 * covers compartments coming and going while meters are registered.
 *
 *   T1 bindTo(r); T2 close(). Both take `lock`: either T1's binding is listed before T2 closes them all
 *      (and is closed), or T2 runs first, sets `closed`, and T1 then refuses to bind. No binding
 *      survives close().
 *
 * The registry listener is added outside `lock` because BulkheadRegistry.addListener calls onAdded for
 * every existing compartment, and Binding takes its own lock there.
 */

/**
 * Micrometer meters for one compartment or for every compartment of a {@link BulkheadRegistry}: the
 * four numbers to watch (in flight against the limit, waiting, rejections, admitted latency) and
 * the counters behind them.
 *
 * <pre>{@code
 * BulkheadMetrics.of(registry).bindTo(meterRegistry);   // compartments added later appear too
 * }</pre>
 *
 * <p>The meters are the constants below: gauges {@value #LIMIT}, {@value #IN_FLIGHT}, {@value
 * #WAITING} and {@value #MAX_QUEUE}; counters {@value #ADMITTED}, {@value #REJECTED} and {@value
 * #CANCELLED}, and {@value #LIMIT_CHANGES} for an adaptive limit; timers {@value #CALL_DURATION}
 * and {@value #QUEUE_WAIT}. Prometheus shows them with underscores, counters ending in {@code
 * _total} and timers in {@code _seconds} ({@code bulkhead_in_flight}, {@code
 * bulkhead_rejected_total}, {@code bulkhead_call_duration_seconds}). Every meter carries the tag
 * {@value #NAME_TAG}; the rejections also carry {@value #REASON_TAG} ({@code queue_full}, {@code
 * wait_timeout}, {@code interrupted}).
 *
 * <p>Gauges and counters read {@link Compartment#stats()} when the registry polls them: exact, free
 * on the call path, the counters cumulative and never going down. The timers are fed by a {@link
 * io.bulkhead.BulkheadListener}: call duration as calls finish (how long a call held its slot),
 * queue wait as waiters are admitted (only calls that waited, so {@code queue_wait count /
 * admitted} is the share that had to wait); both publish a percentile histogram, which a {@code
 * MeterFilter} tunes. An unbounded queue reports {@value #MAX_QUEUE} as {@code +Inf}, so {@code
 * waiting / max_queue} reads 0 rather than disappearing.
 *
 * <p>When a compartment leaves the registry, its meters are removed from every bound MeterRegistry
 * and its listener from the compartment; {@link #close()} does the same for all of them. This class
 * is thread-safe.
 */
public final class BulkheadMetrics implements MeterBinder, AutoCloseable {

  /** Counter: how many times an adaptive limit moved; only for compartments with one. */
  public static final String LIMIT_CHANGES = "bulkhead.limit.changes";

  /** Gauge: how many calls may be in flight. */
  public static final String LIMIT = "bulkhead.limit";

  /** Gauge: calls holding a slot now. */
  public static final String IN_FLIGHT = "bulkhead.in.flight";

  /** Gauge: callers waiting for a slot now. */
  public static final String WAITING = "bulkhead.waiting";

  /** Gauge: how many callers may wait; positive infinity when the queue is unbounded. */
  public static final String MAX_QUEUE = "bulkhead.max.queue";

  /** Counter: calls admitted, at once or after waiting. */
  public static final String ADMITTED = "bulkhead.admitted";

  /** Counter, tagged {@code reason}: calls turned away. */
  public static final String REJECTED = "bulkhead.rejected";

  /** Counter: queued asynchronous calls withdrawn by their caller before admission. */
  public static final String CANCELLED = "bulkhead.cancelled";

  /** Timer: how long admitted calls held their slot (their latency, not counting the wait). */
  public static final String CALL_DURATION = "bulkhead.call.duration";

  /** Timer: how long calls that had to wait waited before admission. */
  public static final String QUEUE_WAIT = "bulkhead.queue.wait";

  /**
   * The tag carrying the compartment's name; the meters of {@code bulkhead-jdbc}'s pools and of
   * {@code bulkhead-redis}'s fleet compartments carry the same one.
   */
  public static final String NAME_TAG = MeterBindings.NAME_TAG;

  /** The tag carrying the rejection reason on {@link #REJECTED}. */
  public static final String REASON_TAG = "reason";

  private final Compartment bulkhead; // null when following a registry
  private final BulkheadRegistry registry; // null for a single compartment
  private final ReentrantLock lock = new ReentrantLock();
  private final List<Binding> bindings = new ArrayList<>(); // guarded by lock
  private boolean closed; // guarded by lock

  private BulkheadMetrics(Compartment bulkhead, BulkheadRegistry registry) {
    this.bulkhead = bulkhead;
    this.registry = registry;
  }

  /** Meters for one compartment. */
  public static BulkheadMetrics of(Compartment bulkhead) {
    return new BulkheadMetrics(Objects.requireNonNull(bulkhead, "bulkhead"), null);
  }

  /**
   * Meters for every compartment of {@code registry}: those registered now and those registered
   * later. A compartment removed from the registry has its meters removed.
   */
  public static BulkheadMetrics of(BulkheadRegistry registry) {
    return new BulkheadMetrics(null, Objects.requireNonNull(registry, "registry"));
  }

  /**
   * Registers the meters in {@code meterRegistry}. May be called for several registries.
   *
   * @throws IllegalStateException if this binder was closed
   */
  @Override
  public void bindTo(MeterRegistry meterRegistry) {
    Objects.requireNonNull(meterRegistry, "meterRegistry");
    Binding binding = new Binding(meterRegistry, registry);
    lock.lock();
    try {
      if (closed) {
        throw new IllegalStateException(
            "BulkheadMetrics was closed; create a new one to bind again");
      }
      bindings.add(binding);
    } finally {
      lock.unlock();
    }
    if (registry != null) {
      registry.addListener(binding);
    } else {
      binding.onAdded(bulkhead);
    }
  }

  /** Removes every meter this binder registered and stops following the registry. Idempotent. */
  @Override
  public void close() {
    List<Binding> all;
    lock.lock();
    try {
      closed = true;
      all = new ArrayList<>(bindings);
      bindings.clear();
    } finally {
      lock.unlock();
    }
    for (Binding b : all) {
      if (registry != null) {
        registry.removeListener(b);
      }
      b.close();
    }
  }

  @Override
  public String toString() {
    return "BulkheadMetrics{"
        + (registry != null ? "registry" : "bulkhead=" + bulkhead.name())
        + "}";
  }
}
