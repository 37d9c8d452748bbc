package io.bulkhead.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The client interceptor on a real Netty channel to a real Netty server (with no interceptor). */
class BulkheadClientInterceptorTest {

  @Test
  void aCallThatIsNotAdmittedNeverReachesTheNetworkAndCarriesTheRefusal() throws Exception {
    Bulkhead upstream =
        Bulkhead.builder("upstream").limit(1).maxQueue(0).maxWait(Duration.ofSeconds(1)).build();
    try (TestServer server = new TestServer(null)) {
      Channel channel =
          ClientInterceptors.intercept(server.channel, BulkheadClientInterceptor.of(upstream));
      var holding =
          ClientCalls.futureUnaryCall(channel.newCall(TestServer.HOLD, CallOptions.DEFAULT), "one");
      TestServer.Held first = server.nextHeld();

      StatusRuntimeException refused =
          catchThrowableOfType(
              StatusRuntimeException.class,
              () ->
                  ClientCalls.blockingUnaryCall(
                      channel, TestServer.HOLD, CallOptions.DEFAULT, "two"));

      System.out.println("[client refusal] status: " + refused.getStatus());
      System.out.println("[client refusal] trailers: " + refused.getTrailers());
      assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(refused.getCause()).isInstanceOf(BulkheadFullException.class);
      assertThat(((BulkheadFullException) refused.getCause()).bulkheadName()).isEqualTo("upstream");
      assertThat(refused.getTrailers().get(BulkheadServerInterceptor.RETRY_PUSHBACK_MS))
          .isNotNull();
      assertThat(server.started).hasValue(1);

      first.answer();
      assertThat(holding.get(30, TimeUnit.SECONDS)).isEqualTo("done one");
      await().atMost(Duration.ofSeconds(30)).until(() -> upstream.stats().inFlight() == 0);
    }
  }

  @Test
  void aQueuedCallStartsWhenTheSlotFreesAndACancelledOneLeavesTheQueue() throws Exception {
    Bulkhead upstream =
        Bulkhead.builder("upstream").limit(1).maxQueue(2).maxWait(Duration.ofMinutes(5)).build();
    try (TestServer server = new TestServer(null)) {
      Channel channel =
          ClientInterceptors.intercept(server.channel, BulkheadClientInterceptor.of(upstream));
      var first =
          ClientCalls.futureUnaryCall(channel.newCall(TestServer.HOLD, CallOptions.DEFAULT), "one");
      TestServer.Held held = server.nextHeld();
      var queued =
          ClientCalls.futureUnaryCall(channel.newCall(TestServer.HOLD, CallOptions.DEFAULT), "two");
      var withdrawn =
          ClientCalls.futureUnaryCall(
              channel.newCall(TestServer.HOLD, CallOptions.DEFAULT), "three");
      await().atMost(Duration.ofSeconds(30)).until(() -> upstream.stats().waiting() == 2);

      withdrawn.cancel(true); // the stub cancels the ClientCall
      await().atMost(Duration.ofSeconds(30)).until(() -> upstream.stats().cancelled() == 1);
      assertThat(catchThrowableOfType(CancellationException.class, withdrawn::get)).isNotNull();
      assertThat(server.started).hasValue(1); // neither queued call reached the server yet

      held.answer();
      assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("done one");
      TestServer.Held second = server.nextHeld();
      assertThat(second.request()).isEqualTo("two");
      second.answer();
      assertThat(queued.get(30, TimeUnit.SECONDS)).isEqualTo("done two");
      await().atMost(Duration.ofSeconds(30)).until(() -> upstream.stats().completed() == 2);
      assertThat(upstream.stats().inFlight()).isZero();
      assertThat(server.started).hasValue(2);
    } catch (ExecutionException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aCallWhoseContextDeadlinePassesWhileQueuedLeavesTheQueue() throws Exception {
    Bulkhead upstream =
        Bulkhead.builder("upstream").limit(1).maxQueue(2).maxWait(Duration.ofMinutes(5)).build();
    var timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    try (TestServer server = new TestServer(null)) {
      Channel channel =
          ClientInterceptors.intercept(server.channel, BulkheadClientInterceptor.of(upstream));
      var first =
          ClientCalls.futureUnaryCall(channel.newCall(TestServer.HOLD, CallOptions.DEFAULT), "one");
      TestServer.Held held = server.nextHeld(); // held until the end: only the deadline can end two

      io.grpc.Context.CancellableContext withDeadline =
          io.grpc.Context.current().withDeadlineAfter(200, TimeUnit.MILLISECONDS, timer);
      StatusRuntimeException expired;
      try {
        expired =
            withDeadline.call(
                () ->
                    catchThrowableOfType(
                        StatusRuntimeException.class,
                        () ->
                            ClientCalls.blockingUnaryCall(
                                channel, TestServer.HOLD, CallOptions.DEFAULT, "two")));
      } finally {
        withDeadline.cancel(null);
      }

      assertThat(expired.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(upstream.stats().cancelled()).isEqualTo(1);
      assertThat(upstream.stats().waiting()).isZero();
      assertThat(server.started).hasValue(1); // the expired call never reached the network
      held.answer();
      assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("done one");
      await().atMost(Duration.ofSeconds(30)).until(() -> upstream.stats().inFlight() == 0);
    } finally {
      timer.shutdownNow();
    }
  }
}
