package io.bulkhead.httpclient5;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.httpclient.CompartmentFullException;
import io.bulkhead.httpclient.UpstreamRoutes;
import io.bulkhead.httpclient.UpstreamUnavailableException;
import java.io.IOException;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.client5.http.async.AsyncExecChainHandler;
import org.apache.hc.client5.http.impl.async.HttpAsyncClientBuilder;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.nio.AsyncEntityProducer;
import org.apache.hc.core5.pool.ConnPoolControl;

/*
 * Algorithm. execute() asks the compartment for a slot with submit(), which holds no thread while
 * the request waits. Once admitted, an AsyncExchange sends the request down the chain with itself as
 * the callback, and the slot is held on its `ended` future, which completes (once) when the exchange
 * ends: completed() after the whole body was consumed, or failed(). The exchange frees the slot
 * before it tells the caller, so a caller that sees the end sees the slot free.
 *
 * Cancellation. Before the request is admitted, the caller's future cancels the scope's
 * CancellableDependency, which is set to withdraw the waiting request from the queue. Once the chain
 * runs, HttpClient sets its own dependency (connection lease, exchange) on the same scope, replacing
 * ours; cancelling then aborts the exchange, which fails it, which frees the slot.
 *
 * Races.
 *  - Cancel vs admission: T1 (the caller) cancels while T2 (a freed slot's hand-off) starts the call.
 *    Either T1's withdraw wins (the compartment never starts the call) or T2 starts it; then T2 finds
 *    the scope cancelled (ComplexCancellable remembers) and ends the exchange at once, or, if T1's
 *    cancel comes after that check, HttpClient's own dependency, set later in the chain, is cancelled
 *    the moment it is set. Every path ends `ended`, once.
 *  - Refusal: submit fails the future with BulkheadFullException and never runs the supplier; the
 *    caller is told through the callback, and nothing was sent.
 */

/**
 * Puts an async Apache HttpClient 5's requests into compartments, routed by URL ({@link
 * UpstreamRoutes}): a request waits for a slot without holding a thread, and holds it until its
 * response's body has been consumed (the exchange completed) or the exchange failed or was
 * cancelled.
 *
 * <pre>{@code
 * BulkheadAsyncExecChainHandler bulkheads = BulkheadAsyncExecChainHandler.of(UpstreamRoutes.builder()
 *     .route("https://llm.internal/v1", llm)
 *     .build());
 * PoolingAsyncClientConnectionManager pool = PoolingAsyncClientConnectionManagerBuilder.create().build();
 * bulkheads.agree(pool);
 * CloseableHttpAsyncClient client = bulkheads.applyTo(HttpAsyncClients.custom().setConnectionManager(pool)).build();
 * }</pre>
 *
 * <p>A full compartment fails the request with {@link CompartmentFullException} carrying the
 * compartment's retry hint; nothing is sent. An upstream that answers {@code 503} or {@code 429}
 * fails it with {@link UpstreamUnavailableException}, carrying its {@code Retry-After}; the
 * answer's body is discarded and the slot freed first. Cancelling the request's future while it
 * waits withdraws it from the queue; afterwards it aborts the exchange, which frees the slot. A
 * request no route matches passes untouched. {@link #applyTo} adds the handler first in the exec
 * chain, so the slot covers HttpClient's own retries and redirects. Thread-safe.
 */
public final class BulkheadAsyncExecChainHandler implements AsyncExecChainHandler {

  private final Upstreams upstreams;

  private BulkheadAsyncExecChainHandler(UpstreamRoutes routes) {
    this.upstreams = new Upstreams(routes);
  }

  /** A handler that puts every request into {@code compartment}. */
  public static BulkheadAsyncExecChainHandler of(Bulkhead compartment) {
    return new BulkheadAsyncExecChainHandler(UpstreamRoutes.of(compartment));
  }

  /** A handler that routes each request by its URL; one no route matches passes untouched. */
  public static BulkheadAsyncExecChainHandler of(UpstreamRoutes routes) {
    return new BulkheadAsyncExecChainHandler(Objects.requireNonNull(routes, "routes"));
  }

  @Override
  public void execute(
      HttpRequest request,
      AsyncEntityProducer entityProducer,
      AsyncExecChain.Scope scope,
      AsyncExecChain chain,
      AsyncExecCallback callback)
      throws HttpException, IOException {
    HttpRoute target = scope.route;
    Optional<Bulkhead> route = upstreams.route(request, target);
    if (route.isEmpty()) {
      chain.proceed(request, entityProducer, scope, callback);
      return;
    }
    Bulkhead compartment = route.get();
    AsyncExchange exchange =
        new AsyncExchange(compartment, request, entityProducer, scope, chain, callback);
    CompletableFuture<Void> waiting = new CompletableFuture<>();
    scope.cancellableDependency.setDependency(() -> waiting.cancel(false));
    CompletableFuture<Void> admitted = compartment.submit(exchange::start);
    waiting.whenComplete(
        (ignored, cancelled) -> {
          if (cancelled != null) {
            admitted.cancel(false); // withdraws a waiting request; a started one is not affected
          }
        });
    admitted.whenComplete(
        (ignored, failure) -> {
          if (failure != null) {
            exchange.notStarted(unwrap(failure));
          }
        });
  }

  private static Throwable unwrap(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  /** Adds this handler first in {@code builder}'s exec chain. */
  public HttpAsyncClientBuilder applyTo(HttpAsyncClientBuilder builder) {
    return builder.addExecInterceptorFirst(BulkheadExecChainHandler.NAME, this);
  }

  /**
   * Raises {@code pool}'s maxima where they are below the routes' limits; see {@link
   * BulkheadExecChainHandler#agree}.
   */
  public void agree(ConnPoolControl<HttpRoute> pool) {
    upstreams.agree(Objects.requireNonNull(pool, "pool"));
  }

  @Override
  public String toString() {
    return "BulkheadAsyncExecChainHandler" + upstreams.routes().routes();
  }

  /** A refusal or a withdrawal, as the callback is told it. */
  static Exception notSent(Throwable failure) {
    if (failure instanceof BulkheadFullException) {
      return new CompartmentFullException((BulkheadFullException) failure);
    }
    if (failure instanceof CancellationException) {
      return (CancellationException) failure;
    }
    return failure instanceof Exception ? (Exception) failure : new IOException(failure);
  }
}
