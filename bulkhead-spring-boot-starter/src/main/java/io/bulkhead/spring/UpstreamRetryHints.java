package io.bulkhead.spring;

import io.bulkhead.httpclient.RetryAfter;
import io.bulkhead.httpclient.UpstreamUnavailableException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.springframework.http.HttpHeaders;
import org.springframework.util.ClassUtils;
import org.springframework.web.client.RestClientResponseException;
import org.springframework.web.reactive.function.client.WebClientResponseException;

/**
 * The retry hint of a failed {@code RestClient} or {@code WebClient} call, for a caller that backs
 * off before it tries again. Spring already fails a call whose upstream answered {@code 503} or
 * {@code 429} with its own typed exception ({@code HttpServerErrorException.ServiceUnavailable},
 * {@code WebClientResponseException.ServiceUnavailable}, their {@code TooManyRequests}), which
 * carries the answer's headers; this reads its {@code Retry-After} the way every client edge does
 * ({@link RetryAfter#parse}). A full compartment's {@link io.bulkhead.BulkheadFullException} gives
 * the compartment's hint ({@link RetryAfter#of}).
 *
 * <pre>{@code
 * try {
 *   return llm.get().uri("/chat").retrieve().body(String.class);
 * } catch (RestClientException | BulkheadFullException e) {
 *   Optional<Duration> hint = UpstreamRetryHints.of(e);  // empty: not a "come back later"
 * }
 * }</pre>
 */
public final class UpstreamRetryHints {

  private static final boolean WEBFLUX =
      ClassUtils.isPresent(
          "org.springframework.web.reactive.function.client.WebClientResponseException",
          UpstreamRetryHints.class.getClassLoader());

  private UpstreamRetryHints() {}

  /**
   * The hint {@code failure} carries: a busy answer's {@code Retry-After} (empty when it sent none
   * that parses), or what {@link RetryAfter#of} finds in it and its causes.
   */
  public static Optional<Duration> of(Throwable failure) {
    Objects.requireNonNull(failure, "failure");
    if (failure instanceof RestClientResponseException) {
      RestClientResponseException answer = (RestClientResponseException) failure;
      return busy(answer.getStatusCode().value(), answer.getResponseHeaders());
    }
    if (WEBFLUX && WebFlux.isAnswer(failure)) {
      return WebFlux.hint(failure);
    }
    return RetryAfter.of(failure);
  }

  private static Optional<Duration> busy(int status, HttpHeaders headers) {
    if (!UpstreamUnavailableException.isBusy(status) || headers == null) {
      return Optional.empty();
    }
    return RetryAfter.parse(headers.getFirst(RetryAfter.HEADER), Instant.now());
  }

  /** Loaded only when WebFlux is present. */
  private static final class WebFlux {
    static boolean isAnswer(Throwable failure) {
      return failure instanceof WebClientResponseException;
    }

    static Optional<Duration> hint(Throwable failure) {
      WebClientResponseException answer = (WebClientResponseException) failure;
      return busy(answer.getStatusCode().value(), answer.getHeaders());
    }
  }
}
