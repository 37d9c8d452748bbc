package io.bulkhead.httpclient;

import io.bulkhead.internal.Durations;
import io.bulkhead.internal.Urls;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The upstream answered that it is busy: {@code 503 Service Unavailable} or {@code 429 Too Many
 * Requests}, usually with a {@code Retry-After} header, which {@link #retryAfter()} carries. The
 * answer's body was read or discarded and its slot freed before this was reported.
 *
 * <p>Retry after the hint plus a jittered backoff, never at once: an upstream that sheds load and
 * sees every refused caller come straight back sheds nothing (see the retry in the docs' "Outgoing
 * HTTP clients"). Distinct from a full compartment of this process ({@link
 * CompartmentFullException}, {@link io.bulkhead.BulkheadFullException}), where the upstream was
 * never called.
 */
public class UpstreamUnavailableException extends UpstreamException {

  private static final long serialVersionUID = 1L;

  private final int status;
  private final @Nullable Duration retryAfter;

  /**
   * Creates the exception for the upstream named {@code upstream}.
   *
   * @throws NullPointerException if {@code upstream} or {@code message} is null
   */
  public UpstreamUnavailableException(
      String upstream, int status, @Nullable Duration retryAfter, String message) {
    super(upstream, message, null);
    this.status = status;
    this.retryAfter = retryAfter;
  }

  /** Whether an answer with {@code status} says the upstream is busy: 503 or 429. */
  public static boolean isBusy(int status) {
    return status == 503 || status == 429;
  }

  /**
   * The exception for an answer with {@code status} and the {@code Retry-After} value {@code
   * retryAfter} (null when absent) to {@code method uri}, read at {@code now}; empty unless {@link
   * #isBusy(int) the status says busy}. The URI is masked in the message.
   */
  public static Optional<UpstreamUnavailableException> ofAnswer(
      String upstream,
      String method,
      String uri,
      int status,
      @Nullable String retryAfter,
      Instant now) {
    Objects.requireNonNull(upstream, "upstream");
    if (!isBusy(status)) {
      return Optional.empty();
    }
    Duration hint = RetryAfter.parse(retryAfter, now).orElse(null);
    String message =
        "upstream '"
            + upstream
            + "' answered "
            + status
            + (status == 503 ? " Service Unavailable" : " Too Many Requests")
            + " to "
            + method
            + " "
            + Urls.masked(uri)
            + (hint != null
                ? ": retry after " + Durations.format(hint)
                : retryAfter == null
                    ? " with no Retry-After"
                    : " with a Retry-After that is neither seconds nor a date: "
                        + Urls.masked(retryAfter));
    return Optional.of(new UpstreamUnavailableException(upstream, status, hint, message));
  }

  /** The answer's status: 503 or 429. */
  public int status() {
    return status;
  }

  /** What the upstream's {@code Retry-After} said; empty when it sent none, or none that parses. */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }
}
