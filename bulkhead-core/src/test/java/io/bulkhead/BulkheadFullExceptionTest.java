package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.BulkheadFullException.Reason;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BulkheadFullExceptionTest {

  @Test
  void retryAfterSeconds_isTheHintRoundedUp_neverBelowOneSecond() {
    assertThat(seconds(Duration.ZERO)).isEqualTo(1);
    assertThat(seconds(Duration.ofNanos(1))).isEqualTo(1);
    assertThat(seconds(Duration.ofMillis(1))).isEqualTo(1);
    assertThat(seconds(Duration.ofSeconds(1))).isEqualTo(1);
    assertThat(seconds(Duration.ofMillis(1001))).isEqualTo(2);
    assertThat(seconds(Duration.ofMillis(2500))).isEqualTo(3);
    assertThat(seconds(Duration.ofSeconds(30))).isEqualTo(30);
    assertThat(seconds(Duration.ofNanos(Long.MAX_VALUE)))
        .isEqualTo(Duration.ofNanos(Long.MAX_VALUE).getSeconds() + 1);
  }

  private static long seconds(Duration hint) {
    return new BulkheadFullException("llm", Reason.WAIT_TIMEOUT, hint).retryAfterSeconds();
  }
}
