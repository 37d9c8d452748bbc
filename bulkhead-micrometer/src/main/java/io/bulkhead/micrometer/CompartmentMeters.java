package io.bulkhead.micrometer;

import static io.bulkhead.micrometer.BulkheadMetrics.ADMITTED;
import static io.bulkhead.micrometer.BulkheadMetrics.CALL_DURATION;
import static io.bulkhead.micrometer.BulkheadMetrics.CANCELLED;
import static io.bulkhead.micrometer.BulkheadMetrics.IN_FLIGHT;
import static io.bulkhead.micrometer.BulkheadMetrics.LIMIT;
import static io.bulkhead.micrometer.BulkheadMetrics.LIMIT_CHANGES;
import static io.bulkhead.micrometer.BulkheadMetrics.MAX_QUEUE;
import static io.bulkhead.micrometer.BulkheadMetrics.NAME_TAG;
import static io.bulkhead.micrometer.BulkheadMetrics.QUEUE_WAIT;
import static io.bulkhead.micrometer.BulkheadMetrics.REASON_TAG;
import static io.bulkhead.micrometer.BulkheadMetrics.REJECTED;
import static io.bulkhead.micrometer.BulkheadMetrics.WAITING;

import io.bulkhead.AdaptiveLimit;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadListener;
import io.bulkhead.Compartment;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/**
 * The meters of one compartment in one MeterRegistry, and the listener that feeds its timers. Built
 * and removed only under {@link Binding}'s lock; the listener runs on the compartment's callers'
 * threads and only records into the two timers, which are thread-safe.
 */
final class CompartmentMeters implements BulkheadListener {

  /** Histogram range: calls faster than this or slower than that land in the end buckets. */
  static final Duration SHORTEST_EXPECTED = Duration.ofMillis(1);

  static final Duration LONGEST_EXPECTED = Duration.ofMinutes(1);

  private final Compartment bulkhead;
  private final MeterRegistry registry;
  private final List<Meter> meters = new ArrayList<>();
  private final Timer callDuration;
  private final Timer queueWait;

  private CompartmentMeters(MeterRegistry registry, Compartment bulkhead) {
    this.registry = registry;
    this.bulkhead = bulkhead;
    Tags tags = Tags.of(NAME_TAG, bulkhead.name());

    meters.add(
        Gauge.builder(LIMIT, bulkhead, b -> b.config().limit())
            .description("How many calls may be in flight at once")
            .tags(tags)
            .strongReference(true)
            .register(registry));
    meters.add(
        Gauge.builder(IN_FLIGHT, bulkhead, b -> b.stats().inFlight())
            .description("Calls holding a slot now")
            .tags(tags)
            .strongReference(true)
            .register(registry));
    meters.add(
        Gauge.builder(WAITING, bulkhead, b -> b.stats().waiting())
            .description("Callers waiting for a slot now")
            .tags(tags)
            .strongReference(true)
            .register(registry));
    meters.add(
        Gauge.builder(MAX_QUEUE, bulkhead, CompartmentMeters::maxQueue)
            .description("How many callers may wait; +Inf when the queue is unbounded")
            .tags(tags)
            .strongReference(true)
            .register(registry));

    meters.add(
        FunctionCounter.builder(ADMITTED, bulkhead, b -> b.stats().admitted())
            .description("Calls admitted, at once or after waiting")
            .tags(tags)
            .register(registry));
    for (BulkheadFullException.Reason reason : BulkheadFullException.Reason.values()) {
      meters.add(
          FunctionCounter.builder(REJECTED, bulkhead, b -> b.stats().rejected(reason))
              .description("Calls turned away, by reason")
              .tags(tags)
              .tag(REASON_TAG, reason.name().toLowerCase(Locale.ROOT))
              .register(registry));
    }
    meters.add(
        FunctionCounter.builder(CANCELLED, bulkhead, b -> b.stats().cancelled())
            .description("Queued calls withdrawn by their caller before admission")
            .tags(tags)
            .register(registry));

    if (bulkhead.adaptive().isPresent()) {
      meters.add(
          FunctionCounter.builder(
                  LIMIT_CHANGES,
                  bulkhead,
                  b -> b.adaptive().map(AdaptiveLimit.Status::changes).orElse(0L))
              .description("How many times the adaptive limit moved")
              .tags(tags)
              .register(registry));
    }

    callDuration =
        Timer.builder(CALL_DURATION)
            .description("How long admitted calls held their slot")
            .tags(tags)
            .publishPercentileHistogram()
            .minimumExpectedValue(SHORTEST_EXPECTED)
            .maximumExpectedValue(LONGEST_EXPECTED)
            .register(registry);
    queueWait =
        Timer.builder(QUEUE_WAIT)
            .description("How long calls that had to wait waited before admission")
            .tags(tags)
            .publishPercentileHistogram()
            .minimumExpectedValue(SHORTEST_EXPECTED)
            .maximumExpectedValue(LONGEST_EXPECTED)
            .register(registry);
    meters.add(callDuration);
    meters.add(queueWait);
  }

  static CompartmentMeters register(MeterRegistry registry, Compartment bulkhead) {
    CompartmentMeters m = new CompartmentMeters(registry, bulkhead);
    bulkhead.addListener(m);
    return m;
  }

  Compartment bulkhead() {
    return bulkhead;
  }

  void remove() {
    bulkhead.removeListener(this);
    for (Meter m : meters) {
      registry.remove(m);
    }
  }

  private static double maxQueue(Compartment b) {
    OptionalInt max = b.config().maxQueue();
    return max.isPresent() ? max.getAsInt() : Double.POSITIVE_INFINITY;
  }

  @Override
  public void onAdmitted(Compartment b, long waitedNanos) {
    if (waitedNanos > 0) {
      queueWait.record(waitedNanos, TimeUnit.NANOSECONDS);
    }
  }

  @Override
  public void onReleased(Compartment b, long heldNanos) {
    callDuration.record(heldNanos, TimeUnit.NANOSECONDS);
  }
}
