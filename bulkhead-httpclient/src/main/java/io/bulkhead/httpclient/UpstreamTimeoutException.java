package io.bulkhead.httpclient;

/**
 * A call through an {@link UpstreamClient} did not finish within the client's deadline. The
 * exchange was aborted and its connection closed before this was reported, so the call's slot is
 * free and the connection no longer counts against the upstream. An HTTP edge usually answers it
 * with {@code 504 Gateway Timeout}.
 */
public class UpstreamTimeoutException extends UpstreamException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception for the upstream named {@code upstream}.
   *
   * @throws NullPointerException if {@code upstream} or {@code message} is null
   */
  public UpstreamTimeoutException(String upstream, String message) {
    super(upstream, message, null);
  }
}
