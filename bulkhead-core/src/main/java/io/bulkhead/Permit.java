package io.bulkhead;

/**
 * One slot of a compartment, held until it is closed.
 *
 * <p>A permit is what {@link Bulkhead#tryAcquire()} and {@link Bulkhead#acquire()} hand out, for
 * callers that hold a slot across callbacks or for the length of a streamed response. Closing it
 * frees the slot (or hands it straight to the oldest waiter). Closing it again, from any thread,
 * does nothing: the slot is freed exactly once.
 *
 * <pre>{@code
 * try (Permit permit = reports.acquire()) {
 *   streamReport(out);
 * }
 * }</pre>
 *
 * <p>This class is thread-safe.
 */
public interface Permit extends AutoCloseable {

  /** Frees the slot the first time it is called; later calls do nothing. Never throws. */
  @Override
  void close();

  /** Returns true once {@link #close()} has been called. */
  boolean isClosed();
}
