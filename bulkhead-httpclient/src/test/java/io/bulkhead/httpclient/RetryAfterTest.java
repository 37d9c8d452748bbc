package io.bulkhead.httpclient;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.BulkheadFullException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The one reading of {@code Retry-After} every client edge shares, and the hint of a failure. */
class RetryAfterTest {

  private static final Instant NOW = Instant.parse("2026-10-21T07:28:00Z");

  @Test
  void deltaSeconds_areThatManySeconds() {
    assertThat(RetryAfter.parse("120", NOW)).contains(Duration.ofSeconds(120));
    assertThat(RetryAfter.parse(" 0 ", NOW)).contains(Duration.ZERO);
    assertThat(RetryAfter.parse("99999999999999999999999", NOW))
        .as("too long for a long: as long as it can be")
        .contains(Duration.ofSeconds(Long.MAX_VALUE));
  }

  @Test
  void anHttpDate_isTheTimeUntilThen_orZeroIfItHasPassed() {
    assertThat(RetryAfter.parse("Wed, 21 Oct 2026 07:28:30 GMT", NOW))
        .contains(Duration.ofSeconds(30));
    assertThat(RetryAfter.parse("Wed, 21 Oct 2026 07:27:00 GMT", NOW)).contains(Duration.ZERO);
  }

  @Test
  void anythingElse_isNoHint() {
    assertThat(RetryAfter.parse(null, NOW)).isEmpty();
    assertThat(RetryAfter.parse("", NOW)).isEmpty();
    assertThat(RetryAfter.parse("-5", NOW)).isEmpty();
    assertThat(RetryAfter.parse("1.5", NOW)).isEmpty();
    assertThat(RetryAfter.parse("soon", NOW)).isEmpty();
  }

  @Test
  void ofAFailure_findsTheHintInItOrItsCauses() {
    BulkheadFullException full =
        new BulkheadFullException(
            "llm", BulkheadFullException.Reason.QUEUE_FULL, Duration.ofMillis(1500));
    UpstreamUnavailableException busy =
        UpstreamUnavailableException.ofAnswer("llm", "GET", "http://llm/x", 503, "7", NOW)
            .orElseThrow();

    assertThat(RetryAfter.of(full)).contains(Duration.ofMillis(1500));
    assertThat(RetryAfter.of(new CompartmentFullException(full))).contains(Duration.ofMillis(1500));
    assertThat(RetryAfter.of(new UncheckedIOException(busy))).contains(Duration.ofSeconds(7));
    assertThat(RetryAfter.of(new IOException("reset"))).isEmpty();
  }

  @Test
  void aBusyAnswer_namesTheUpstreamTheRequestAndTheHint_withTheUrlMasked() {
    assertThat(
            UpstreamUnavailableException.ofAnswer(
                    "llm", "GET", "http://svc:s3cret@llm/x", 503, "7", NOW)
                .orElseThrow())
        .hasMessage(
            "upstream 'llm' answered 503 Service Unavailable to GET http://***@llm/x: retry after 7s");
    UpstreamUnavailableException noHint =
        UpstreamUnavailableException.ofAnswer("llm", "POST", "http://llm/x", 429, null, NOW)
            .orElseThrow();
    assertThat(noHint)
        .hasMessage(
            "upstream 'llm' answered 429 Too Many Requests to POST http://llm/x with no Retry-After");
    assertThat(noHint.retryAfter()).isEmpty();
    assertThat(noHint.status()).isEqualTo(429);
    assertThat(UpstreamUnavailableException.ofAnswer("llm", "GET", "http://llm/x", 500, "7", NOW))
        .as("not busy")
        .isEmpty();
  }
}
