package io.bulkhead.demo;

/**
 * A failure the user can act on — a port in use, an upstream that does not answer — reported as one
 * line on standard error with a non-zero exit, never as a stack trace.
 */
final class CliException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  CliException(String message) {
    super(message, null, false, false);
  }

  CliException(String message, Throwable cause) {
    super(message, cause, false, false);
  }
}
