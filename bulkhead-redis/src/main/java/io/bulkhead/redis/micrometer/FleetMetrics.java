package io.bulkhead.redis.micrometer;

import io.bulkhead.internal.MeterBindings;
import io.bulkhead.redis.FleetBulkhead;
import io.bulkhead.redis.FleetStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer meters for what a fleet compartment adds to an ordinary one: its fallback switches,
 * the calls its fallback policy refused, the calls that timed out waiting for a slot of the lease,
 * the leases it lost, the calls that overran, whether it admits by its fallback policy now, and its
 * lease's slots and the calls on them.
 *
 * <pre>{@code
 * FleetBulkhead llm = fleet.builder("llm").limit(10).maxCallDuration(Duration.ofSeconds(30)).build();
 * BulkheadMetrics.of(llm).bindTo(meterRegistry);   // bulkhead-micrometer: limit, in flight, waiting,
 *                                                  // admitted, rejected{reason}, timers
 * FleetMetrics.of(llm).bindTo(meterRegistry);      // the fleet's own, below
 * }</pre>
 *
 * <p>Every meter carries the tag {@code name} with the compartment's name, as the compartment
 * meters of {@code bulkhead-micrometer} do, so the two families line up. The constants below name
 * the meters, each with its type and the {@link FleetStats} figure it reads; Prometheus spells
 * {@code bulkhead.fleet.lease.in.use} as {@code bulkhead_fleet_lease_in_use}, a counter with {@code
 * _total} ({@code bulkhead_fleet_fallback_switches_total}).
 *
 * <p>The two counters of refusals are a breakdown, not more rejections: a fleet compartment counts
 * a call refused by its fallback policy, or one that waited for a slot past its {@code maxWait}, as
 * any compartment counts a rejection, so each call they count is also in {@code bulkhead.rejected}
 * with {@code reason} {@code queue_full} or {@code wait_timeout}.
 *
 * <p>Each meter reads {@link FleetBulkhead#fleetStats()} when the registry polls it, so it costs
 * nothing on the call path; counters are cumulative since the compartment was built. Close this
 * binder to remove its meters. Micrometer knows a meter by its name and tags only: bind one binder
 * per compartment name to a registry.
 *
 * <p>This class needs {@code micrometer-core}, an optional dependency of {@code bulkhead-redis}: an
 * application that exports metrics has it already. It is thread-safe.
 */
public final class FleetMetrics implements MeterBinder, AutoCloseable {

  /**
   * Counter: switches to the fallback policy (Redis unreachable at start-up, or no sync answered
   * for a whole lease TTL).
   */
  public static final String FALLBACK_SWITCHES = "bulkhead.fleet.fallback.switches";

  /**
   * Counter: calls the fallback policy refused at once (fail closed, or the local share full); each
   * is also a {@code QUEUE_FULL} rejection of the compartment.
   */
  public static final String REFUSED_BY_FALLBACK = "bulkhead.fleet.refused.by.fallback";

  /**
   * Counter: calls refused because no slot of the lease came within their {@code maxWait}; each is
   * also a {@code WAIT_TIMEOUT} rejection of the compartment.
   */
  public static final String FLEET_TIMEOUTS = "bulkhead.fleet.timeouts";

  /**
   * Counter: times Redis had dropped this process's lease (cut off or paused past it) or lost its
   * data, and slots found unusable when their call was about to start (a paused process).
   */
  public static final String LEASES_LOST = "bulkhead.fleet.leases.lost";

  /** Gauge: 1 while the compartment admits by its fallback policy, 0 while it admits by leases. */
  public static final String IN_FALLBACK = "bulkhead.fleet.in.fallback";

  /**
   * Counter: calls that ran longer than {@code maxCallDuration}, which the fleet counts only while
   * their process reaches Redis.
   */
  public static final String CALLS_OVERRAN = "bulkhead.fleet.calls.overran";

  /** Gauge: how many calls this process's lease lets it run now (0 in fallback). */
  public static final String LEASE_SLOTS = "bulkhead.fleet.lease.slots";

  /** Gauge: the calls of this process running under its lease now. */
  public static final String LEASE_IN_USE = "bulkhead.fleet.lease.in.use";

  private final FleetBulkhead compartment;
  private final MeterBindings<MeterRegistry, Meter> bindings;

  private FleetMetrics(FleetBulkhead compartment) {
    this.compartment = compartment;
    this.bindings =
        new MeterBindings<>(
            "FleetMetrics of compartment '" + compartment.name() + "'", MeterRegistry::remove);
  }

  /** Meters for {@code compartment}. */
  public static FleetMetrics of(FleetBulkhead compartment) {
    return new FleetMetrics(Objects.requireNonNull(compartment, "compartment"));
  }

  /**
   * Registers the meters in {@code meterRegistry}. May be called for several registries.
   *
   * @throws IllegalStateException if this binder was closed
   */
  @Override
  public void bindTo(MeterRegistry meterRegistry) {
    bindings.bind(meterRegistry, this::register);
  }

  private List<Meter> register(MeterRegistry meterRegistry) {
    return List.of(
        counter(
            meterRegistry,
            FALLBACK_SWITCHES,
            FleetStats::fallbackSwitches,
            "Switches to the fallback policy: Redis unreachable for a whole lease TTL"),
        counter(
            meterRegistry,
            REFUSED_BY_FALLBACK,
            FleetStats::refusedByFallback,
            "Calls the fallback policy refused at once (also in bulkhead.rejected, queue_full)"),
        counter(
            meterRegistry,
            FLEET_TIMEOUTS,
            FleetStats::fleetTimeouts,
            "Calls refused because no slot of the lease came within their maxWait"
                + " (also in bulkhead.rejected, wait_timeout)"),
        counter(
            meterRegistry,
            LEASES_LOST,
            FleetStats::leasesLost,
            "Leases Redis had dropped or lost, and slots unusable when their call was to start"),
        counter(
            meterRegistry,
            CALLS_OVERRAN,
            FleetStats::callsOverran,
            "Calls that ran longer than maxCallDuration"),
        gauge(
            meterRegistry,
            IN_FALLBACK,
            s -> s.inFallback() ? 1 : 0,
            "1 while the compartment admits by its fallback policy, 0 while by its lease"),
        gauge(
            meterRegistry,
            LEASE_SLOTS,
            FleetStats::leaseSlots,
            "Calls this process's lease lets it run now"),
        gauge(
            meterRegistry,
            LEASE_IN_USE,
            FleetStats::leaseInUse,
            "Calls of this process running under its lease now"));
  }

  /** Removes every meter this binder registered; a later {@link #bindTo} is refused. Idempotent. */
  @Override
  public void close() {
    bindings.close();
  }

  private Meter counter(
      MeterRegistry registry,
      String name,
      ToDoubleFunction<FleetStats> figure,
      String description) {
    return FunctionCounter.builder(name, compartment, c -> figure.applyAsDouble(c.fleetStats()))
        .description(description)
        .tag(MeterBindings.NAME_TAG, compartment.name())
        .register(registry);
  }

  private Meter gauge(
      MeterRegistry registry,
      String name,
      ToDoubleFunction<FleetStats> figure,
      String description) {
    return Gauge.builder(name, compartment, c -> figure.applyAsDouble(c.fleetStats()))
        .description(description)
        .tag(MeterBindings.NAME_TAG, compartment.name())
        .strongReference(true)
        .register(registry);
  }

  @Override
  public String toString() {
    return "FleetMetrics{" + compartment.name() + "}";
  }
}
