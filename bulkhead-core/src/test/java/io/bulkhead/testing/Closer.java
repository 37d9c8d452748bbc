package io.bulkhead.testing;

import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Closes what a test opened, last opened first, after each test: register it with
 * {@code @RegisterExtension final Closer closer = new Closer();} and wrap what the test opens in
 * {@link #closeLater}. Every resource is closed even when an earlier one fails to close; the first
 * failure is thrown with the others suppressed. Shared with the other modules' tests through
 * bulkhead-core's test-jar.
 */
public final class Closer implements AfterEachCallback {

  private final Deque<AutoCloseable> open = new ArrayDeque<>();

  /** Returns {@code resource}, to be closed after the test. */
  public <T extends AutoCloseable> T closeLater(T resource) {
    open.push(resource);
    return resource;
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    Exception first = null;
    for (AutoCloseable c; (c = open.poll()) != null; ) {
      try {
        c.close();
      } catch (Exception e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
