package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Bad configuration fails at once, naming the field and the value; good configuration is copied.
 */
class BulkheadBuilderTest {

  @Test
  void name_mustNotBeNullOrBlank() {
    assertThatThrownBy(() -> Bulkhead.builder(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("name");
    assertThatThrownBy(() -> Bulkhead.builder("  "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("name must not be blank but was '  '");
  }

  @Test
  void limit_mustBeAtLeastOne_andMustBeSet() {
    assertThatThrownBy(() -> Bulkhead.builder("b").limit(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("limit must be at least 1 but was 0");
    assertThatThrownBy(() -> Bulkhead.builder("b").limit(-5))
        .hasMessage("limit must be at least 1 but was -5");
    assertThatThrownBy(() -> Bulkhead.builder("llm").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("limit was not set for bulkhead 'llm'");
  }

  @Test
  void maxQueue_mustFitTheCountOfWaiters() {
    assertThat(
            Bulkhead.builder("b")
                .limit(1)
                .maxQueue(16_777_215)
                .maxWait(Duration.ofSeconds(1))
                .build()
                .config()
                .maxQueue())
        .hasValue(16_777_215);
    assertThatThrownBy(() -> Bulkhead.builder("b").maxQueue(16_777_216))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "maxQueue must be at most 16777215 (the most waiters one compartment counts) but"
                + " was 16777216; use an unbounded queue (unboundedQueue(), max-queue: unbounded)"
                + " for no bound of your own");
  }

  @Test
  void maxQueue_mustNotBeNegative() {
    assertThatThrownBy(() -> Bulkhead.builder("b").maxQueue(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxQueue must not be negative but was -1");
  }

  @Test
  void maxWait_mustBeNonNegative_nonNull_andCountableInNanoseconds() {
    assertThatThrownBy(() -> Bulkhead.builder("b").maxWait(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxWait must not be negative but was PT-0.001S");
    assertThatThrownBy(() -> Bulkhead.builder("b").maxWait(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("maxWait");
    // The Java twin of setTimeout(Infinity): a huge Duration must not overflow into "wait 0".
    assertThatThrownBy(() -> Bulkhead.builder("b").maxWait(Duration.ofSeconds(Long.MAX_VALUE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxWait PT")
        .hasMessageContaining("unboundedWait()");
  }

  @Test
  void theLongestCountableWait_isAcceptedAndBehavesAsALongWait() {
    Bulkhead b =
        Bulkhead.builder("b")
            .limit(1)
            .maxQueue(1)
            .maxWait(Duration.ofNanos(Long.MAX_VALUE))
            .build();
    Permit held = b.tryAcquire().orElseThrow();
    var waiter = b.submit(() -> java.util.concurrent.CompletableFuture.completedFuture("x"));
    assertThat(waiter).as("a 292-year wait is not an instant rejection").isNotDone();
    held.close();
    assertThat(waiter.join()).isEqualTo("x");
  }

  @Test
  void aQueueNeedsAWait_aZeroWaitBeingNone() {
    assertThatThrownBy(() -> Bulkhead.builder("llm").limit(10).maxQueue(20).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "bulkhead 'llm' lets 20 callers wait but its maxWait is 0, so each would be rejected"
                + " the moment it queued: set maxWait above zero or unbounded, or maxQueue to 0 to"
                + " reject at once");
    assertThatThrownBy(() -> Bulkhead.builder("server").limit(50).unboundedQueue().build())
        .hasMessageContaining("lets any number of callers wait but its maxWait is 0");
    assertThatThrownBy(
            () -> Bulkhead.builder("llm").limit(10).maxQueue(20).maxWait(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lets 20 callers wait but its maxWait is 0");
    assertThat(Bulkhead.builder("b").limit(1).maxWait(Duration.ofSeconds(1)).build().config())
        .as("a wait without a queue is allowed: nobody waits")
        .hasToString("BulkheadConfig{name=b, limit=1, maxQueue=0, maxWait=PT1S}");
  }

  @Test
  void queueSettings_areOneValue_sharedAndCheckedOnce() {
    QueueSettings queue =
        QueueSettings.DEFAULT.withMaxQueue(20).withMaxWait(Duration.ofMillis(250));
    Bulkhead b = Bulkhead.builder("llm").limit(10).queue(queue).build();
    assertThat(b.config().queue()).isEqualTo(queue);
    assertThat(b.config().maxQueue()).hasValue(20);
    assertThat(WorkerPool.builder("w").limit(1).queue(queue).build().compartment().config().queue())
        .isEqualTo(queue);
    assertThat(QueueSettings.DEFAULT.withUnboundedQueue().withUnboundedWait())
        .hasToString("QueueSettings{maxQueue=unbounded, maxWait=unbounded}");
    assertThatThrownBy(
            () -> new QueueSettings(java.util.OptionalInt.of(-1), java.util.Optional.empty()))
        .hasMessage("maxQueue must not be negative but was -1");
    assertThatThrownBy(() -> QueueSettings.DEFAULT.withMaxQueue(1).check("pool 'p'"))
        .hasMessageStartingWith("pool 'p' lets 1 callers wait but its maxWait is 0");
    assertThat(QueueSettings.DEFAULT.check("x")).isEqualTo(QueueSettings.DEFAULT);
  }

  @Test
  void nullCollaborators_areRejectedByName() {
    assertThatThrownBy(() -> Bulkhead.builder("b").listener(null)).hasMessage("listener");
    assertThatThrownBy(() -> Bulkhead.builder("b").ticker(null)).hasMessage("ticker");
    assertThatThrownBy(() -> Bulkhead.builder("b").budget(null)).hasMessage("budget");
    Bulkhead b = Bulkhead.builder("b").limit(1).build();
    assertThatThrownBy(() -> b.call(null)).hasMessage("task");
    assertThatThrownBy(() -> b.submit(null)).hasMessage("task");
    assertThatThrownBy(() -> b.addListener(null)).hasMessage("listener");
  }

  @Test
  void budget_rejectsNonsenseAndDuplicates() {
    assertThatThrownBy(() -> Budget.of("db", 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("capacity of budget 'db' must be at least 1 but was 0");
    assertThatThrownBy(() -> Budget.of(" ", 3))
        .hasMessage("budget name must not be blank but was ' '");
    Budget db = Budget.of("db", 3);
    Bulkhead.builder("a").limit(1).budget(db).build();
    assertThatThrownBy(() -> Bulkhead.builder("a").limit(1).budget(db).build())
        .hasMessage("budget 'db' already has a compartment named 'a' (limit 1)");
    assertThat(db.allocated()).isEqualTo(1);
  }

  @Test
  void build_copiesTheSettings_soTheBuilderCanBeReused() {
    BulkheadBuilder builder =
        Bulkhead.builder("llm").limit(10).maxQueue(20).maxWait(Duration.ofSeconds(1));
    Bulkhead first = builder.build();
    builder.limit(3).maxQueue(0);
    Bulkhead second = builder.build();
    assertThat(first.config().limit()).isEqualTo(10);
    assertThat(first.config().maxQueue()).hasValue(20);
    assertThat(first.config().maxWait()).contains(Duration.ofSeconds(1));
    assertThat(second.config().limit()).isEqualTo(3);
    assertThat(first.config().toString())
        .isEqualTo("BulkheadConfig{name=llm, limit=10, maxQueue=20, maxWait=PT1S}");
    assertThat(Bulkhead.builder("s").limit(50).unboundedQueue().unboundedWait().build().config())
        .hasToString("BulkheadConfig{name=s, limit=50, maxQueue=unbounded, maxWait=unbounded}");
  }

  @Test
  void defaults_rejectAtOnceWhenFull() {
    Bulkhead b = Bulkhead.builder("b").limit(1).build();
    assertThat(b.config().maxQueue()).hasValue(0);
    assertThat(b.config().maxWait()).contains(Duration.ZERO);
  }

  @Test
  void exception_validatesItsPublicConstructor() {
    assertThatThrownBy(
            () ->
                new BulkheadFullException(
                    "b", BulkheadFullException.Reason.QUEUE_FULL, Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("retryAfter must not be negative but was PT-1S");
    BulkheadFullException e =
        new BulkheadFullException(
            "b", BulkheadFullException.Reason.WAIT_TIMEOUT, Duration.ofSeconds(Long.MAX_VALUE));
    assertThat(e.retryAfter()).isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
  }
}
