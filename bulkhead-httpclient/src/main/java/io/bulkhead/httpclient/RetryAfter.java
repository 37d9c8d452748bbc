package io.bulkhead.httpclient;

import io.bulkhead.BulkheadFullException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The retry hint of a failed call, for a caller that backs off before it tries again: what an
 * upstream's {@code Retry-After} header says, or what a full compartment estimates.
 *
 * <pre>{@code
 * try {
 *   return call.execute();
 * } catch (IOException | RuntimeException e) {
 *   Duration hint = RetryAfter.of(e).orElse(Duration.ZERO);   // then wait hint + jittered backoff
 * }
 * }</pre>
 *
 * <p>Every client edge reads the header through {@link #parse}, so a hint means the same whichever
 * client carried the call. This class is thread-safe.
 */
public final class RetryAfter {

  /** The header's name. */
  public static final String HEADER = "Retry-After";

  /** How deep {@link #of} looks into a chain of causes; a cycle ends there too. */
  private static final int MAX_CAUSES = 16;

  private RetryAfter() {}

  /**
   * The hint a {@code Retry-After} value gives at {@code now}: delta-seconds ({@code 120}) as that
   * many seconds, an HTTP-date ({@code Wed, 21 Oct 2026 07:28:00 GMT}) as the time until then, zero
   * if it has passed. Empty for null, and for a value that is neither (which a caller treats as no
   * hint: a malformed header never fails a call).
   */
  public static Optional<Duration> parse(@Nullable String value, Instant now) {
    Objects.requireNonNull(now, "now");
    if (value == null) {
      return Optional.empty();
    }
    String text = value.trim();
    if (text.isEmpty()) {
      return Optional.empty();
    }
    if (text.chars().allMatch(c -> c >= '0' && c <= '9')) {
      try {
        return Optional.of(Duration.ofSeconds(Long.parseLong(text)));
      } catch (NumberFormatException tooLong) {
        return Optional.of(Duration.ofSeconds(Long.MAX_VALUE));
      }
    }
    try {
      Instant at = ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
      return Optional.of(at.isAfter(now) ? Duration.between(now, at) : Duration.ZERO);
    } catch (DateTimeParseException notADate) {
      return Optional.empty();
    }
  }

  /**
   * The hint {@code failure} carries, or the first of its causes that carries one: a {@link
   * BulkheadFullException}'s (the compartment was full), a {@link CompartmentFullException}'s (the
   * same, as an {@code IOException}), or an {@link UpstreamUnavailableException}'s (the upstream
   * answered {@code 503} or {@code 429}, with a {@code Retry-After} it could parse). Empty when
   * none does: a failure with no hint is not necessarily worth retrying.
   */
  public static Optional<Duration> of(Throwable failure) {
    Throwable cause = Objects.requireNonNull(failure, "failure");
    for (int depth = 0; cause != null && depth < MAX_CAUSES; depth++) {
      if (cause instanceof BulkheadFullException) {
        return Optional.of(((BulkheadFullException) cause).retryAfter());
      }
      if (cause instanceof CompartmentFullException) {
        return Optional.of(((CompartmentFullException) cause).retryAfter());
      }
      if (cause instanceof UpstreamUnavailableException) {
        return ((UpstreamUnavailableException) cause).retryAfter();
      }
      cause = cause.getCause();
    }
    return Optional.empty();
  }
}
