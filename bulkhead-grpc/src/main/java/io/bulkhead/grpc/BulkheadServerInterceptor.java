package io.bulkhead.grpc;

import io.bulkhead.Bulkhead;
import io.bulkhead.edge.Route;
import io.bulkhead.edge.RouteTable;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.Objects;

/**
 * A gRPC server interceptor that puts calls into compartments.
 *
 * <pre>{@code
 * Bulkhead llm = Bulkhead.builder("llm").limit(10).maxQueue(20).maxWait(Duration.ofSeconds(1)).build();
 * server.addService(ServerInterceptors.intercept(chatService, BulkheadServerInterceptor.of(llm)));
 *
 * RouteTable routes = RouteTable.builder()
 *     .route("/chat.Chat/Complete", llm)    // one method
 *     .route("/search.Search/**", search)   // every method of a service
 *     .bypass("/grpc.health.v1.Health/**")  // never queued
 *     .build();
 * server.intercept(BulkheadServerInterceptor.of(routes));
 * }</pre>
 *
 * <p>A call that finds a free slot starts at once. One that must wait is kept in the compartment's
 * queue without a thread: its handler is not started, and what the client sends meanwhile is kept
 * and delivered in order once it is admitted. A call cancelled while it waits (its deadline passed,
 * the client went away) leaves the queue and never reaches the handler. An admitted call holds its
 * slot until it closes, completes or is cancelled, and frees it exactly once.
 *
 * <p>A call that is not admitted is closed with {@code UNAVAILABLE} (which clients may retry), a
 * description naming the compartment, the reason and the retry hint, and the hint in milliseconds
 * as the {@code grpc-retry-pushback-ms} trailer, which gRPC's retry policy honours.
 *
 * <p>A call whose handler had to wait starts on one of the compartment's own threads, in the call's
 * gRPC {@code Context}. This class is immutable and thread-safe.
 */
public final class BulkheadServerInterceptor implements ServerInterceptor {

  /** The trailer that carries the retry hint in milliseconds. */
  public static final Metadata.Key<String> RETRY_PUSHBACK_MS =
      Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

  private final RouteTable routes;

  private BulkheadServerInterceptor(RouteTable routes) {
    this.routes = routes;
  }

  /** Puts every call of the services it intercepts into {@code compartment}. */
  public static BulkheadServerInterceptor of(Bulkhead compartment) {
    Route route = Route.through(compartment);
    return new BulkheadServerInterceptor(path -> route);
  }

  /**
   * Routes each call by {@code "/" + fullMethodName} ({@code /package.Service/Method}): {@code
   * /package.Service/**} matches every method of a service, {@code /**} every call; calls that no
   * pattern matches, or that are bypassed, are not delayed.
   */
  public static BulkheadServerInterceptor of(RouteTable routes) {
    return new BulkheadServerInterceptor(Objects.requireNonNull(routes, "routes"));
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
      ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
    Route route = routes.route("/" + call.getMethodDescriptor().getFullMethodName());
    if (!(route instanceof Route.Through through)) {
      return next.startCall(call, headers);
    }
    DelayedServerCall<ReqT, RespT> delayed = new DelayedServerCall<>(call, headers, next);
    delayed.start(through.bulkhead());
    return delayed;
  }
}
