package io.bulkhead.spring;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code compartmentevents} Actuator endpoint: the last rejections of every compartment (at
 * most {@value RecentRejections#CAPACITY} each), with when and why each call was refused.
 *
 * <pre>
 * GET /actuator/compartmentevents/llm
 * {"compartments":{"llm":{"recorded":70,"events":[
 *   {"time":"2026-12-02T06:51:40.120Z","reason":"queue_full"}, ...]}}}
 * </pre>
 *
 * <p>{@code recorded} counts every rejection since start-up; {@code events} holds the last ones,
 * oldest first; {@code reason} is {@code queue_full}, {@code wait_timeout} (waited {@code max-wait}
 * in vain) or {@code interrupted}. {@code /actuator/compartmentevents} shows every compartment.
 * Expose it as any endpoint ({@code management.endpoints.web.exposure.include}); the rejections are
 * recorded only while it is available. Its id is not {@code bulkheadevents}, Resilience4j's.
 */
@Endpoint(id = CompartmentEventsEndpoint.ID)
public class CompartmentEventsEndpoint {

  /** The endpoint's id. */
  public static final String ID = "compartmentevents";

  private final RecentRejections rejections;

  CompartmentEventsEndpoint(RecentRejections rejections) {
    this.rejections = rejections;
  }

  /** The last rejections of every compartment. */
  @ReadOperation
  public Map<String, Object> events() {
    return document(rejections.rings());
  }

  /** The last rejections of the compartment named {@code name}; null (404) when there is none. */
  @ReadOperation
  public @Nullable Map<String, Object> events(@Selector String name) {
    RecentRejections.Ring ring = rejections.rings().get(name);
    return ring == null ? null : document(Map.of(name, ring));
  }

  private static Map<String, Object> document(Map<String, RecentRejections.Ring> rings) {
    Map<String, Object> compartments = new LinkedHashMap<>();
    rings.forEach(
        (name, ring) -> {
          Map<String, Object> one = new LinkedHashMap<>();
          one.put("recorded", ring.recorded());
          one.put("events", ring.events().stream().map(RecentRejections.Event::toMap).toList());
          compartments.put(name, one);
        });
    return Map.of("compartments", compartments);
  }
}
