package io.bulkhead.grpc;

import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real Netty gRPC server on loopback with hand-written method descriptors (strings, no protoc),
 * and a Netty channel to it.
 *
 * <p>{@code test.Svc/Hold} keeps each call until the test answers it (so order is the test's, never
 * a clock's); {@code test.Svc/Echo} answers at once; {@code test.Svc/Stream} is server-streaming
 * and keeps its observer for the test to send on.
 */
final class TestServer implements AutoCloseable {

  static final MethodDescriptor.Marshaller<String> STRING =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
          return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
          try {
            return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  static final MethodDescriptor<String, String> HOLD = unary("test.Svc/Hold");
  static final MethodDescriptor<String, String> ECHO = unary("test.Svc/Echo");
  static final MethodDescriptor<String, String> STREAM =
      MethodDescriptor.<String, String>newBuilder()
          .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
          .setFullMethodName("test.Svc/Stream")
          .setRequestMarshaller(STRING)
          .setResponseMarshaller(STRING)
          .build();

  static MethodDescriptor<String, String> unary(String fullName) {
    return MethodDescriptor.<String, String>newBuilder()
        .setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(fullName)
        .setRequestMarshaller(STRING)
        .setResponseMarshaller(STRING)
        .build();
  }

  /** A call the Hold handler keeps until the test answers it. */
  record Held(String request, StreamObserver<String> response) {
    void answer() {
      response.onNext("done " + request);
      response.onCompleted();
    }
  }

  final BlockingQueue<Held> held = new LinkedBlockingQueue<>();
  final BlockingQueue<ServerCallStreamObserver<String>> streams = new LinkedBlockingQueue<>();
  final BlockingQueue<String> streamCancels = new LinkedBlockingQueue<>();

  /** Calls that reached a handler, of any method. */
  final AtomicInteger started = new AtomicInteger();

  private final Server server;
  final ManagedChannel channel;

  /** Handlers never block (the test answers from its own thread), so they run on gRPC's threads. */
  TestServer(ServerInterceptor interceptor) throws IOException {
    this(interceptor, Runnable::run);
  }

  TestServer(ServerInterceptor interceptor, Executor executor) throws IOException {
    ServerServiceDefinition svc =
        ServerServiceDefinition.builder("test.Svc")
            .addMethod(
                HOLD,
                ServerCalls.asyncUnaryCall(
                    (request, response) -> {
                      started.incrementAndGet();
                      held.add(new Held(request, response));
                    }))
            .addMethod(
                ECHO,
                ServerCalls.asyncUnaryCall(
                    (request, response) -> {
                      started.incrementAndGet();
                      response.onNext(request);
                      response.onCompleted();
                    }))
            .addMethod(
                STREAM,
                ServerCalls.asyncServerStreamingCall(
                    (request, response) -> {
                      started.incrementAndGet();
                      ServerCallStreamObserver<String> stream =
                          (ServerCallStreamObserver<String>) response;
                      stream.setOnCancelHandler(() -> streamCancels.add(request));
                      streams.add(stream);
                    }))
            .build();
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).executor(executor);
    builder.addService(interceptor == null ? svc : ServerInterceptors.intercept(svc, interceptor));
    server = builder.build().start();
    channel =
        NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
            .usePlaintext()
            .directExecutor()
            .build();
  }

  Held nextHeld() throws InterruptedException {
    Held next = held.poll(30, TimeUnit.SECONDS);
    if (next == null) {
      throw new AssertionError("no call reached the Hold handler within 30 s");
    }
    return next;
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow();
    server.shutdownNow();
    channel.awaitTermination(10, TimeUnit.SECONDS);
    server.awaitTermination(10, TimeUnit.SECONDS);
  }
}
