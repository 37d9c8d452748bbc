package io.bulkhead.jetty;

import io.bulkhead.edge.testing.HeldApp;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * A handler that answers nothing until the test says so: each request it receives is kept, with its
 * callback, so the test decides exactly when a slot frees. Paths containing /now answer at once,
 * /unhandled is declined (returns false) and /throw throws.
 */
final class HeldRequests extends Handler.Abstract implements HeldApp {

  /** A request the handler holds. */
  static final class Held implements HeldApp.Held {
    final Request request;
    final Response response;
    final Callback callback;
    final String thread;

    Held(Request request, Response response, Callback callback) {
      this.request = request;
      this.response = response;
      this.callback = callback;
      this.thread = Thread.currentThread().getName();
    }

    @Override
    public String path() {
      return Request.getPathInContext(request);
    }

    @Override
    public void answer(String body) {
      Content.Sink.write(response, true, body, callback);
    }
  }

  private final BlockingQueue<Held> held = new LinkedBlockingQueue<>();

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    String path = Request.getPathInContext(request);
    if (path.contains("/now")) {
      Content.Sink.write(response, true, "now " + path, callback);
      return true;
    }
    if (path.startsWith("/unhandled")) {
      return false;
    }
    if (path.startsWith("/throw")) {
      throw new IllegalStateException("the handler failed on purpose");
    }
    held.add(new Held(request, response, callback));
    return true;
  }

  /** The next request the handler received, waiting up to 10 s for it. */
  @Override
  public Held next() throws InterruptedException {
    Held h = held.poll(10, TimeUnit.SECONDS);
    if (h == null) {
      throw new AssertionError("no request reached the handler within 10 s");
    }
    return h;
  }

  /** The next request if one arrives within {@code millis}, else null. */
  Held poll(long millis) throws InterruptedException {
    return held.poll(millis, TimeUnit.MILLISECONDS);
  }

  int count() {
    return held.size();
  }
}
