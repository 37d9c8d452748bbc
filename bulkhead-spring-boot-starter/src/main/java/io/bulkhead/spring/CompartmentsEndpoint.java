package io.bulkhead.spring;

import io.bulkhead.insight.Insight;
import io.bulkhead.insight.Snapshot;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code compartments} Actuator endpoint: {@code /actuator/compartments} serves the document of
 * {@link Snapshot#toJson()} (one member per compartment: its config, {@code inFlight}, {@code
 * waiting}, rejections by reason, latency, diagnosis and sizing advice), the same as the demo's
 * {@code /bulkheads}; {@code /actuator/compartments/{name}} the same document with that compartment
 * alone, or {@code 404} when there is none. Expose it as any endpoint: {@code
 * management.endpoints.web.exposure.include=compartments}. Its id is not {@code bulkheads}, which
 * is Resilience4j's, so that both can run in one application.
 */
@Endpoint(id = CompartmentsEndpoint.ID)
public class CompartmentsEndpoint {

  /** The endpoint's id. */
  public static final String ID = "compartments";

  private final Insight insight;

  /** Serves the snapshots of {@code insight}. */
  public CompartmentsEndpoint(Insight insight) {
    this.insight = insight;
  }

  /** Every compartment the insight watches, as JSON. */
  @ReadOperation
  public String compartments() {
    return insight.snapshot().toJson();
  }

  /** The compartment named {@code name}, as JSON; null (404) when there is none. */
  @ReadOperation
  public @Nullable String bulkhead(@Selector String name) {
    Snapshot one = insight.snapshot().only(name);
    return one.names().isEmpty() ? null : one.toJson();
  }
}
