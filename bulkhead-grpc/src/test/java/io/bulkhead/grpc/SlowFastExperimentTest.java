package io.bulkhead.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Bulkhead;
import io.bulkhead.edge.RouteTable;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/**
 * The slow-upstream experiment in gRPC form: one Netty server with eight worker threads and two
 * methods, {@code exp.Svc/Slow} (holds a worker for 500 ms, as a blocking call to a slow dependency
 * does) and {@code exp.Svc/Fast} (answers at once), called open-loop at fixed rates. Without a
 * compartment, the slow calls take every worker and the fast ones queue behind them; with the slow
 * method in a compartment of four, the fast calls keep the other four workers.
 *
 * <p>Prints the fast method's latency percentiles for the three runs (fast calls alone, the floor
 * this machine allows right now; no compartment; Slow in a compartment) with the load average.
 * Asserts what makes the difference, which no clock decides: how many workers the slow calls held
 * at most.
 */
class SlowFastExperimentTest {

  private static final MethodDescriptor<String, String> SLOW = TestServer.unary("exp.Svc/Slow");
  private static final MethodDescriptor<String, String> FAST = TestServer.unary("exp.Svc/Fast");
  private static final int WORKERS = 8;
  private static final long SLOW_MILLIS = 500;
  private static final int SLOW_PER_SECOND = 40; // capacity is 8 workers / 500 ms = 16 per second
  private static final int FAST_PER_SECOND = 100;
  private static final Duration RUN = Duration.ofSeconds(3);
  private static final int SLOW_LIMIT = 4;

  record Result(
      String name,
      Histogram fast,
      long fastFailed,
      long slowOk,
      long slowRefused,
      long slowOther,
      int maxSlowInHandler) {}

  @Test
  void theFastMethodKeepsItsLatencyWhenTheSlowOneIsInACompartment() throws Exception {
    // The floor this machine gives a fast call right now: the same fast load, no slow calls at all.
    Result floor = run("fast only (no slow calls)", null, 0);
    Result unprotected = run("no compartment", null, SLOW_PER_SECOND);
    Bulkhead slow =
        Bulkhead.builder("slow")
            .limit(SLOW_LIMIT)
            .maxQueue(SLOW_LIMIT)
            .maxWait(Duration.ofMillis(100))
            .build();
    Result protectedRun =
        run(
            "Slow in a compartment of " + SLOW_LIMIT,
            BulkheadServerInterceptor.of(RouteTable.builder().route("/exp.Svc/Slow", slow).build()),
            SLOW_PER_SECOND);

    String load = Files.readString(Path.of("/proc/loadavg")).trim();
    StringBuilder table = new StringBuilder();
    table.append(
        String.format(
            "%nslow/fast over gRPC (Netty, %d workers; Slow holds a worker %d ms; %d slow/s + %d"
                + " fast/s for %d s, open loop; load average %s)%n",
            WORKERS, SLOW_MILLIS, SLOW_PER_SECOND, FAST_PER_SECOND, RUN.toSeconds(), load));
    table.append(
        String.format(
            "| %-30s | %9s | %9s | %9s | %9s | %7s | %8s | %10s | %15s |%n",
            "server",
            "fast p50",
            "fast p99",
            "fast max",
            "fast fail",
            "slow ok",
            "slow 503",
            "slow other",
            "slow in handler"));
    for (Result r : new Result[] {floor, unprotected, protectedRun}) {
      table.append(
          String.format(
              "| %-30s | %7.1fms | %7.1fms | %7.1fms | %9d | %7d | %8d | %10d | %11d max |%n",
              r.name(),
              r.fast().getValueAtPercentile(50) / 1e3,
              r.fast().getValueAtPercentile(99) / 1e3,
              r.fast().getMaxValue() / 1e3,
              r.fastFailed(),
              r.slowOk(),
              r.slowRefused(),
              r.slowOther(),
              r.maxSlowInHandler()));
    }
    System.out.println(table);

    assertThat(floor.fastFailed()).isZero();
    assertThat(unprotected.fastFailed()).isZero();
    assertThat(protectedRun.fastFailed()).isZero();
    assertThat(protectedRun.slowRefused()).isPositive(); // the overload was refused, not queued
    // Why the fast method keeps its latency, without reading a clock: unprotected, the slow calls
    // held every worker at some point; in the compartment, never more than its limit, so at least
    // WORKERS - SLOW_LIMIT workers were always free for the fast calls. (The percentiles above
    // measure the consequence; on a machine this busy they are printed, not asserted.)
    assertThat(unprotected.maxSlowInHandler()).isEqualTo(WORKERS);
    assertThat(protectedRun.maxSlowInHandler()).isLessThanOrEqualTo(SLOW_LIMIT);
  }

