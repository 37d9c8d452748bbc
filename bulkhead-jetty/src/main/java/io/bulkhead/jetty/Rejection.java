package io.bulkhead.jetty;

import io.bulkhead.BulkheadFullException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Objects;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The HTTP form of a compartment's "no": {@code 503 Service Unavailable}, a {@code Retry-After}
 * header in whole seconds, and by default a one-line plain-text body naming the compartment (a
 * {@link RejectionBody} can say it in your API's own error format).
 *
 * <pre>
 * HTTP/1.1 503 Service Unavailable
 * Retry-After: 2
 * Content-Type: text/plain;charset=utf-8
 *
 * bulkhead 'llm' is full: retry after 2 s
 * </pre>
 *
 * <p>{@link BulkheadHandler} answers with it when a route's compartment rejects a request. A
 * handler that calls a dependency through its own compartment, for instance through an {@code
 * UpstreamClient}, answers the same way with {@link #send}, so that a client sees one kind of
 * "busy" whichever compartment said it.
 */
public final class Rejection {

  private static final Logger LOG = System.getLogger("io.bulkhead.jetty");

  private Rejection() {}

  /**
   * Writes the 503 for {@code rejection} with the default plain-text body and completes {@code
   * callback} when it has been sent.
   *
   * @throws IllegalStateException if the response has already been committed
   */
  public static void send(Response response, Callback callback, BulkheadFullException rejection) {
    send(response, callback, rejection, RejectionBody.plainText());
  }

  /**
   * Writes the 503 for {@code rejection}, with {@code body} for its body, and completes {@code
   * callback} when it has been sent. A body that throws or returns null is replaced by the default
   * one (see {@link RejectionBody}).
   *
   * @throws IllegalStateException if the response has already been committed
   */
  public static void send(
      Response response, Callback callback, BulkheadFullException rejection, RejectionBody body) {
    Objects.requireNonNull(response, "response");
    Objects.requireNonNull(callback, "callback");
    Objects.requireNonNull(rejection, "rejection");
    Objects.requireNonNull(body, "body");
    if (response.isCommitted()) {
      throw new IllegalStateException(
          "cannot send a 503 for bulkhead '"
              + rejection.bulkheadName()
              + "': the response has already been committed");
    }
    long seconds = rejection.retryAfterSeconds();
    response.setStatus(HttpStatus.SERVICE_UNAVAILABLE_503);
    HttpFields.Mutable headers = response.getHeaders();
    headers.put(HttpHeader.RETRY_AFTER, Long.toString(seconds));
    String text = null;
    try {
      text = body.render(rejection, seconds, headers);
    } catch (RuntimeException failure) {
      LOG.log(
          Level.WARNING,
          "the rejection body "
              + body
              + " failed for bulkhead '"
              + rejection.bulkheadName()
              + "'; sending the default one",
          failure);
    }
    if (text == null) {
      if (body != RejectionBody.plainText()) {
        LOG.log(
            Level.WARNING,
            "the rejection body "
                + body
                + " gave no body for bulkhead '"
                + rejection.bulkheadName()
                + "'; sending the default one");
      }
      headers.remove(HttpHeader.CONTENT_TYPE);
      text = RejectionBody.plainText().render(rejection, seconds, headers);
    }
    headers.put(HttpHeader.RETRY_AFTER, Long.toString(seconds)); // whatever the body did to it
    Content.Sink.write(response, true, text, callback);
  }
}
