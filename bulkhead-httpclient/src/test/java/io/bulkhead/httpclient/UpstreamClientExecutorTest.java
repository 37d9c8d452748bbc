package io.bulkhead.httpclient;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.Permit;
import io.bulkhead.testing.Closer;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An executor given to the builder: where calls complete, who shuts it down, what a refusal does.
 */
class UpstreamClientExecutorTest {

  @RegisterExtension final Closer closer = new Closer();

  private final AtomicInteger started = new AtomicInteger();
  private final ExecutorService mine =
      Executors.newCachedThreadPool(
          task -> {
            Thread t = new Thread(task, "mine-" + started.incrementAndGet());
            t.setDaemon(true);
            return t;
          });

  @AfterEach
  void shutDownMine() {
    mine.shutdownNow();
  }

  /**
   * Refuses the tasks {@code refuse} picks, counting them, and runs the others on {@link #mine}.
   */
  private Executor refusing(Predicate<Runnable> refuse, AtomicInteger refused) {
    return task -> {
      if (refuse.test(task)) {
        refused.incrementAndGet();
        throw new RejectedExecutionException("refused on purpose");
      }
      mine.execute(task);
    };
  }

  private static String threadAndOutcome(Object answer, Throwable failure) {
    return Thread.currentThread().getName() + " " + (failure == null ? "answered" : failure);
  }

  @Test
  void anAnswer_completesTheCall_onTheSuppliedExecutor() throws Exception {
    // Held until proceed(): the dependent is attached while the call cannot have completed yet.
    FaultyUpstream upstream =
        closer.closeLater(new FaultyUpstream(FaultyUpstream.Fault.SERVER_ERROR, 1, true));
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    UpstreamClient client =
        closer.closeLater(
            UpstreamClient.builder(llm).deadline(Duration.ofSeconds(30)).executor(mine).build());

    CompletableFuture<HttpResponse<String>> call =
        client.sendAsync(HttpRequest.newBuilder(upstream.uri()).build(), BodyHandlers.ofString());
    CompletableFuture<String> where = call.handle(UpstreamClientExecutorTest::threadAndOutcome);
    assertThat(upstream.awaitRequests(Duration.ofSeconds(30))).isTrue();
    upstream.proceed();

    assertThat(where.get(30, SECONDS)).startsWith("mine-").endsWith("answered");
    assertThat(call.get().statusCode()).isEqualTo(503);
    assertThat(llm.stats().inFlight()).isZero();
  }

  @Test
  void aDeadline_completesTheCall_onTheSuppliedExecutor() throws Exception {
    CountingUpstream upstream = closer.closeLater(CountingUpstream.silent());
    Bulkhead llm =
        Bulkhead.builder("llm").limit(1).maxQueue(1).maxWait(Duration.ofSeconds(60)).build();
    UpstreamClient client =
        closer.closeLater(
            UpstreamClient.builder(llm).deadline(Duration.ofMillis(200)).executor(mine).build());

    // The slot is held so the call waits: its deadline cannot start before the dependent is
    // attached.
    Permit held = llm.tryAcquire().orElseThrow();
    CompletableFuture<HttpResponse<String>> call =
        client.sendAsync(
            HttpRequest.newBuilder(upstream.uri("/a")).build(), BodyHandlers.ofString());
    CompletableFuture<String> where = call.handle(UpstreamClientExecutorTest::threadAndOutcome);
    held.close();

    assertThat(where.get(30, SECONDS))
        .startsWith("mine-")
        .contains(UpstreamTimeoutException.class.getName());
    assertThat(llm.stats().inFlight()).isZero();
  }

  @Test
  void close_leavesASuppliedExecutorRunning_andShutsDownItsOwn() throws Exception {
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    UpstreamClient supplied =
        UpstreamClient.builder(llm).deadline(Duration.ofSeconds(1)).executor(mine).build();
    UpstreamClient own = UpstreamClient.builder(llm).deadline(Duration.ofSeconds(1)).build();
    assertThat(supplied.executor()).isSameAs(mine);
    assertThat(own.executor()).isInstanceOf(ExecutorService.class).isNotSameAs(mine);

    supplied.close();
    own.close();

    assertThat(mine.isShutdown()).isFalse();
    assertThat(mine.submit(() -> Thread.currentThread().getName()).get(30, SECONDS))
        .startsWith("mine-");
    assertThat(((ExecutorService) own.executor()).isShutdown()).isTrue();
  }

  @Test
  void builder_refusesANullExecutor_namingIt() {
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    assertThatThrownBy(() -> UpstreamClient.builder(llm).executor(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("executor");
  }

  @Test
  void aRefusedDeadlineAbort_stillEndsTheCall_closesItsConnection_andFreesTheSlot()
      throws Exception {
    // Refuses only the client's own hand-offs (the HttpClient's tasks go through, so the exchange
    // is
    // sent and stays healthy); the upstream never answers, so the deadline's abort is the first.
    CountingUpstream upstream = closer.closeLater(CountingUpstream.silent());
    AtomicInteger refused = new AtomicInteger();
    Executor executor =
        refusing(
            task -> task.getClass().getName().startsWith(UpstreamCall.class.getName()), refused);
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    UpstreamClient client =
        closer.closeLater(
            UpstreamClient.builder(llm)
                .deadline(Duration.ofMillis(200))
                .executor(executor)
                .build());

    CompletableFuture<HttpResponse<String>> call =
        client.sendAsync(
            HttpRequest.newBuilder(upstream.uri("/a")).build(), BodyHandlers.ofString());

    assertThat(call)
        .failsWithin(Duration.ofSeconds(30))
        .withThrowableOfType(Exception.class)
        .withCauseInstanceOf(UpstreamTimeoutException.class);
    assertThat(refused.get()).as("the deadline's hand-off was refused").isPositive();
    assertThat(llm.stats().inFlight()).isZero();
    await().atMost(5, SECONDS).until(() -> upstream.openNow() == 0);
  }

  @Test
  void aSendTheExecutorRefuses_failsWithTheRefusal_andFreesTheSlot() throws Exception {
    CountingUpstream upstream = closer.closeLater(CountingUpstream.silent());
    AtomicInteger refused = new AtomicInteger();
    Bulkhead llm = Bulkhead.builder("llm").limit(1).build();
    UpstreamClient client =
        closer.closeLater(
            UpstreamClient.builder(llm)
                .deadline(Duration.ofSeconds(30))
                .executor(refusing(task -> true, refused))
                .build());

    CompletableFuture<HttpResponse<String>> call =
        client.sendAsync(
            HttpRequest.newBuilder(upstream.uri("/a")).build(), BodyHandlers.ofString());

    assertThat(call)
        .failsWithin(Duration.ofSeconds(30))
        .withThrowableOfType(Exception.class)
        .withCauseInstanceOf(RejectedExecutionException.class);
    assertThat(refused.get()).isPositive();
    assertThat(llm.stats().inFlight()).isZero();
    assertThat(upstream.requests()).isZero();
  }
}
