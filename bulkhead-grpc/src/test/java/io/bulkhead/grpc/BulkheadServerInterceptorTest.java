package io.bulkhead.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadStats;
import io.bulkhead.edge.RouteTable;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The server interceptor on a real Netty server, called by a real Netty client. */
class BulkheadServerInterceptorTest {

  private static final Duration LONG = Duration.ofMinutes(5);

  private static Bulkhead compartment(String name, int limit, int maxQueue, Duration maxWait) {
    return Bulkhead.builder(name).limit(limit).maxQueue(maxQueue).maxWait(maxWait).build();
  }

  private static com.google.common.util.concurrent.ListenableFuture<String> hold(
      TestServer server, String request) {
    return ClientCalls.futureUnaryCall(
        server.channel.newCall(TestServer.HOLD, CallOptions.DEFAULT), request);
  }

  private static String blockingHold(TestServer server, String request) {
    return ClientCalls.blockingUnaryCall(
        server.channel, TestServer.HOLD, CallOptions.DEFAULT, request);
  }

  @Test
  void admitsUpToTheLimitQueuesTheNextAndStartsThemInOrder() throws Exception {
    Bulkhead svc = compartment("svc", 2, 2, LONG);
    try (TestServer server = new TestServer(BulkheadServerInterceptor.of(svc))) {
      List<com.google.common.util.concurrent.ListenableFuture<String>> calls = new ArrayList<>();
      for (int i = 1; i <= 4; i++) {
        calls.add(hold(server, "c" + i));
      }
      TestServer.Held first = server.nextHeld();
      TestServer.Held second = server.nextHeld();
      await().atMost(Duration.ofSeconds(30)).until(() -> svc.stats().waiting() == 2);
      assertThat(server.started).hasValue(2); // the queued two never reached the handler
      assertThat(List.of(first.request(), second.request())).containsExactlyInAnyOrder("c1", "c2");

      first.answer(); // frees a slot: the oldest waiter (c3) starts
      TestServer.Held third = server.nextHeld();
      assertThat(third.request()).isEqualTo("c3");
      second.answer();
      TestServer.Held fourth = server.nextHeld();
      assertThat(fourth.request()).isEqualTo("c4");
      third.answer();
      fourth.answer();
      for (int i = 0; i < 4; i++) {
        assertThat(calls.get(i).get(30, TimeUnit.SECONDS)).isEqualTo("done c" + (i + 1));
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> svc.stats().completed() == 4);
      BulkheadStats stats = svc.stats();
      assertThat(stats.inFlight()).isZero();
      assertThat(stats.admitted()).isEqualTo(4);
    }
  }

  @Test
  void refusesWithUnavailableNamingTheCompartmentAndAPushbackTrailer() throws Exception {
    Bulkhead llm = compartment("llm", 1, 0, Duration.ofSeconds(1));
    try (TestServer server = new TestServer(BulkheadServerInterceptor.of(llm))) {
      var holding = hold(server, "first");
      TestServer.Held first = server.nextHeld();

      StatusRuntimeException refused =
          catchThrowableOfType(StatusRuntimeException.class, () -> blockingHold(server, "refused"));

      Metadata trailers = refused.getTrailers();
      System.out.println("[refusal] status: " + refused.getStatus());
      System.out.println("[refusal] trailers: " + trailers);
      assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(refused.getStatus().getDescription())
          .contains("bulkhead 'llm' is full (QUEUE_FULL)");
      String pushback = trailers.get(BulkheadServerInterceptor.RETRY_PUSHBACK_MS);
      assertThat(pushback).isNotNull();
      assertThat(Long.parseLong(pushback)).isNotNegative();
      assertThat(server.started).hasValue(1);

      first.answer();
      assertThat(holding.get(30, TimeUnit.SECONDS)).isEqualTo("done first");
      assertThat(llm.stats().rejected()).isEqualTo(1);
    }
  }

