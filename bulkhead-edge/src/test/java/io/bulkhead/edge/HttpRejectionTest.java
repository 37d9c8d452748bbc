package io.bulkhead.edge;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadFullException.Reason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HttpRejectionTest {

  private static final BulkheadFullException FULL =
      new BulkheadFullException("llm", Reason.QUEUE_FULL, Duration.ofMillis(1500));

  @Test
  void retryAfterSeconds_isTheHintRoundedUp_neverBelowOneSecond() {
    assertThat(HttpRejection.retryAfterSeconds(Duration.ZERO)).isEqualTo(1);
    assertThat(HttpRejection.retryAfterSeconds(Duration.ofNanos(1))).isEqualTo(1);
    assertThat(HttpRejection.retryAfterSeconds(Duration.ofMillis(1))).isEqualTo(1);
    assertThat(HttpRejection.retryAfterSeconds(Duration.ofSeconds(1))).isEqualTo(1);
    assertThat(HttpRejection.retryAfterSeconds(Duration.ofMillis(1001))).isEqualTo(2);
    assertThat(HttpRejection.retryAfterSeconds(Duration.ofMillis(2500))).isEqualTo(3);
    assertThat(HttpRejection.retryAfterSeconds(Duration.ofSeconds(30))).isEqualTo(30);
    assertThat(HttpRejection.retryAfterSeconds(Duration.ofNanos(Long.MAX_VALUE)))
        .isEqualTo(Duration.ofNanos(Long.MAX_VALUE).getSeconds() + 1);
    assertThat(HttpRejection.retryAfterSeconds(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999)))
        .isEqualTo(Long.MAX_VALUE);
    assertThat(HttpRejection.retryAfterSeconds(Duration.ofSeconds(-5))).isEqualTo(1);
  }

  @Test
  void plainText_namesTheCompartmentAndTheWait() {
    HttpRejection answer = HttpRejection.of(FULL, RejectionBody.plainText());
    assertThat(answer.retryAfter()).isEqualTo("2");
    assertThat(answer.contentType()).isEqualTo("text/plain;charset=utf-8");
    assertThat(new String(answer.body(), UTF_8))
        .isEqualTo("bulkhead 'llm' is full: retry after 2 s\n");
  }

  @Test
  void problemJson_hasTheProblemMembers_withStringsEscaped() {
    BulkheadFullException odd =
        new BulkheadFullException("a\"b\\c\nd\u0001é", Reason.WAIT_TIMEOUT, Duration.ZERO);
    HttpRejection answer = HttpRejection.of(odd, RejectionBody.problemJson());
    assertThat(answer.contentType()).isEqualTo("application/problem+json");
    String json = new String(answer.body(), UTF_8);
    assertThat(json)
        .startsWith(
            "{\"type\":\"https://bulkhead.github.io/bulkhead/http-edges/#compartment-full\","
                + "\"title\":\"Compartment full\",\"status\":503,\"detail\":\"bulkhead 'a\\\"b\\\\c\\nd")
        .contains("\"compartment\":\"a\\\"b\\\\c\\nd\\u0001é\"")
        .endsWith(",\"reason\":\"wait_timeout\"}");
    assertThat(json).doesNotContain("\n");
  }

  @Test
  void aBodyOfTheApplicationsOwn_isSentAsItSays_inUtf8() {
    List<Long> seen = new ArrayList<>();
    RejectionBody own =
        (rejection, seconds) -> {
          seen.add(seconds);
          return new RejectionBody.Body(
              "application/json", "{\"busy\":\"" + rejection.bulkheadName() + "→\"}");
        };
    HttpRejection answer = HttpRejection.of(FULL, own);
    assertThat(seen).containsExactly(2L);
    assertThat(answer.contentType()).isEqualTo("application/json");
    assertThat(answer.body()).isEqualTo("{\"busy\":\"llm→\"}".getBytes(UTF_8));
  }

  @Test
  void aBodyThatThrowsOrGivesNothing_isReplacedByThePlainTextOne() {
    RejectionBody throwing =
        (rejection, seconds) -> {
          throw new IllegalStateException("a bug in the body");
        };
    RejectionBody empty = (rejection, seconds) -> null;
    RejectionBody halfEmpty = (rejection, seconds) -> new RejectionBody.Body("text/x", null);
    for (RejectionBody broken : List.of(throwing, empty, halfEmpty)) {
      HttpRejection answer = HttpRejection.of(FULL, broken);
      assertThat(answer.retryAfter()).isEqualTo("2");
      assertThat(answer.contentType()).isEqualTo("text/plain;charset=utf-8");
      assertThat(new String(answer.body(), UTF_8)).startsWith("bulkhead 'llm' is full");
    }
    assertThatThrownBy(() -> HttpRejection.of(FULL, null)).hasMessage("body");
    assertThatThrownBy(() -> HttpRejection.of(null, throwing)).hasMessage("rejection");
  }

  @Test
  void alreadyCommitted_namesTheCompartment() {
    assertThat(HttpRejection.alreadyCommitted(FULL))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "cannot send a 503 for bulkhead 'llm': the response has already been committed");
  }
}
