package io.bulkhead.edge.testing;

import io.bulkhead.edge.RejectionBody;
import java.util.List;

/** A rejection body in an API's own format, with the failures a broken one has. */
public final class TestBodies {

  private TestBodies() {}

  /**
   * {@code {"title":"busy","compartment":NAME,"retryAfter":N}} as {@code application/problem+json};
   * it throws for a compartment named {@code broken} and gives nothing for one named {@code empty}.
   * Each call adds the rejection's reason and the thread's name to {@code seen}.
   */
  public static RejectionBody busy(List<String> seen) {
    return (rejection, retryAfterSeconds) -> {
      seen.add(rejection.reason() + " " + Thread.currentThread().getName());
      switch (rejection.bulkheadName()) {
        case "broken":
          throw new IllegalStateException("a bug in the body");
        case "empty":
          return null;
        default:
          return new RejectionBody.Body(
              "application/problem+json",
              busyJson(rejection.bulkheadName(), Long.toString(retryAfterSeconds)));
      }
    };
  }

  /** What {@link #busy} says for {@code compartment}. */
  public static String busyJson(String compartment, String retryAfterSeconds) {
    return "{\"title\":\"busy\",\"compartment\":\""
        + compartment
        + "\",\"retryAfter\":"
        + retryAfterSeconds
        + "}";
  }
}
