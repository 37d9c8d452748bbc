/**
 * Bulkhead core: compartments that cap how much of a process one dependency may hold, and insight
 * into them (diagnosis, sizing advice, a JSON snapshot).
 *
 * <p>Only the API packages are exported; the implementation classes in them are package-private.
 * {@code io.bulkhead.spi} is exported only to the integrations that admit on a compartment's
 * behalf, and {@code io.bulkhead.internal} only to Bulkhead's own modules.
 */
module io.bulkhead.core {
  requires static transitive org.jspecify; // the annotations are part of the API; compile time only

  exports io.bulkhead;
  exports io.bulkhead.insight;
  // Hooks for integrations that admit on a compartment's behalf; not an application API.
  exports io.bulkhead.spi to
      io.bulkhead.redis;
  // Helpers Bulkhead's modules share (durations, threads, meters, masking); not an API.
  exports io.bulkhead.internal to
      io.bulkhead.config,
      io.bulkhead.httpclient,
      io.bulkhead.jdbc,
      io.bulkhead.jetty,
      io.bulkhead.micrometer,
      io.bulkhead.process,
      io.bulkhead.redis,
      io.bulkhead.spring;
}
