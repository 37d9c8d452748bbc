package io.bulkhead.redis;

/** The lease store did not answer: disconnected, timed out, or refused the command. */
final class StoreUnavailableException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  StoreUnavailableException(String message, Throwable cause) {
    super(message, cause, false, false);
  }
}
