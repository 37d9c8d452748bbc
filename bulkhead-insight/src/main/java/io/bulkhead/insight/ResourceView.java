package io.bulkhead.insight;

import io.bulkhead.Compartment;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Knows the resource behind some compartments, for a {@link Snapshot}: what a connection pool holds
 * behind the compartment in front of it, say. Core knows no resources; a module that owns one (a
 * connection pool, a client) or the application supplies this view.
 *
 * <pre>{@code
 * ResourceView pools = c -> c.name().equals("db")
 *     ? Optional.of(new ResourceView.Resource("pool", Map.of("active", 3L), "3 connections in use"))
 *     : Optional.empty();
 * String json = insight.snapshot(pools).toJson();
 * }</pre>
 *
 * <p>It is called on the thread that takes the snapshot, once per compartment, so it must be
 * thread-safe and quick, and should not throw: an exception ends the snapshot.
 */
@FunctionalInterface
public interface ResourceView {

  /** The figures of the resource behind {@code compartment}; empty when this view knows none. */
  Optional<Resource> of(Compartment compartment);

  /** A view that knows no resource. */
  static ResourceView none() {
    return compartment -> Optional.empty();
  }

  /**
   * A view that asks this one first, then {@code other} for the compartments this one does not
   * know.
   */
  default ResourceView or(ResourceView other) {
    Objects.requireNonNull(other, "other");
    return compartment -> {
      Optional<Resource> found = of(compartment);
      return found.isPresent() ? found : other.of(compartment);
    };
  }

  /**
   * What a compartment guards, in its own units: {@code kind} says what it is ({@code "pool"}),
   * {@code figures} are whole numbers by name in the order to show them ({@code "active"}, {@code
   * "idle"}, ...), and {@code summary} says them in a sentence. The figures are copied.
   */
  record Resource(String kind, Map<String, Long> figures, String summary) {
    /** Checks that nothing is null and copies the figures, keeping their order. */
    public Resource {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(summary, "summary");
      Objects.requireNonNull(figures, "figures");
      LinkedHashMap<String, Long> copy = new LinkedHashMap<>();
      figures.forEach(
          (name, value) ->
              copy.put(
                  Objects.requireNonNull(name, "figure name"),
                  Objects.requireNonNull(value, () -> "figure " + name)));
      figures = Collections.unmodifiableMap(copy);
    }
  }
}
