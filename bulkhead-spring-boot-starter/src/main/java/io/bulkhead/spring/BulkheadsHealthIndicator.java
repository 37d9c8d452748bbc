package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Compartment;
import io.bulkhead.insight.Diagnosis;
import io.bulkhead.insight.Insight;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The {@code bulkheads} health component: one entry per compartment with its diagnosis (state and
 * explanation, from the {@link Insight} sampled once a second) and its limit, calls in flight and
 * callers waiting. It reads what the sampler and the stats already hold, and never calls a
 * dependency.
 *
 * <p>A compartment that is saturated, limited too tightly or whose dependency is degrading is
 * reported with that state, and the component stays {@code UP}: the compartment is doing its job,
 * and taking the instance out of service would only move the load. It is {@code DOWN} while a
 * compartment is in a state listed in {@code management.health.bulkheads.down-on}.
 */
final class BulkheadsHealthIndicator implements HealthIndicator {

  private final BulkheadRegistry registry;
  private final Insight insight;
  private final Set<Diagnosis.State> downOn;

  BulkheadsHealthIndicator(
      BulkheadRegistry registry, Insight insight, Set<Diagnosis.State> downOn) {
    this.registry = registry;
    this.insight = insight;
    this.downOn = Set.copyOf(downOn);
  }

  @Override
  public Health health() {
    boolean down = false;
    Map<String, Object> compartments = new LinkedHashMap<>();
    for (Compartment compartment : registry.all()) {
      Diagnosis diagnosis = insight.diagnosis(compartment.name()).orElse(null);
      Diagnosis.State state = diagnosis == null ? Diagnosis.State.HEALTHY : diagnosis.state();
      BulkheadStats stats = compartment.stats();
      Map<String, Object> details = new LinkedHashMap<>();
      details.put("state", state.name());
      if (diagnosis != null) {
        details.put("explanation", diagnosis.explanation());
      }
      details.put("limit", stats.limit());
      details.put("inFlight", stats.inFlight());
      details.put("waiting", stats.waiting());
      compartments.put(compartment.name(), details);
      down |= downOn.contains(state);
    }
    return (down ? Health.down() : Health.up()).withDetails(compartments).build();
  }
}
