package io.bulkhead.grpc;

import io.bulkhead.Bulkhead;
import io.bulkhead.edge.Route;
import io.bulkhead.edge.RouteTable;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import java.util.Objects;

/**
 * A gRPC client interceptor that puts the calls made through a channel into compartments, so that a
 * slow upstream holds at most {@code limit} calls of this process.
 *
 * <pre>{@code
 * Bulkhead ranking = Bulkhead.builder("ranking").limit(8).maxQueue(16).maxWait(Duration.ofMillis(200)).build();
 * Channel channel = ClientInterceptors.intercept(managedChannel, BulkheadClientInterceptor.of(ranking));
 * RankingGrpc.RankingBlockingStub stub = RankingGrpc.newBlockingStub(channel);
 * }</pre>
 *
 * <p>A call is started on the channel only once the compartment admits it; until then it waits in
 * the queue without a thread, and what the stub sends meanwhile is kept and sent in order. The slot
 * is held until the call closes, however it closes. A call cancelled while it waits leaves the
 * queue, and its listener gets {@code CANCELLED}. A call that is not admitted never reaches the
 * network: its listener gets {@code UNAVAILABLE} with the {@link io.bulkhead.BulkheadFullException}
 * as the status's cause and the retry hint in the {@code grpc-retry-pushback-ms} trailer, as the
 * {@link BulkheadServerInterceptor} sends it.
 *
 * <p>The wait is bounded by {@code maxWait}, not by the call's deadline: a deadline that passes
 * while the call waits fails it with {@code DEADLINE_EXCEEDED} when it is admitted. This class is
 * immutable and thread-safe.
 */
public final class BulkheadClientInterceptor implements ClientInterceptor {

  private final RouteTable routes;

  private BulkheadClientInterceptor(RouteTable routes) {
    this.routes = routes;
  }

  /** Puts every call made through the intercepted channel into {@code compartment}. */
  public static BulkheadClientInterceptor of(Bulkhead compartment) {
    Route route = Route.through(compartment);
    return new BulkheadClientInterceptor(path -> route);
  }

  /**
   * Routes each call by {@code "/" + fullMethodName}, as {@link
   * BulkheadServerInterceptor#of(RouteTable)} does; calls that no pattern matches, or that are
   * bypassed, are not delayed.
   */
  public static BulkheadClientInterceptor of(RouteTable routes) {
    return new BulkheadClientInterceptor(Objects.requireNonNull(routes, "routes"));
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
    ClientCall<ReqT, RespT> real = next.newCall(method, callOptions);
    Route route = routes.route("/" + method.getFullMethodName());
    if (!(route instanceof Route.Through through)) {
      return real;
    }
    return new DelayedClientCall<>(real, through.bulkhead(), callOptions.getExecutor());
  }
}
