package io.bulkhead.spring;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.edge.HttpRejection;
import io.bulkhead.edge.RejectionBody;
import io.bulkhead.edge.Route;
import io.bulkhead.reactor.BulkheadOperator;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/*
 * Concurrency: the routes and compartments are fixed at construction. Each exchange gets its own
 * `admitted` flag, set on the thread that subscribes to the rest of the chain, which the operator does
 * only after admission and strictly before any signal of that chain; a rejection is signalled instead
 * of that subscription, so reading the flag in onErrorResume tells a refusal of this filter's
 * compartment (flag unset) from a BulkheadFullException raised further down (flag set), which must
 * pass on untouched. The operator frees the slot exactly once, when the chain terminates or the
 * exchange is cancelled (the client gone).
 */

/**
 * WebFlux's edge: the handling of a request whose path within the application matches a
 * compartment's {@code paths} ({@link EdgeRoutes}) enters that compartment through {@link
 * BulkheadOperator}. It waits for a slot without a thread, holds it until the response is written
 * or the client goes, and a full compartment is answered with the same {@code 503}, {@code
 * Retry-After} and problem body as {@link BulkheadProblemHandler}'s, without running the handler.
 */
final class BulkheadWebFilter implements WebFilter, Ordered {

  private final EdgeRoutes routes;

  BulkheadWebFilter(EdgeRoutes routes) {
    this.routes = routes;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    if (!(routes.route(exchange.getRequest().getPath().pathWithinApplication())
        instanceof Route.Through through)) {
      return chain.filter(exchange);
    }
    AtomicBoolean admitted = new AtomicBoolean();
    return Mono.defer(
            () -> {
              admitted.set(true);
              return chain.filter(exchange);
            })
        .transformDeferred(BulkheadOperator.of(through.bulkhead()))
        .onErrorResume(
            failure -> failure instanceof BulkheadFullException && !admitted.get(),
            failure -> refuse(exchange.getResponse(), (BulkheadFullException) failure));
  }

  private static Mono<Void> refuse(ServerHttpResponse response, BulkheadFullException rejection) {
    HttpRejection answer = HttpRejection.of(rejection, RejectionBody.problemJson());
    response.setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
    HttpHeaders headers = response.getHeaders();
    headers.set(HttpHeaders.RETRY_AFTER, answer.retryAfter());
    headers.set(HttpHeaders.CONTENT_TYPE, answer.contentType());
    return response.writeWith(Mono.just(response.bufferFactory().wrap(answer.body())));
  }

  /** {@link BulkheadWebMvcAutoConfiguration#FILTER_ORDER}, for the same reasons. */
  @Override
  public int getOrder() {
    return BulkheadWebMvcAutoConfiguration.FILTER_ORDER;
  }

  @Override
  public String toString() {
    return "BulkheadWebFilter" + routes;
  }
}
