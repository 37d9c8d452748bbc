package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import io.bulkhead.insight.Insight;
import io.bulkhead.insight.Snapshot;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The {@code compartments} Actuator endpoint. {@code GET /actuator/compartments} serves the
 * document of {@link Snapshot#toJson()} (one member per compartment: its config, {@code inFlight},
 * {@code waiting}, rejections by reason, latency, diagnosis and sizing advice), the same as the
 * demo's {@code /bulkheads}; {@code GET /actuator/compartments/{name}} that compartment alone, or
 * {@code 404}. Expose it as any endpoint: {@code
 * management.endpoints.web.exposure.include=compartments}. Its id is not {@code bulkheads}, which
 * is Resilience4j's, so that both can run in one application.
 *
 * <p>{@code POST /actuator/compartments/{name}} with {@code {"limit": 12}} changes a limit at run
 * time through {@link Compartment#setLimit}: {@code 200} with the old and new limit, {@code 400}
 * with the compartment's reason when it refuses (below 1, or more than its budget has room for),
 * {@code 404} for an unknown name. The endpoint's access is read-only unless the application allows
 * more ({@code management.endpoint.compartments.access=unrestricted}); secure it as any write
 * operation (Spring Security on {@code EndpointRequest.to(CompartmentsEndpoint.class)}, or the
 * management port on a private address).
 */
@Endpoint(id = CompartmentsEndpoint.ID, defaultAccess = Access.READ_ONLY)
public class CompartmentsEndpoint {

  /** The endpoint's id. */
  public static final String ID = "compartments";

  private final Insight insight;
  private final BulkheadRegistry registry;

  /** Serves the snapshots of {@code insight} and changes the limits of {@code registry}. */
  public CompartmentsEndpoint(Insight insight, BulkheadRegistry registry) {
    this.insight = insight;
    this.registry = registry;
  }

  /** Every compartment the insight watches, as JSON. */
  @ReadOperation
  public String compartments() {
    return insight.snapshot().toJson();
  }

  /** The compartment named {@code name}, as JSON; null (404) when there is none. */
  @ReadOperation
  public @Nullable String compartment(@Selector String name) {
    Snapshot one = insight.snapshot().only(name);
    return one.names().isEmpty() ? null : one.toJson();
  }

  /**
   * Sets the limit of the compartment named {@code name}.
   *
   * @return {@code {"name", "previousLimit", "limit"}}, or {@code {"error"}} with 400 when the
   *     compartment refuses the limit (409 when its resource is closed), 404 when there is none
   */
  @WriteOperation
  public WebEndpointResponse<Map<String, Object>> setLimit(@Selector String name, int limit) {
    Optional<Compartment> found = registry.find(name);
    if (found.isEmpty()) {
      return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
    }
    Compartment compartment = found.get();
    int previous = compartment.config().limit();
    try {
      compartment.setLimit(limit);
    } catch (IllegalArgumentException refused) {
      return error(WebEndpointResponse.STATUS_BAD_REQUEST, name, limit, refused);
    } catch (IllegalStateException closed) {
      return error(409, name, limit, closed);
    }
    Map<String, Object> changed = new LinkedHashMap<>();
    changed.put("name", name);
    changed.put("previousLimit", previous);
    changed.put("limit", compartment.config().limit());
    return new WebEndpointResponse<>(changed);
  }

  private static WebEndpointResponse<Map<String, Object>> error(
      int status, String name, int limit, RuntimeException refused) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("name", name);
    body.put("limit", limit);
    body.put("error", String.valueOf(refused.getMessage()));
    return new WebEndpointResponse<>(body, status);
  }
}
