package io.bulkhead.edge;

import io.bulkhead.BulkheadFullException;
import java.net.URI;
import java.util.Objects;

/**
 * The body of a full compartment's {@code 503}: one line of {@link #plainText() plain text} (the
 * Jetty and Servlet edges' default), an RFC 9457 {@link #problemJson() problem} (the Spring
 * starter's), or your API's own error format. The status and the {@code Retry-After} header are not
 * the body's to change; the edge sets them.
 *
 * <pre>{@code
 * RejectionBody busy = (rejection, retryAfterSeconds) -> new RejectionBody.Body(
 *     "application/json",
 *     "{\"error\":\"busy\",\"retryAfter\":" + retryAfterSeconds + "}");
 * BulkheadFilter.of(routes, busy);
 * }</pre>
 *
 * <p>It runs on the thread that refused the request (the server's, or the compartment's timer when
 * a wait ran out), holding no slot and no lock: keep it quick. If it throws or returns {@code
 * null}, the client gets the plain-text body and the failure is logged: a broken body never turns a
 * "busy" into a hang or a {@code 500}. The text is sent in UTF-8.
 */
@FunctionalInterface
public interface RejectionBody {

  /** The {@code type} of {@link #problemJson()}'s problem: the page that explains the answer. */
  URI PROBLEM_TYPE = URI.create("https://bulkhead.github.io/bulkhead/http-edges/#compartment-full");

  /** The {@code title} of {@link #problemJson()}'s problem. */
  String PROBLEM_TITLE = "Compartment full";

  /**
   * The body for {@code rejection}.
   *
   * @param retryAfterSeconds what the response's {@code Retry-After} header says
   */
  Body render(BulkheadFullException rejection, long retryAfterSeconds);

  /**
   * One line naming the compartment: {@code bulkhead 'llm' is full: retry after 2 s}, as {@code
   * text/plain;charset=utf-8}.
   */
  static RejectionBody plainText() {
    return StandardBody.PLAIN_TEXT;
  }

  /**
   * An {@code application/problem+json} document (RFC 9457) with the members {@code type} ({@link
   * #PROBLEM_TYPE}), {@code title} ({@link #PROBLEM_TITLE}), {@code status} (503), {@code detail}
   * (the exception's message), {@code compartment} (its name) and {@code reason} ({@code
   * queue_full}, {@code wait_timeout} or {@code interrupted}).
   */
  static RejectionBody problemJson() {
    return StandardBody.PROBLEM_JSON;
  }

  /**
   * A rendered body.
   *
   * @param contentType the {@code Content-Type} header, such as {@code application/problem+json}
   * @param text the body, sent in UTF-8
   */
  record Body(String contentType, String text) {

    /** Checks that neither is null. */
    public Body {
      Objects.requireNonNull(contentType, "contentType");
      Objects.requireNonNull(text, "text");
    }
  }
}
