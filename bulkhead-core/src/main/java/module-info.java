/**
 * Bulkhead core: compartments that cap how much of a process one dependency may hold.
 *
 * <p>Only the API package is exported; the implementation classes in it are package-private.
 */
module io.bulkhead.core {
  requires static org.jspecify;

  exports io.bulkhead;
}