  private static Result run(String name, BulkheadServerInterceptor interceptor, int slowPerSecond)
      throws Exception {
    ExecutorService workers = Executors.newFixedThreadPool(WORKERS);
    AtomicInteger slowInHandler = new AtomicInteger();
    AtomicInteger maxSlowInHandler = new AtomicInteger();
    ServerServiceDefinition svc =
        ServerServiceDefinition.builder("exp.Svc")
            .addMethod(
                SLOW,
                ServerCalls.asyncUnaryCall(
                    (String request, StreamObserver<String> response) -> {
                      maxSlowInHandler.accumulateAndGet(slowInHandler.incrementAndGet(), Math::max);
                      try {
                        Thread.sleep(SLOW_MILLIS); // the slow dependency, holding this worker
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                      } finally {
                        slowInHandler.decrementAndGet();
                      }
                      response.onNext(request);
                      response.onCompleted();
                    }))
            .addMethod(
                FAST,
                ServerCalls.asyncUnaryCall(
                    (String request, StreamObserver<String> response) -> {
                      response.onNext(request);
                      response.onCompleted();
                    }))
            .build();
    Server server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .executor(workers)
            .addService(interceptor == null ? svc : ServerInterceptors.intercept(svc, interceptor))
            .build()
            .start();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
            .usePlaintext()
            .directExecutor()
            .build();
    ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor();
    try {
      // Warm up the connection and both methods' code paths.
      for (int i = 0; i < 50; i++) {
        ClientCalls.blockingUnaryCall(channel, FAST, CallOptions.DEFAULT, "warm");
      }
      int slowCalls = (int) (slowPerSecond * RUN.toSeconds());
      int fastCalls = (int) (FAST_PER_SECOND * RUN.toSeconds());
      CountDownLatch done = new CountDownLatch(slowCalls + fastCalls);
      Histogram fast = new ConcurrentHistogram(3);
      AtomicLong fastFailed = new AtomicLong();
      AtomicInteger slowOk = new AtomicInteger();
      AtomicInteger slowRefused = new AtomicInteger();
      AtomicInteger slowOther = new AtomicInteger();
      for (int i = 0; i < slowCalls; i++) {
        clock.schedule(
            () ->
                call(
                    channel,
                    SLOW,
                    (nanos, status) -> {
                      if (status.isOk()) {
                        slowOk.incrementAndGet();
                      } else if (status.getCode() == Status.Code.UNAVAILABLE) {
                        slowRefused.incrementAndGet();
                      } else {
                        slowOther.incrementAndGet();
                      }
                      done.countDown();
                    }),
            i * 1_000_000_000L / slowPerSecond,
            TimeUnit.NANOSECONDS);
      }
      for (int i = 0; i < fastCalls; i++) {
        clock.schedule(
            () ->
                call(
                    channel,
                    FAST,
                    (nanos, status) -> {
                      if (status.isOk()) {
                        fast.recordValue(Math.max(1, nanos / 1_000));
                      } else {
                        fastFailed.incrementAndGet();
                      }
                      done.countDown();
                    }),
            i * 1_000_000_000L / FAST_PER_SECOND,
            TimeUnit.NANOSECONDS);
      }
      if (!done.await(2, TimeUnit.MINUTES)) {
        throw new AssertionError(name + ": calls still open after 2 minutes: " + done.getCount());
      }
      return new Result(
          name,
          fast,
          fastFailed.get(),
          slowOk.get(),
          slowRefused.get(),
          slowOther.get(),
          maxSlowInHandler.get());
    } finally {
      clock.shutdownNow();
      channel.shutdownNow();
      server.shutdownNow();
      workers.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  interface Outcome {
    void ended(long nanos, Status status);
  }

  /** One call, timed from the moment it is sent to the moment it closes. */
  private static void call(ManagedChannel channel, MethodDescriptor<String, String> m, Outcome o) {
    long sent = System.nanoTime();
    var call = channel.newCall(m, CallOptions.DEFAULT);
    call.start(
        new io.grpc.ClientCall.Listener<String>() {
          @Override
          public void onClose(Status status, Metadata trailers) {
            o.ended(System.nanoTime() - sent, status);
          }
        },
        new Metadata());
    call.request(1);
    call.sendMessage("x");
    call.halfClose();
  }
}
