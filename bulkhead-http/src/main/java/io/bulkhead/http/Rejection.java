package io.bulkhead.http;

import io.bulkhead.BulkheadFullException;
import java.time.Duration;
import java.util.Objects;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The HTTP form of a compartment's "no": {@code 503 Service Unavailable}, a {@code Retry-After} header
 * in whole seconds, and a one-line plain-text body naming the compartment.
 *
 * <pre>
 * HTTP/1.1 503 Service Unavailable
 * Retry-After: 2
 * Content-Type: text/plain;charset=utf-8
 *
 * bulkhead 'llm' is full: retry after 2 s
 * </pre>
 *
 * <p>{@link BulkheadHandler} answers with it when a route's compartment rejects a request. A handler
 * that calls a dependency through its own compartment, for instance through an {@link UpstreamClient},
 * answers the same way with {@link #send}, so that a client sees one kind of "busy" whichever
 * compartment said it.
 */
public final class Rejection {

  private Rejection() {}

  /**
   * Writes the 503 for {@code rejection} and completes {@code callback} when it has been sent.
   *
   * @throws IllegalStateException if the response has already been committed
   */
  public static void send(Response response, Callback callback, BulkheadFullException rejection) {
    Objects.requireNonNull(response, "response");
    Objects.requireNonNull(callback, "callback");
    Objects.requireNonNull(rejection, "rejection");
    if (response.isCommitted()) {
      throw new IllegalStateException("cannot send a 503 for bulkhead '" + rejection.bulkheadName()
          + "': the response has already been committed");
    }
    long seconds = retryAfterSeconds(rejection.retryAfter());
    response.setStatus(HttpStatus.SERVICE_UNAVAILABLE_503);
    response.getHeaders().put(HttpHeader.RETRY_AFTER, Long.toString(seconds));
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
    Content.Sink.write(response, true,
        "bulkhead '" + rejection.bulkheadName() + "' is full: retry after " + seconds + " s\n",
        callback);
  }

  /**
   * The {@code Retry-After} value for a hint: whole seconds, rounded up so a client never comes back
   * before the hint, and at least 1 (the header cannot say "less than a second", and 0 invites an
   * immediate retry storm).
   */
  public static long retryAfterSeconds(Duration retryAfter) {
    Objects.requireNonNull(retryAfter, "retryAfter");
    if (retryAfter.isNegative()) {
      return 1;
    }
    long seconds = retryAfter.getSeconds();
    if (retryAfter.getNano() > 0 && seconds < Long.MAX_VALUE) {
      seconds++;
    }
    return Math.max(1, seconds);
  }
}
