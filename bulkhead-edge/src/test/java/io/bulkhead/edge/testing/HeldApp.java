package io.bulkhead.edge.testing;

import java.io.IOException;

/**
 * An application behind an edge that answers nothing until the test says so, so the test decides
 * exactly when a slot frees. Each edge's tests have one in their own framework's types.
 */
public interface HeldApp {

  /** The next request the application holds, waiting up to 10 s for it. */
  Held next() throws InterruptedException;

  /** A request the application holds. */
  interface Held {

    /** The request's path. */
    String path();

    /** Answers {@code 200} with {@code body}. */
    void answer(String body) throws IOException;
  }
}
