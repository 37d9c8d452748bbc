package io.bulkhead;

import io.bulkhead.internal.Durations;
import java.time.Duration;
import java.util.Objects;

/**
 * The fast, typed "no" of a compartment: the call was not admitted and the dependency was not
 * called.
 *
 * <p>It is a control-flow signal on a hot path, so it carries no stack trace and builds its message
 * only when asked. {@link #retryAfter()} is a hint for the caller (an HTTP edge puts it into a
 * {@code Retry-After} header): the compartment's estimate of when a slot is likely to be free, from
 * the observed service time of recent calls and the number of callers already waiting.
 */
public final class BulkheadFullException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Why a call was not admitted. */
  public enum Reason {
    /**
     * Every slot was taken and no more callers may wait (the queue was full, or its bound is 0).
     */
    QUEUE_FULL,
    /** The caller waited for {@code maxWait} and no slot was handed to it. */
    WAIT_TIMEOUT,
    /**
     * The waiting thread was interrupted before it was handed a slot. The thread's interrupt status
     * is set again before this exception is thrown.
     */
    INTERRUPTED
  }

  private final String bulkheadName;
  private final Reason reason;
  private final long retryAfterNanos;

  /**
   * Creates the exception. Integrations that reject on a compartment's behalf (a cluster-wide
   * compartment, say) use this constructor.
   *
   * @throws NullPointerException if any argument is null
   * @throws IllegalArgumentException if {@code retryAfter} is negative
   */
  public BulkheadFullException(String bulkheadName, Reason reason, Duration retryAfter) {
    this(
        Objects.requireNonNull(bulkheadName, "bulkheadName"),
        Objects.requireNonNull(reason, "reason"),
        Durations.toNanosSaturated(requireNotNegative(retryAfter)));
  }

  BulkheadFullException(String bulkheadName, Reason reason, long retryAfterNanos) {
    super(null, null, false, false);
    this.bulkheadName = bulkheadName;
    this.reason = reason;
    this.retryAfterNanos = retryAfterNanos;
  }

  private static Duration requireNotNegative(Duration retryAfter) {
    Objects.requireNonNull(retryAfter, "retryAfter");
    if (retryAfter.isNegative()) {
      throw new IllegalArgumentException("retryAfter must not be negative but was " + retryAfter);
    }
    return retryAfter;
  }

  /** Returns the name of the compartment that said no. */
  public String bulkheadName() {
    return bulkheadName;
  }

  /** Returns why the call was not admitted. */
  public Reason reason() {
    return reason;
  }

  /** Returns how long the caller should wait before trying again; never negative. */
  public Duration retryAfter() {
    return Duration.ofNanos(retryAfterNanos);
  }

  @Override
  public String getMessage() {
    String why;
    switch (reason) {
      case QUEUE_FULL:
        why = "every slot is taken and no more callers may wait";
        break;
      case WAIT_TIMEOUT:
        why = "no slot was free within the maximum wait";
        break;
      default:
        why = "the thread was interrupted while it waited for a slot";
        break;
    }
    return "bulkhead '"
        + bulkheadName
        + "' is full ("
        + reason
        + "): "
        + why
        + "; retry after "
        + Durations.format(retryAfterNanos);
  }
}
