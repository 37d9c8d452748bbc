package io.bulkhead.jetty;

import io.bulkhead.BulkheadFullException;
import org.eclipse.jetty.http.HttpFields;

/**
 * The body of a compartment's {@code 503}, for APIs whose clients expect their own error format
 * (JSON, {@code application/problem+json}) rather than the default line of plain text. The status
 * and the {@code Retry-After} header are not the body's to change: {@link Rejection} sets them
 * before it asks.
 *
 * <pre>{@code
 * BulkheadHandler.builder()
 *     .route("/chat", llm)
 *     .rejectionBody((rejection, retryAfterSeconds, headers) -> {
 *       headers.put(HttpHeader.CONTENT_TYPE, "application/problem+json");
 *       return "{\"title\":\"busy\",\"status\":503,\"retryAfter\":" + retryAfterSeconds + "}";
 *     })
 *     .build();
 * }</pre>
 *
 * <p>It runs on the thread that rejected the request (Jetty's, or the compartment's timer when a
 * wait ran out), holding no slot and no lock; keep it quick. If it throws or returns {@code null},
 * the client gets the default body and the failure is logged: a broken body never turns a "busy"
 * into a hang or a {@code 500}.
 */
@FunctionalInterface
public interface RejectionBody {

  /**
   * Returns the body for {@code rejection}, after setting its {@code Content-Type} (and any other
   * header of its own) in {@code headers}.
   *
   * @param retryAfterSeconds what the response's {@code Retry-After} header says
   */
  String render(
      BulkheadFullException rejection, long retryAfterSeconds, HttpFields.Mutable headers);

  /** The default: one line of plain text naming the compartment. */
  static RejectionBody plainText() {
    return PlainText.INSTANCE;
  }
}

enum PlainText implements RejectionBody {
  INSTANCE;

  @Override
  public String render(
      BulkheadFullException rejection, long retryAfterSeconds, HttpFields.Mutable headers) {
    headers.put(org.eclipse.jetty.http.HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
    return "bulkhead '"
        + rejection.bulkheadName()
        + "' is full: retry after "
        + retryAfterSeconds
        + " s\n";
  }
}
