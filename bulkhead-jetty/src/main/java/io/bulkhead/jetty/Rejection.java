package io.bulkhead.jetty;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.edge.HttpRejection;
import io.bulkhead.edge.RejectionBody;
import java.nio.ByteBuffer;
import java.util.Objects;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Writes a full compartment's {@link HttpRejection} with Jetty's types: {@code 503}, {@code
 * Retry-After} and the body. {@link BulkheadHandler} answers with it; a handler that calls a
 * dependency through a compartment of its own (an {@code UpstreamClient}, say) answers its {@link
 * BulkheadFullException} the same way, so a client sees one kind of "busy" whichever compartment
 * said it.
 */
public final class Rejection {

  private Rejection() {}

  /**
   * Writes the 503 with the plain-text body; see {@link #send(Response, Callback,
   * BulkheadFullException, RejectionBody)}.
   */
  public static void send(Response response, Callback callback, BulkheadFullException rejection) {
    send(response, callback, rejection, RejectionBody.plainText());
  }

  /**
   * Writes the 503 for {@code rejection} with {@code body}, and completes {@code callback} once it
   * is sent.
   *
   * @throws IllegalStateException if the response has already been committed
   */
  public static void send(
      Response response, Callback callback, BulkheadFullException rejection, RejectionBody body) {
    Objects.requireNonNull(response, "response");
    Objects.requireNonNull(callback, "callback");
    Objects.requireNonNull(rejection, "rejection");
    if (response.isCommitted()) {
      throw HttpRejection.alreadyCommitted(rejection);
    }
    HttpRejection answer = HttpRejection.of(rejection, body);
    response.setStatus(HttpRejection.STATUS);
    HttpFields.Mutable headers = response.getHeaders();
    headers.put(HttpHeader.RETRY_AFTER, answer.retryAfter());
    headers.put(HttpHeader.CONTENT_TYPE, answer.contentType());
    headers.put(HttpHeader.CONTENT_LENGTH, answer.body().length);
    response.write(true, ByteBuffer.wrap(answer.body()), callback);
  }
}
