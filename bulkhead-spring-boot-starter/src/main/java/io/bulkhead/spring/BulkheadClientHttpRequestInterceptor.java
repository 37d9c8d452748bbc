package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Permit;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Objects;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * Puts a {@code RestClient}'s calls into compartments: a call takes a slot before the request is
 * sent (waiting as the compartment's {@code max-queue} and {@code max-wait} allow) and frees it
 * when the response is closed, so the slot covers the whole exchange, body included. {@code
 * RestClient} closes the response once it has read the body ({@code retrieve().body(..)}, {@code
 * toEntity}, {@code exchange}); a caller that takes the body as a stream closes it itself. A
 * request that fails frees its slot at once. A full compartment throws {@link
 * io.bulkhead.BulkheadFullException} and sends nothing.
 *
 * <p>The auto-configuration adds one to every {@code RestClient.Builder} Spring Boot builds,
 * routing each request to the compartment whose {@code bulkhead.compartments.<name>.upstream}
 * matches it (the longest base path wins); a request that matches none passes untouched. For a
 * client of your own, {@link #of(io.bulkhead.Bulkhead)} puts all its calls into one compartment:
 *
 * <pre>{@code
 * RestClient llm = RestClient.builder().baseUrl(url)
 *     .requestInterceptor(BulkheadClientHttpRequestInterceptor.of(registry.bulkhead("llm").orElseThrow()))
 *     .build();
 * }</pre>
 */
public final class BulkheadClientHttpRequestInterceptor implements ClientHttpRequestInterceptor {

  private final UpstreamRouter router;

  private BulkheadClientHttpRequestInterceptor(UpstreamRouter router) {
    this.router = router;
  }

  /** An interceptor that puts every call of the client into {@code compartment}. */
  public static BulkheadClientHttpRequestInterceptor of(io.bulkhead.Bulkhead compartment) {
    Objects.requireNonNull(compartment, "compartment");
    return new BulkheadClientHttpRequestInterceptor(uri -> compartment);
  }

  /**
   * An interceptor that routes by upstream, longest base path first; for the auto-configuration.
   */
  static BulkheadClientHttpRequestInterceptor routing(
      BulkheadRegistry registry, List<CompartmentFactory.UpstreamRoute> routes) {
    return new BulkheadClientHttpRequestInterceptor(UpstreamRouter.byUpstream(registry, routes));
  }

  @Override
  public ClientHttpResponse intercept(
      HttpRequest request, byte[] body, ClientHttpRequestExecution execution) throws IOException {
    io.bulkhead.Bulkhead compartment = router.route(request.getURI());
    if (compartment == null) {
      return execution.execute(request, body);
    }
    Permit permit = compartment.acquire();
    ClientHttpResponse response;
    try {
      response = execution.execute(request, body);
    } catch (IOException | RuntimeException | Error e) {
      permit.close();
      throw e;
    }
    return new PermitHoldingResponse(response, permit);
  }

  /**
   * A response that frees its slot when it is closed (once: {@link Permit#close()} is idempotent).
   */
  private static final class PermitHoldingResponse implements ClientHttpResponse {
    private final ClientHttpResponse response;
    private final Permit permit;

    PermitHoldingResponse(ClientHttpResponse response, Permit permit) {
      this.response = response;
      this.permit = permit;
    }

    @Override
    public HttpStatusCode getStatusCode() throws IOException {
      return response.getStatusCode();
    }

    @Override
    public String getStatusText() throws IOException {
      return response.getStatusText();
    }

    @Override
    public HttpHeaders getHeaders() {
      return response.getHeaders();
    }

    @Override
    public InputStream getBody() throws IOException {
      return response.getBody();
    }

    @Override
    public void close() {
      try {
        response.close();
      } finally {
        permit.close();
      }
    }
  }
}
