/**
 * Bulkhead for gRPC: {@link io.bulkhead.grpc.BulkheadServerInterceptor} and {@link
 * io.bulkhead.grpc.BulkheadClientInterceptor}, which put calls into compartments without holding a
 * thread while they wait.
 *
 * <p>gRPC is not brought along: the application supplies it ({@code io.grpc} is grpc-api's
 * automatic module name).
 */
@SuppressWarnings({
  "requires-automatic",
  "requires-transitive-automatic"
}) // grpc-api ships no module-info
module io.bulkhead.grpc {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;
  requires transitive io.bulkhead.edge;
  requires transitive io.grpc;

  exports io.bulkhead.grpc;
}
