package io.bulkhead.httpclient;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.Permit;
import java.io.Closeable;
import java.io.IOException;
import java.util.Objects;

/**
 * A call's slot held by its response body, for a client edge that wraps the body (OkHttp's
 * interceptor, HttpClient 5's handler): freed when the body ends, that is when a read reaches its
 * end ({@code -1}) or fails, or the body is closed. {@link Permit#close()} is idempotent and
 * thread-safe, so whichever comes first frees the slot, once. Thread-safe.
 */
public final class BodySlot {

  /** A read from the wrapped body: the count read, or -1 at its end. */
  @FunctionalInterface
  public interface Read {
    /** Reads; -1 at the end of the body. */
    long read() throws IOException;
  }

  private final Permit permit;

  private BodySlot(Permit permit) {
    this.permit = permit;
  }

  /**
   * Takes a slot of {@code compartment}, waiting as it allows.
   *
   * @throws CompartmentFullException if the compartment refused: nothing is to be sent
   */
  public static BodySlot acquire(Bulkhead compartment) throws CompartmentFullException {
    Objects.requireNonNull(compartment, "compartment");
    try {
      return new BodySlot(compartment.acquire());
    } catch (BulkheadFullException refused) {
      throw new CompartmentFullException(refused);
    }
  }

  /** Runs {@code read}; frees the slot if it reached the end of the body or failed. */
  public long read(Read read) throws IOException {
    boolean ended = true;
    try {
      long count = read.read();
      ended = count == -1;
      return count;
    } finally {
      if (ended) {
        permit.close();
      }
    }
  }

  /**
   * Runs {@code last} (the body's close, or its last write), then frees the slot even if it failed.
   */
  public void free(Closeable last) throws IOException {
    try {
      last.close();
    } finally {
      permit.close();
    }
  }

  /** Frees the slot (the body was closed, the call failed, or it has nothing to read); once. */
  public void free() {
    permit.close();
  }
}
