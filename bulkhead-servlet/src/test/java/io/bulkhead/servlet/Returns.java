package io.bulkhead.servlet;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The test's own filter, in front of the filter under test. It records when a dispatch has come
 * back out of the chain (so a test knows a container thread has let go of a request), and shortens
 * a request's async timeout to the milliseconds of its {@value #ASYNC_TIMEOUT} header, as an
 * application or a container setting could.
 */
final class Returns implements Filter {

  static final String ASYNC_TIMEOUT = "X-Async-Timeout-Millis";

  private final Set<String> returned = ConcurrentHashMap.newKeySet();

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest request = (HttpServletRequest) req;
    String dispatch = request.getDispatcherType() + " " + request.getRequestURI();
    try {
      chain.doFilter(req, res);
      String timeout = request.getHeader(ASYNC_TIMEOUT);
      if (timeout != null && request.isAsyncStarted()) {
        request.getAsyncContext().setTimeout(Long.parseLong(timeout));
      }
    } finally {
      returned.add(dispatch);
    }
  }

  /** Whether a dispatch such as {@code "REQUEST /chat/a"} has returned out of the chain. */
  boolean hasReturned(String dispatch) {
    return returned.contains(dispatch);
  }
}