  @Test
  void refusesACallThatWaitedTooLongWithWaitTimeout() throws Exception {
    Bulkhead llm = compartment("llm", 1, 1, Duration.ofMillis(50));
    try (TestServer server = new TestServer(BulkheadServerInterceptor.of(llm))) {
      var holding = hold(server, "first");
      TestServer.Held first = server.nextHeld(); // held until the end: the waiter must time out

      StatusRuntimeException refused =
          catchThrowableOfType(StatusRuntimeException.class, () -> blockingHold(server, "waits"));

      assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(refused.getStatus().getDescription())
          .contains("bulkhead 'llm' is full (WAIT_TIMEOUT)");
      assertThat(refused.getTrailers().get(BulkheadServerInterceptor.RETRY_PUSHBACK_MS))
          .isNotNull();
      assertThat(server.started).hasValue(1);
      first.answer();
      holding.get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void aCallWhoseDeadlinePassesWhileQueuedLeavesTheQueueAndNeverStarts() throws Exception {
    Bulkhead svc = compartment("svc", 1, 4, LONG);
    try (TestServer server = new TestServer(BulkheadServerInterceptor.of(svc))) {
      var holding = hold(server, "first");
      TestServer.Held first = server.nextHeld();

      StatusRuntimeException expired =
          catchThrowableOfType(
              StatusRuntimeException.class,
              () ->
                  ClientCalls.blockingUnaryCall(
                      server.channel,
                      TestServer.HOLD,
                      CallOptions.DEFAULT.withDeadlineAfter(200, TimeUnit.MILLISECONDS),
                      "expires"));

      assertThat(expired.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      await().atMost(Duration.ofSeconds(30)).until(() -> svc.stats().cancelled() == 1);
      assertThat(svc.stats().waiting()).isZero();
      assertThat(svc.stats().inFlight()).isEqualTo(1);

      first.answer();
      holding.get(30, TimeUnit.SECONDS);
      // The slot the expired call never took is free: the next call is admitted at once.
      assertThat(
              ClientCalls.blockingUnaryCall(
                  server.channel, TestServer.ECHO, CallOptions.DEFAULT, "after"))
          .isEqualTo("after");
      assertThat(server.started).hasValue(2); // first and the echo; never the expired one
      await().atMost(Duration.ofSeconds(30)).until(() -> svc.stats().inFlight() == 0);
    }
  }

  @Test
  void aClientThatCancelsAServerStreamMidwayFreesTheSlotOnce() throws Exception {
    Bulkhead svc = compartment("svc", 1, 1, LONG);
    try (TestServer server = new TestServer(BulkheadServerInterceptor.of(svc))) {
      ClientCall<String, String> call =
          server.channel.newCall(TestServer.STREAM, CallOptions.DEFAULT);
      var received = new java.util.concurrent.LinkedBlockingQueue<String>();
      var closed = new java.util.concurrent.CompletableFuture<Status>();
      call.start(
          new ClientCall.Listener<>() {
            @Override
            public void onMessage(String message) {
              received.add(message);
              call.request(1);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              closed.complete(status);
            }
          },
          new Metadata());
      call.request(1);
      call.sendMessage("s1");
      call.halfClose();

      ServerCallStreamObserver<String> stream = server.streams.poll(30, TimeUnit.SECONDS);
      assertThat(stream).isNotNull();
      stream.onNext("token 1");
      assertThat(received.poll(30, TimeUnit.SECONDS)).isEqualTo("token 1");
      // A second stream waits behind the first.
      var queued =
          ClientCalls.blockingServerStreamingCall(
              server.channel, TestServer.STREAM, CallOptions.DEFAULT, "s2");
      await().atMost(Duration.ofSeconds(30)).until(() -> svc.stats().waiting() == 1);

      call.cancel("client gone", null);

      assertThat(closed.get(30, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.CANCELLED);
      assertThat(server.streamCancels.poll(30, TimeUnit.SECONDS)).isEqualTo("s1");
      // The freed slot goes to the waiting stream, which then runs alone.
      ServerCallStreamObserver<String> second = server.streams.poll(30, TimeUnit.SECONDS);
      assertThat(second).isNotNull();
      second.onNext("token A");
      second.onCompleted();
      assertThat(queued.next()).isEqualTo("token A");
      assertThat(queued.hasNext()).isFalse();
      await().atMost(Duration.ofSeconds(30)).until(() -> svc.stats().completed() == 2);
      assertThat(svc.stats().inFlight()).isZero();
      assertThat(svc.stats().admitted()).isEqualTo(2);
    }
  }

  @Test
  void routesByMethodAndLeavesOthersAlone() throws Exception {
    Bulkhead hold = compartment("hold", 1, 0, LONG);
    RouteTable routes = RouteTable.builder().route("/test.Svc/Hold", hold).build();
    try (TestServer server = new TestServer(BulkheadServerInterceptor.of(routes))) {
      var holding = hold(server, "first");
      TestServer.Held first = server.nextHeld();
      // Hold is full, Echo is not routed: it answers.
      assertThat(
              ClientCalls.blockingUnaryCall(
                  server.channel, TestServer.ECHO, CallOptions.DEFAULT, "free"))
          .isEqualTo("free");
      assertThat(
              catchThrowableOfType(
                      StatusRuntimeException.class, () -> blockingHold(server, "refused"))
                  .getStatus()
                  .getCode())
          .isEqualTo(Status.Code.UNAVAILABLE);
      first.answer();
      holding.get(30, TimeUnit.SECONDS);
      assertThat(hold.stats().admitted()).isEqualTo(1);
    }
  }

  @Test
  void manyCallsEndingEveryWayLeaveNothingHeldAndNeverExceedTheLimit() throws Exception {
    int limit = 3;
    Bulkhead svc = compartment("svc", limit, 1000, LONG);
    BulkheadServerInterceptor bulkhead = BulkheadServerInterceptor.of(svc);
    var reached = new java.util.concurrent.atomic.AtomicInteger();
    io.grpc.ServerInterceptor counting =
        new io.grpc.ServerInterceptor() {
          @Override
          public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(
              io.grpc.ServerCall<Q, R> call,
              Metadata headers,
              io.grpc.ServerCallHandler<Q, R> next) {
            reached.incrementAndGet();
            return bulkhead.interceptCall(call, headers, next);
          }
        };
    try (TestServer server = new TestServer(counting)) {
      int calls = 300;
      var random = new java.util.Random(42);
      List<ClientCall<String, String>> started = new ArrayList<>();
      var ended = new java.util.concurrent.CountDownLatch(calls);
      for (int i = 0; i < calls; i++) {
        ClientCall<String, String> call =
            server.channel.newCall(TestServer.HOLD, CallOptions.DEFAULT);
        call.start(
            new ClientCall.Listener<>() {
              @Override
              public void onClose(Status status, Metadata trailers) {
                ended.countDown();
              }
            },
            new Metadata());
        call.request(1);
        call.sendMessage("c" + i);
        call.halfClose();
        started.add(call);
      }
      // Every call reaches the server before any is cancelled: a cancel that overtakes its call's
      // headers never reaches the interceptor, and if all did (a cold connection on a busy
      // machine) nothing would test a withdrawn waiter. Then cancel a random third, queued or
      // admitted, whichever they are; answer the rest as they reach the handler.
      await().atMost(Duration.ofSeconds(30)).until(() -> reached.get() == calls);
      for (ClientCall<String, String> call : started) {
        if (random.nextInt(3) == 0) {
          call.cancel("gone", null);
        }
      }
      while (ended.getCount() > 0) {
        TestServer.Held held = server.held.poll(100, TimeUnit.MILLISECONDS);
        if (held != null) {
          held.answer();
        }
        assertThat(svc.stats().inFlight()).isLessThanOrEqualTo(limit);
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> svc.stats().inFlight() == 0);
      BulkheadStats stats = svc.stats();
      System.out.printf(
          "[server stress] calls %d, reached the interceptor %d, admitted %d, completed %d,"
              + " withdrawn %d, refused %d, in flight %d, waiting %d%n",
          calls,
          reached.get(),
          stats.admitted(),
          stats.completed(),
          stats.cancelled(),
          stats.rejected(),
          stats.inFlight(),
          stats.waiting());
      assertThat(stats.waiting()).isZero();
      assertThat(stats.admitted()).isEqualTo(stats.completed());
      assertThat(stats.admitted() + stats.cancelled() + stats.rejected()).isEqualTo(reached.get());
      assertThat(stats.cancelled()).isPositive();
      assertThat((long) server.started.get()).isLessThanOrEqualTo(stats.admitted());
    }
  }
}
