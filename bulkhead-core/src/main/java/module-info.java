/**
 * Bulkhead core: compartments that cap how much of a process one dependency may hold.
 *
 * <p>Only the API package is exported; the implementation classes in it are package-private.
 */
module io.bulkhead.core {
  requires static transitive org.jspecify; // the annotations are part of the API; compile time only

  exports io.bulkhead;
}
