package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.reactor.BulkheadOperator;
import java.util.List;
import java.util.Objects;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/*
 * Algorithm. Each subscription to the filtered exchange builds one "held exchange": a Flux that
 * emits the response (its body wrapped so that the body's end is seen) and then completes only when
 * that body ends. BulkheadOperator guards the held exchange, so the slot is taken before the request
 * is sent and freed when the held exchange terminates or is cancelled, that is when the body ends.
 * The Mono handed to the caller subscribes to the held exchange and passes on its first element
 * without cancelling it (Mono.from would cancel after the first element and free the slot while the
 * body is still being read).
 *
 * Invariants. One slot per subscription, freed exactly once: by the operator (its own invariant) when
 * the held exchange completes (the body ended: completed, failed or cancelled), fails (no response),
 * or is cancelled (the caller cancelled before the response came, or while queued).
 *
 * Races.
 *  - Caller cancels while queued: sink.onCancel disposes the held exchange; the operator leaves the
 *    queue, no request is sent.
 *  - Caller cancels just as the response arrives: either the cancel disposes the held exchange first
 *    (the operator frees the slot; a response emitted after that is dropped by the sink) or the
 *    response reaches the sink first, after which the caller owns the body and must consume or release
 *    it, as WebClient requires anyway; the slot follows the body.
 *  - The body ends on a Netty thread while the held exchange is still delivering the response on
 *    another: bodyEnded is a Sinks.Empty, whose tryEmitEmpty is safe from any thread and idempotent,
 *    and it remembers its completion, so a body that ends before concatWith subscribes to bodyEnded (a
 *    short body read at once, inside the caller's onNext) still completes the held exchange.
 */

/**
 * Puts a {@code WebClient}'s exchanges into compartments, waiting for a slot without holding a
 * thread (through {@code bulkhead-reactor}'s {@link BulkheadOperator}).
 *
 * <p><b>What the slot covers.</b> The slot is taken when the exchange is subscribed, before the
 * request is sent, and held until the response body ends: read to its end, failed, cancelled, or
 * released ({@code releaseBody()}, {@code toBodilessEntity()}). The upstream works on the request
 * until it has sent the whole body, and the connection stays busy until then, so a slot freed when
 * the status line arrives would let a slow-streaming upstream take more connections than its limit.
 * {@code retrieve()} and {@code exchangeToMono}/{@code exchangeToFlux} always consume or release
 * the body, so with them the slot always comes back; code that handles a {@code ClientResponse}
 * itself (a filter of its own after this one) must consume or release its body, as WebClient
 * requires anyway, or it keeps the slot as it keeps the connection. An exchange that fails without
 * a response, or that the caller cancels (while it waits or before the response), frees the slot at
 * once. A full compartment signals {@link io.bulkhead.BulkheadFullException} and sends nothing.
 *
 * <p>The auto-configuration adds one to every {@code WebClient.Builder} Spring Boot builds, routing
 * each exchange to the compartment whose {@code bulkhead.compartments.<name>.upstream} matches its
 * URL (the same matching as {@link BulkheadClientHttpRequestInterceptor}); an exchange that matches
 * none passes untouched. For a client of your own, {@link #of(io.bulkhead.Bulkhead)} puts all its
 * exchanges into one compartment:
 *
 * <pre>{@code
 * WebClient llm = WebClient.builder().baseUrl(url)
 *     .filter(BulkheadExchangeFilterFunction.of(registry.bulkhead("llm").orElseThrow()))
 *     .build();
 * }</pre>
 */
public final class BulkheadExchangeFilterFunction implements ExchangeFilterFunction {

  private final UpstreamRouter router;

  private BulkheadExchangeFilterFunction(UpstreamRouter router) {
    this.router = router;
  }

  /** A filter that puts every exchange of the client into {@code compartment}. */
  public static BulkheadExchangeFilterFunction of(io.bulkhead.Bulkhead compartment) {
    Objects.requireNonNull(compartment, "compartment");
    return new BulkheadExchangeFilterFunction(uri -> compartment);
  }

  /** A filter that routes by upstream, longest base path first; for the auto-configuration. */
  static BulkheadExchangeFilterFunction routing(
      BulkheadRegistry registry, List<CompartmentFactory.UpstreamRoute> routes) {
    return new BulkheadExchangeFilterFunction(UpstreamRouter.byUpstream(registry, routes));
  }

  @Override
  public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
    io.bulkhead.Bulkhead compartment = router.route(request.url());
    if (compartment == null) {
      return next.exchange(request);
    }
    return Mono.create(
        sink -> {
          Sinks.Empty<Void> bodyEnded = Sinks.empty();
          Runnable endBody = bodyEnded::tryEmitEmpty;
          // doOnTerminate, not doFinally: the slot is freed before the caller sees the body end.
          Flux<ClientResponse> heldExchange =
              next.exchange(request)
                  .map(
                      response ->
                          response
                              .mutate()
                              .body(body -> body.doOnTerminate(endBody).doOnCancel(endBody))
                              .build())
                  .concatWith(bodyEnded.asMono().then(Mono.empty()));
          Disposable held =
              heldExchange
                  .transformDeferred(BulkheadOperator.of(compartment))
                  .contextWrite(sink.contextView())
                  .subscribe(sink::success, sink::error, sink::success);
          sink.onCancel(held);
        });
  }

  @Override
  public String toString() {
    return "BulkheadExchangeFilterFunction";
  }
}
