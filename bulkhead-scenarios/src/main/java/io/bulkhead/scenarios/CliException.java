package io.bulkhead.scenarios;

/**
 * A failure the user can act on — a port in use, an upstream that does not answer — reported as one
 * line on standard error with a non-zero exit, never as a stack trace.
 */
public final class CliException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public CliException(String message) {
    super(message, null, false, false);
  }

  public CliException(String message, Throwable cause) {
    super(message, cause, false, false);
  }
}
