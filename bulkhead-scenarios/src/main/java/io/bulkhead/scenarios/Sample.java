package io.bulkhead.scenarios;

/**
 * One request of a load run.
 *
 * @param route which route it called
 * @param sentAtNanos when it was sent, counted from the start of the run
 * @param latencyNanos from sending to the last byte of the answer (or to the failure)
 * @param status the HTTP status, or 0 if no answer came (refused connection, reset, timeout)
 */
public record Sample(Route route, long sentAtNanos, long latencyNanos, int status) {

  /** When the answer (or the failure) came, counted from the start of the run. */
  public long answeredAtNanos() {
    return sentAtNanos + latencyNanos;
  }
}
