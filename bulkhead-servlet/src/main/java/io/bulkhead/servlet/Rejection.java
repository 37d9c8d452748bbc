package io.bulkhead.servlet;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.edge.HttpRejection;
import io.bulkhead.edge.RejectionBody;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Writes a full compartment's {@link HttpRejection} with the Servlet API: {@code 503}, {@code
 * Retry-After} and the body. {@link BulkheadFilter} answers with it; a servlet that calls a
 * dependency through a compartment of its own answers its {@link BulkheadFullException} the same
 * way, so a client sees one kind of "busy" whichever compartment said it.
 */
public final class Rejection {

  private Rejection() {}

  /**
   * Writes the 503 with the plain-text body; see {@link #send(HttpServletResponse,
   * BulkheadFullException, RejectionBody)}.
   */
  public static void send(HttpServletResponse response, BulkheadFullException rejection)
      throws IOException {
    send(response, rejection, RejectionBody.plainText());
  }

  /**
   * Writes the 503 for {@code rejection} with {@code body}.
   *
   * @throws IllegalStateException if the response has already been committed
   * @throws IOException if the body cannot be written (the client has gone, typically)
   */
  public static void send(
      HttpServletResponse response, BulkheadFullException rejection, RejectionBody body)
      throws IOException {
    Objects.requireNonNull(response, "response");
    Objects.requireNonNull(rejection, "rejection");
    if (response.isCommitted()) {
      throw HttpRejection.alreadyCommitted(rejection);
    }
    HttpRejection answer = HttpRejection.of(rejection, body);
    write(response, answer.retryAfter(), answer.contentType(), answer.body());
  }

  /** A bare 503 in plain text, without {@code Retry-After}: no compartment said when. */
  static void sendWithoutHint(HttpServletResponse response, String text) throws IOException {
    write(response, null, "text/plain;charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
  }

  private static void write(
      HttpServletResponse response, @Nullable String retryAfter, String contentType, byte[] body)
      throws IOException {
    response.setStatus(HttpRejection.STATUS);
    if (retryAfter != null) {
      response.setHeader("Retry-After", retryAfter);
    }
    response.setContentType(contentType);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }
}
