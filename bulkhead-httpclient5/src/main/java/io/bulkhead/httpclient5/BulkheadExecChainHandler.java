package io.bulkhead.httpclient5;

import io.bulkhead.Bulkhead;
import io.bulkhead.httpclient.BodySlot;
import io.bulkhead.httpclient.CompartmentFullException;
import io.bulkhead.httpclient.UpstreamRoutes;
import io.bulkhead.httpclient.UpstreamUnavailableException;
import java.io.IOException;
import java.util.Objects;
import java.util.Optional;
import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.client5.http.classic.ExecChainHandler;
import org.apache.hc.client5.http.impl.classic.CloseableHttpResponse;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.io.ModalCloseable;
import org.apache.hc.core5.pool.ConnPoolControl;

/**
 * Puts a classic Apache HttpClient 5's requests into compartments, routed by URL ({@link
 * UpstreamRoutes}): a request takes a slot before it is sent, waiting as the compartment's {@code
 * max-queue} and {@code max-wait} allow, and holds it until its response's body is read to its end
 * or closed (the stream, the entity, or the response, {@code close(CloseMode.IMMEDIATE)} included:
 * the way to abandon a streamed body without reading the rest), not just until the headers arrive.
 * Needs HttpClient 5.6 or later.
 *
 * <pre>{@code
 * BulkheadExecChainHandler bulkheads = BulkheadExecChainHandler.of(UpstreamRoutes.builder()
 *     .route("https://llm.internal/v1", llm)
 *     .build());
 * PoolingHttpClientConnectionManager pool = PoolingHttpClientConnectionManagerBuilder.create().build();
 * bulkheads.agree(pool);
 * CloseableHttpClient client = bulkheads.applyTo(HttpClients.custom().setConnectionManager(pool)).build();
 * }</pre>
 *
 * <p><b>What the caller sees.</b> A full compartment fails the request with {@link
 * CompartmentFullException} (an {@code IOException}) carrying the compartment's retry hint; nothing
 * is sent. An upstream that answers {@code 503} or {@code 429} fails it with {@link
 * UpstreamUnavailableException}, carrying its {@code Retry-After}; the answer's body is read and
 * the slot freed first. A request no route matches passes untouched.
 *
 * <p><b>The body holds the slot</b> as it holds the connection: a response handler ({@code
 * execute(request, handler)}) always consumes it; a caller that takes the response closes it. A
 * response with no body, or one already read, frees the slot at once. {@link #applyTo} adds the
 * handler first in the chain, so the slot covers HttpClient's own retries and redirects, including
 * its retry of a {@code 503} after the upstream's {@code Retry-After} (disable automatic retries to
 * back off outside the slot). A request waiting for a slot holds its thread. Thread-safe.
 */
public final class BulkheadExecChainHandler implements ExecChainHandler {

  /** The name the handler has in the exec chain. */
  public static final String NAME = "bulkhead";

  private final Upstreams upstreams;

  private BulkheadExecChainHandler(UpstreamRoutes routes) {
    this.upstreams = new Upstreams(routes);
  }

  /** A handler that puts every request into {@code compartment}. */
  public static BulkheadExecChainHandler of(Bulkhead compartment) {
    return new BulkheadExecChainHandler(UpstreamRoutes.of(compartment));
  }

  /** A handler that routes each request by its URL; one no route matches passes untouched. */
  public static BulkheadExecChainHandler of(UpstreamRoutes routes) {
    return new BulkheadExecChainHandler(Objects.requireNonNull(routes, "routes"));
  }

  @Override
  public ClassicHttpResponse execute(
      ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain)
      throws IOException, HttpException {
    HttpRoute target = scope.route;
    Optional<Bulkhead> route = upstreams.route(request, target);
    if (route.isEmpty()) {
      return chain.proceed(request, scope);
    }
    Bulkhead compartment = route.get();
    BodySlot slot = BodySlot.acquire(compartment);
    ClassicHttpResponse response;
    try {
      response = chain.proceed(request, scope);
    } catch (IOException | HttpException | RuntimeException | Error e) {
      slot.free();
      throw e;
    }
    Optional<UpstreamUnavailableException> busy =
        Upstreams.busy(compartment, request, target, response);
    if (busy.isPresent()) {
      try {
        EntityUtils.consumeQuietly(response.getEntity()); // keeps the connection for the next
        response.close();
      } finally {
        slot.free();
      }
      throw busy.get();
    }
    HttpEntity entity = response.getEntity();
    if (entity == null || !entity.isStreaming()) {
      slot.free(); // nothing left to read: the connection is back already
      return response;
    }
    response.setEntity(new PermitEntity(entity, slot));
    // close(CloseMode.IMMEDIATE) discards the connection without closing the entity: free there
    // too.
    return CloseableHttpResponse.create(
        response,
        (inner, mode) -> {
          try {
            if (mode == CloseMode.IMMEDIATE && response instanceof ModalCloseable) {
              ((ModalCloseable) response).close(mode);
            } else {
              response.close();
            }
          } finally {
            slot.free();
          }
        });
  }

  /** Adds this handler first in {@code builder}'s exec chain. */
  public HttpClientBuilder applyTo(HttpClientBuilder builder) {
    return builder.addExecInterceptorFirst(NAME, this);
  }

  /**
   * Raises {@code pool}'s maxima where they are below the routes' limits, so that a request a
   * compartment admits never waits for a connection: per route, the sum of the limits of the
   * compartments routed to its host (both schemes for a host alone); in total, the sum of every
   * limit; for a handler of one compartment, the default per route. A request waiting in a
   * compartment holds no connection, so {@code max-queue} does not count. The sizes are those of
   * the limits at the time of the call.
   */
  public void agree(ConnPoolControl<HttpRoute> pool) {
    upstreams.agree(Objects.requireNonNull(pool, "pool"));
  }

  @Override
  public String toString() {
    return "BulkheadExecChainHandler" + upstreams.routes().routes();
  }
}
