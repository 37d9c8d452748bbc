package io.bulkhead;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * A supplier may return any CompletionStage, including the one minimalCompletionStage() gives, a
 * CompletableFuture subclass whose isDone() throws UnsupportedOperationException (bulkhead-jetty's
 * handler returned one, and every /chat became a 500).
 */
class MinimalStageTest {

  @Test
  void aMinimalStage_alreadyComplete_orLater_isAdmittedAndFreesItsSlot() throws Exception {
    Bulkhead b = Bulkhead.builder("minimal").limit(1).build();
    CompletableFuture<String> done =
        b.submit(() -> CompletableFuture.completedFuture("now").minimalCompletionStage());
    assertThat(done.get(10, SECONDS)).isEqualTo("now");
    assertThat(b.stats().inFlight()).isZero();

    CompletableFuture<String> source = new CompletableFuture<>();
    CompletionStage<String> minimal = source.minimalCompletionStage();
    CompletableFuture<String> later = b.submit(() -> minimal);
    assertThat(b.stats().inFlight()).isEqualTo(1);
    source.complete("later");
    assertThat(later.get(10, SECONDS)).isEqualTo("later");
    assertThat(b.stats().inFlight()).isZero();
  }
}
