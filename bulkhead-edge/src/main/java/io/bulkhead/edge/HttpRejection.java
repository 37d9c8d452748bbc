package io.bulkhead.edge;

import io.bulkhead.BulkheadFullException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/**
 * A full compartment's "no" in HTTP, ready for an edge to write with its own types: status {@value
 * #STATUS}, a {@code Retry-After} header, a content type and the body's bytes.
 *
 * <pre>
 * HTTP/1.1 503 Service Unavailable
 * Retry-After: 2
 * Content-Type: text/plain;charset=utf-8
 *
 * bulkhead 'llm' is full: retry after 2 s
 * </pre>
 *
 * <p>{@link #of} renders the body once and never fails for the body's sake: a {@link RejectionBody}
 * that throws or returns {@code null} is logged and replaced by the plain-text one.
 */
public final class HttpRejection {

  /** The status of every rejection: {@code 503 Service Unavailable}. */
  public static final int STATUS = 503;

  private static final Logger LOG = System.getLogger("io.bulkhead.edge");
  private static final long NANOS_PER_SECOND = 1_000_000_000L;

  private final String retryAfter;
  private final String contentType;
  private final byte[] body;

  private HttpRejection(long retryAfterSeconds, RejectionBody.Body body) {
    this.retryAfter = Long.toString(retryAfterSeconds);
    this.contentType = body.contentType();
    this.body = body.text().getBytes(StandardCharsets.UTF_8);
  }

  /** The answer to {@code rejection}, with {@code body} for its body. */
  public static HttpRejection of(BulkheadFullException rejection, RejectionBody body) {
    Objects.requireNonNull(rejection, "rejection");
    Objects.requireNonNull(body, "body");
    long seconds = retryAfterSeconds(rejection.retryAfter());
    RejectionBody.Body rendered = null;
    try {
      rendered = body.render(rejection, seconds);
    } catch (RuntimeException failure) {
      LOG.log(Level.WARNING, () -> failed(body, rejection, "failed"), failure);
    }
    if (rendered == null) {
      if (!(body instanceof StandardBody)) {
        LOG.log(Level.WARNING, () -> failed(body, rejection, "gave no body"));
      }
      rendered = StandardBody.PLAIN_TEXT.render(rejection, seconds);
    }
    return new HttpRejection(seconds, rendered);
  }

  /**
   * The failure an edge throws when asked to answer {@code rejection} on a response that has
   * already been committed: the status can no longer be {@value #STATUS}.
   */
  public static IllegalStateException alreadyCommitted(BulkheadFullException rejection) {
    return new IllegalStateException(
        "cannot send a 503 for bulkhead '"
            + rejection.bulkheadName()
            + "': the response has already been committed");
  }

  private static String failed(RejectionBody body, BulkheadFullException rejection, String what) {
    return "the rejection body "
        + body
        + " "
        + what
        + " for bulkhead '"
        + rejection.bulkheadName()
        + "'; sending the plain-text one";
  }

  /**
   * The {@code Retry-After} rule of every edge: {@code hint} (a compartment's {@link
   * BulkheadFullException#retryAfter()}) in whole seconds, rounded up so that a client never comes
   * back before the hint, and at least 1, as the header cannot say "less than a second" and 0
   * invites an immediate retry storm.
   */
  public static long retryAfterSeconds(Duration hint) {
    if (hint.isNegative()) {
      return 1;
    }
    long seconds = hint.getSeconds();
    if (hint.getNano() != 0 && seconds < Long.MAX_VALUE) {
      seconds++;
    }
    return Math.max(1, seconds);
  }

  /** The {@code Retry-After} header's value, in whole seconds. */
  public String retryAfter() {
    return retryAfter;
  }

  /** The {@code Content-Type} header's value. */
  public String contentType() {
    return contentType;
  }

  /**
   * The body, encoded in UTF-8. The array is this rejection's own, made when it was: write it, do
   * not change it.
   */
  public byte[] body() {
    return body;
  }

  @Override
  public String toString() {
    return STATUS + " Retry-After: " + retryAfter + " " + contentType;
  }
}
