/**
 * Bulkhead on Redis: compartments whose limit holds across every process of a fleet. Each admitted call
 * holds a lease in Redis; see {@link io.bulkhead.redis.RedisCompartments}.
 */
module io.bulkhead.redis {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;
  requires transitive lettuce.core; // RedisURI is part of the API

  exports io.bulkhead.redis;
}
