/**
 * Bulkhead for Project Reactor: {@link io.bulkhead.reactor.BulkheadOperator}, which puts a {@code
 * Mono} or a {@code Flux} into a compartment without blocking a thread while it waits.
 *
 * <p>Reactor is not brought along: the application supplies it ({@code reactor.core} is an
 * automatic module named by its manifest, as is {@code org.reactivestreams}).
 */
@SuppressWarnings({
  "requires-automatic",
  "requires-transitive-automatic"
}) // Reactor 3 ships no module-info
module io.bulkhead.reactor {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;
  requires reactor.core;
  requires transitive org.reactivestreams;

  exports io.bulkhead.reactor;
}
