package io.bulkhead.servlet;

import io.bulkhead.edge.testing.HeldApp;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A servlet that answers nothing until the test says so, so the test decides exactly when a slot
 * frees. A request is held on its container thread by a latch; paths containing /async are held in
 * the application's own async mode instead; /now answers at once and /throw throws.
 */
final class HeldServlet extends HttpServlet implements HeldApp {

  private static final long serialVersionUID = 1L;

  /** A request the servlet holds. */
  static final class Held implements HeldApp.Held {
    final String path;
    private final AsyncContext async; // null: held on its thread by `release`
    private final CountDownLatch release = new CountDownLatch(1);
    private volatile String body;

    Held(String path, AsyncContext async) {
      this.path = path;
      this.async = async;
    }

    @Override
    public String path() {
      return path;
    }

    /** Lets the servlet answer {@code body}. */
    @Override
    public void answer(String body) throws IOException {
      if (async == null) {
        this.body = body;
        release.countDown();
      } else {
        write((HttpServletResponse) async.getResponse(), body);
        async.complete();
      }
    }
  }

  private final BlockingQueue<Held> held = new LinkedBlockingQueue<>();
  private final List<String> seen = new CopyOnWriteArrayList<>();

  @Override
  protected void service(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    String path = request.getRequestURI();
    seen.add(path);
    if (path.contains("/now")) {
      write(response, "now " + path);
    } else if (path.contains("/throw")) {
      throw new IllegalStateException("the servlet failed on purpose");
    } else if (path.contains("/async")) {
      held.add(new Held(path, request.startAsync()));
    } else {
      Held h = new Held(path, null);
      held.add(h);
      try {
        if (!h.release.await(30, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the test never released " + path);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while holding " + path, e);
      }
      write(response, h.body);
    }
  }

  private static void write(HttpServletResponse response, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    response.setContentType("text/plain;charset=utf-8");
    response.setContentLength(bytes.length);
    response.getOutputStream().write(bytes);
  }

  /** The next request the servlet holds, waiting up to 10 s for it. */
  @Override
  public Held next() throws InterruptedException {
    Held h = held.poll(10, TimeUnit.SECONDS);
    if (h == null) {
      throw new AssertionError("no request reached the servlet within 10 s");
    }
    return h;
  }

  /** The request URIs that reached the servlet, in order. */
  List<String> seen() {
    return List.copyOf(seen);
  }
}
