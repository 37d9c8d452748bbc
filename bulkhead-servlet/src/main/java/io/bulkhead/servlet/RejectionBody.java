package io.bulkhead.servlet;

import io.bulkhead.BulkheadFullException;
import jakarta.servlet.http.HttpServletResponse;

/**
 * The body of a compartment's {@code 503}, for APIs whose clients expect their own error format
 * (JSON, {@code application/problem+json}) rather than the default line of plain text. The status
 * and the {@code Retry-After} header are not the body's to change: {@link Rejection} sets them
 * before it asks, and sets {@code Retry-After} again afterwards.
 *
 * <pre>{@code
 * BulkheadFilter.builder()
 *     .route("/chat/*", llm)
 *     .rejectionBody((rejection, retryAfterSeconds, response) -> {
 *       response.setContentType("application/problem+json;charset=utf-8");
 *       return "{\"title\":\"busy\",\"status\":503,\"retryAfter\":" + retryAfterSeconds + "}";
 *     })
 *     .build();
 * }</pre>
 *
 * <p>Set headers on {@code response} (its content type, a header of your own) but do not write to
 * it: return the body, and {@link Rejection} writes it in the response's character encoding. It
 * runs on the thread that rejected the request (the container's, or one the container lends for an
 * asynchronous request), holding no slot and no lock; keep it quick. If it throws or returns {@code
 * null}, the client gets the default body and the failure is logged: a broken body never turns a
 * "busy" into a hang or a {@code 500}.
 *
 * <p>This is the servlet twin of the Jetty edge's {@code io.bulkhead.jetty.RejectionBody}; the two
 * modules do not depend on each other's framework, so each has its own.
 */
@FunctionalInterface
public interface RejectionBody {

  /**
   * Returns the body for {@code rejection}, after setting its content type (and any other header of
   * its own) on {@code response}.
   *
   * @param retryAfterSeconds what the response's {@code Retry-After} header says
   */
  String render(
      BulkheadFullException rejection, long retryAfterSeconds, HttpServletResponse response);

  /** The default: one line of plain text naming the compartment. */
  static RejectionBody plainText() {
    return PlainText.INSTANCE;
  }
}

enum PlainText implements RejectionBody {
  INSTANCE;

  @Override
  public String render(
      BulkheadFullException rejection, long retryAfterSeconds, HttpServletResponse response) {
    response.setContentType("text/plain;charset=utf-8");
    return "bulkhead '"
        + rejection.bulkheadName()
        + "' is full: retry after "
        + retryAfterSeconds
        + " s\n";
  }
}
