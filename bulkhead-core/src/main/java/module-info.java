/**
 * Bulkhead core: compartments that cap how much of a process one dependency may hold, and insight into
 * them (diagnosis, sizing advice, a JSON snapshot).
 *
 * <p>Only the API packages are exported; the implementation classes in them are package-private.
 */
module io.bulkhead.core {
  requires static transitive org.jspecify; // the annotations are part of the API; compile time only

  exports io.bulkhead;
  exports io.bulkhead.insight;
}
