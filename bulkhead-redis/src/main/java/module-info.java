/**
 * Bulkhead on Redis: compartments whose limit holds across every process of a fleet. Each admitted
 * call holds a lease in Redis; see {@link io.bulkhead.redis.RedisCompartments}. Their meters for
 * Micrometer are {@link io.bulkhead.redis.micrometer.FleetMetrics}.
 *
 * <p>Micrometer is optional ({@code requires static}): only {@code io.bulkhead.redis.micrometer}
 * uses it, and an application that binds those meters has Micrometer already.
 */
@SuppressWarnings({
  "requires-automatic",
  "requires-transitive-automatic"
}) // micrometer-core has no module-info yet
module io.bulkhead.redis {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;
  requires transitive lettuce.core; // RedisURI is part of the API
  requires static transitive micrometer.core; // FleetMetrics is a MeterBinder

  exports io.bulkhead.redis;
  exports io.bulkhead.redis.micrometer;
}
