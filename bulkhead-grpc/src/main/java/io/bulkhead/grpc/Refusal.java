package io.bulkhead.grpc;

import io.bulkhead.BulkheadFullException;
import io.grpc.Metadata;
import io.grpc.Status;

/** How a compartment's refusal looks on the wire: {@code UNAVAILABLE} and a pushback trailer. */
final class Refusal {

  private Refusal() {}

  /**
   * {@code UNAVAILABLE} (retryable), described by the exception's message, which names the
   * compartment, the reason and the retry hint; the exception is the status's cause (not sent).
   */
  static Status status(BulkheadFullException rejection) {
    return Status.UNAVAILABLE.withDescription(rejection.getMessage()).withCause(rejection);
  }

  /** Trailers holding {@code grpc-retry-pushback-ms}: the retry hint in milliseconds. */
  static Metadata trailers(BulkheadFullException rejection) {
    Metadata trailers = new Metadata();
    trailers.put(
        BulkheadServerInterceptor.RETRY_PUSHBACK_MS,
        Long.toString(saturatedMillis(rejection.retryAfter())));
    return trailers;
  }

  private static long saturatedMillis(java.time.Duration hint) {
    try {
      return hint.toMillis();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }

  /**
   * The refusal inside {@code failure}, a {@link java.util.concurrent.CompletionException} or not.
   */
  static BulkheadFullException find(Throwable failure) {
    Throwable cause = failure;
    while (cause != null) {
      if (cause instanceof BulkheadFullException rejection) {
        return rejection;
      }
      cause = cause.getCause();
    }
    return null;
  }
}
