package io.bulkhead.edge;

import io.bulkhead.Bulkhead;
import java.util.Objects;

/**
 * Where an HTTP edge sends a request: {@link Through through} a compartment, or straight on to the
 * application ({@link Bypass}), as a request no route matches goes.
 *
 * <pre>{@code
 * if (routes.route(path) instanceof Route.Through through) {
 *   enter(through.bulkhead(), request);   // waits for a slot, or answers 503
 * } else {
 *   next.handle(request);
 * }
 * }</pre>
 */
public sealed interface Route {

  /** The route through {@code bulkhead}. */
  static Route through(Bulkhead bulkhead) {
    return new Through(bulkhead);
  }

  /** The route that skips every compartment. */
  static Route bypass() {
    return Bypass.INSTANCE;
  }

  /**
   * A request on this route enters {@code bulkhead} before the application sees it.
   *
   * @param bulkhead the compartment
   */
  record Through(Bulkhead bulkhead) implements Route {

    /** Checks the compartment. */
    public Through {
      Objects.requireNonNull(bulkhead, "bulkhead");
    }

    @Override
    public String toString() {
      return "bulkhead '" + bulkhead.name() + "'";
    }
  }

  /** A request on this route goes to the application untouched. */
  record Bypass() implements Route {

    private static final Bypass INSTANCE = new Bypass();

    @Override
    public String toString() {
      return "bypass";
    }
  }
}
