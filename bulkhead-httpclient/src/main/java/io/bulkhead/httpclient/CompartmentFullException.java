package io.bulkhead.httpclient;

import io.bulkhead.BulkheadFullException;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;

/**
 * A full compartment's refusal, for an HTTP client whose calls fail with {@link IOException}
 * (OkHttp, Apache HttpClient 5): the request was not sent. The compartment's own {@link
 * BulkheadFullException} is the cause; {@link #retryAfter()} is its hint, and the message is its
 * message.
 */
public class CompartmentFullException extends IOException {

  private static final long serialVersionUID = 1L;

  private final transient BulkheadFullException refusal;

  /**
   * Wraps {@code refusal}.
   *
   * @throws NullPointerException if {@code refusal} is null
   */
  public CompartmentFullException(BulkheadFullException refusal) {
    super(Objects.requireNonNull(refusal, "refusal").getMessage(), refusal);
    this.refusal = refusal;
  }

  /** The name of the compartment that said no. */
  public String bulkheadName() {
    return refusal.bulkheadName();
  }

  /** Why the call was not admitted. */
  public BulkheadFullException.Reason reason() {
    return refusal.reason();
  }

  /** How long the caller should wait before trying again; never negative. */
  public Duration retryAfter() {
    return refusal.retryAfter();
  }
}
