package io.bulkhead.servlet;

import io.bulkhead.BulkheadFullException;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

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
 * <p>{@link BulkheadFilter} answers with it when a route's compartment rejects a request. A servlet
 * that calls a dependency through a compartment of its own answers the same way with {@link #send},
 * so that a client sees one kind of "busy" whichever compartment said it.
 */
public final class Rejection {

  private static final Logger LOG = System.getLogger("io.bulkhead.servlet");
  private static final String RETRY_AFTER = "Retry-After";

  private Rejection() {}

  /**
   * Writes the 503 for {@code rejection} with the default plain-text body.
   *
   * @throws IllegalStateException if the response has already been committed
   * @throws IOException if the body cannot be written (the client has gone, typically)
   */
  public static void send(HttpServletResponse response, BulkheadFullException rejection)
      throws IOException {
    send(response, rejection, RejectionBody.plainText());
  }

  /**
   * Writes the 503 for {@code rejection}, with {@code body} for its body. A body that throws or
   * returns null is replaced by the default one (see {@link RejectionBody}).
   *
   * @throws IllegalStateException if the response has already been committed
   * @throws IOException if the body cannot be written (the client has gone, typically)
   */
  public static void send(
      HttpServletResponse response, BulkheadFullException rejection, RejectionBody body)
      throws IOException {
    Objects.requireNonNull(response, "response");
    Objects.requireNonNull(rejection, "rejection");
    Objects.requireNonNull(body, "body");
    if (response.isCommitted()) {
      throw new IllegalStateException(
          "cannot send a 503 for bulkhead '"
              + rejection.bulkheadName()
              + "': the response has already been committed");
    }
    long seconds = rejection.retryAfterSeconds();
    response.setStatus(HttpServletResponse.SC_SERVICE_UNAVAILABLE);
    response.setHeader(RETRY_AFTER, Long.toString(seconds));
    String text = null;
    try {
      text = body.render(rejection, seconds, response);
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
      text = RejectionBody.plainText().render(rejection, seconds, response);
    }
    response.setStatus(HttpServletResponse.SC_SERVICE_UNAVAILABLE); // whatever the body did to them
    response.setHeader(RETRY_AFTER, Long.toString(seconds));
    writeBody(response, text);
  }

  /** Writes {@code text} as the whole body, in the response's encoding, with its exact length. */
  static void writeBody(HttpServletResponse response, String text) throws IOException {
    String encoding = response.getCharacterEncoding(); // the Servlet default when none was set
    Charset charset = encoding == null ? StandardCharsets.ISO_8859_1 : Charset.forName(encoding);
    byte[] bytes = text.getBytes(charset);
    response.setContentLength(bytes.length);
    OutputStream out = response.getOutputStream();
    out.write(bytes);
  }
}
