/**
 * Bulkhead core: compartments that cap how much of a process one dependency may hold. Diagnosis,
 * sizing advice and the JSON snapshot are {@code bulkhead-insight}'s.
 *
 * <p>Only the API packages are exported; the implementation classes in them are package-private.
 * {@code io.bulkhead.spi} is exported only to the integrations that admit on a compartment's
 * behalf, and {@code io.bulkhead.internal} only to Bulkhead's own modules.
 */
module io.bulkhead.core {
  requires static transitive org.jspecify; // the annotations are part of the API; compile time only

  exports io.bulkhead;
  // Hooks for integrations that admit on a compartment's behalf; not an application API.
  exports io.bulkhead.spi to
      io.bulkhead.redis;
  // Helpers Bulkhead's modules share (durations, threads, meters, masking, JSON, a padded state
  // word); not an API.
  exports io.bulkhead.internal to
      io.bulkhead.config,
      io.bulkhead.edge,
      io.bulkhead.httpclient,
      io.bulkhead.insight,
      io.bulkhead.jdbc,
      io.bulkhead.jetty,
      io.bulkhead.micrometer,
      io.bulkhead.process,
      io.bulkhead.redis,
      io.bulkhead.spring;
}
