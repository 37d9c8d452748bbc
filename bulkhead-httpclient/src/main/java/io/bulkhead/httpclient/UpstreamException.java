package io.bulkhead.httpclient;

import java.io.IOException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A call through an {@link UpstreamClient} reached the upstream but did not get an answer: the
 * connection could not be made, was reset, or the exchange failed. An HTTP edge usually answers it
 * with {@code 502 Bad Gateway}.
 *
 * <p>Distinct from {@link io.bulkhead.BulkheadFullException}, where the upstream was never called
 * because its compartment was full ({@code 503}), and from its subclass {@link
 * UpstreamTimeoutException}, where the call's deadline passed ({@code 504}). An answer the upstream
 * did give is a response and not an exception, except a busy one ({@code 503}, {@code 429}) where
 * the client turns it into its subclass {@link UpstreamUnavailableException}.
 */
public class UpstreamException extends IOException {

  private static final long serialVersionUID = 1L;

  private final String upstream;

  /**
   * Creates the exception for the upstream named {@code upstream}.
   *
   * @throws NullPointerException if {@code upstream} or {@code message} is null
   */
  public UpstreamException(String upstream, String message, @Nullable Throwable cause) {
    super(Objects.requireNonNull(message, "message"), cause);
    this.upstream = Objects.requireNonNull(upstream, "upstream");
  }

  /** The name of the upstream, which is the name of its compartment. */
  public String upstream() {
    return upstream;
  }
}
