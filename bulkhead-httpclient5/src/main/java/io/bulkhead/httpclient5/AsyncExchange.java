package io.bulkhead.httpclient5;

import io.bulkhead.Bulkhead;
import io.bulkhead.httpclient.UpstreamUnavailableException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.nio.AsyncDataConsumer;
import org.apache.hc.core5.http.nio.AsyncEntityProducer;
import org.apache.hc.core5.http.nio.CapacityChannel;
import org.jspecify.annotations.Nullable;

/*
 * One request of BulkheadAsyncExecChainHandler (see its algorithm): the callback between the chain
 * and the caller's, and the `ended` future the slot is held on.
 *
 * Invariants. `state` goes NEW -> STARTED (start(), the compartment admitted it) or NEW -> ABANDONED
 * (notStarted(), refused or withdrawn), never both: the CAS decides a start racing a withdrawal, and
 * the loser does nothing (a start that lost completes `ended` without sending). `ended` completes
 * once (CompletableFuture.complete), only when the exchange has ended (the body's end in the
 * caller's consumer, a response without a body, completed() or failed()), before the caller hears of
 * it: HttpClient completes the caller's future from the consumer, before completed() comes here; it ignores cancel(), which the compartment forwards when the caller's future is cancelled
 * after admission: the exchange's own abort ends it instead, so the slot is never freed while the
 * exchange still runs. The caller's callback is told once (`told`).
 */
final class AsyncExchange implements AsyncExecCallback {

  private static final int NEW = 0;
  private static final int STARTED = 1;
  private static final int ABANDONED = 2;

  private final Bulkhead compartment;
  private final HttpRequest request;
  private final @Nullable AsyncEntityProducer entityProducer;
  private final AsyncExecChain.Scope scope;
  private final AsyncExecChain chain;
  private final AsyncExecCallback callback;
  private final CompletableFuture<Void> ended = new Ended();
  private final AtomicInteger state = new AtomicInteger(NEW);
  private final AtomicBoolean told = new AtomicBoolean();
  private volatile @Nullable UpstreamUnavailableException busy;

  AsyncExchange(
      Bulkhead compartment,
      HttpRequest request,
      @Nullable AsyncEntityProducer entityProducer,
      AsyncExecChain.Scope scope,
      AsyncExecChain chain,
      AsyncExecCallback callback) {
    this.compartment = compartment;
    this.request = request;
    this.entityProducer = entityProducer;
    this.scope = scope;
    this.chain = chain;
    this.callback = callback;
  }

  /** Admitted: sends the request down the chain; returns the future the slot is held on. */
  CompletableFuture<Void> start() {
    if (!state.compareAndSet(NEW, STARTED)) {
      ended.complete(null); // withdrawn as it was admitted: nothing sent
      return ended;
    }
    if (scope.cancellableDependency.isCancelled()) {
      failed(new CancellationException("the request was cancelled while it waited"));
      return ended;
    }
    try {
      chain.proceed(request, entityProducer, scope, this);
    } catch (HttpException | IOException | RuntimeException e) {
      failed(e);
    }
    return ended;
  }

  /** Refused or withdrawn before it started: nothing was sent, and no slot is held. */
  void notStarted(Throwable failure) {
    if (!state.compareAndSet(NEW, ABANDONED)) {
      return; // it runs: its exchange ends it
    }
    if (entityProducer != null) {
      entityProducer.releaseResources();
    }
    if (told.compareAndSet(false, true)) {
      callback.failed(BulkheadAsyncExecChainHandler.notSent(failure));
    }
  }

  @Override
  public @Nullable AsyncDataConsumer handleResponse(
      HttpResponse response, @Nullable EntityDetails entityDetails)
      throws HttpException, IOException {
    UpstreamUnavailableException unavailable =
        Upstreams.busy(compartment, request, scope.route, response).orElse(null);
    if (unavailable == null) {
      // HttpClient completes the caller's future when the caller's consumer has the whole body,
      // before completed() reaches this callback: free the slot just before that.
      if (entityDetails == null) {
        ended.complete(null);
        return callback.handleResponse(response, null);
      }
      AsyncDataConsumer consumer = callback.handleResponse(response, entityDetails);
      return consumer == null ? null : new EndingConsumer(consumer);
    }
    busy = unavailable;
    return entityDetails == null ? null : DISCARD;
  }

  @Override
  public void handleInformationResponse(HttpResponse response) throws HttpException, IOException {
    callback.handleInformationResponse(response);
  }

  @Override
  public void completed() {
    ended.complete(null); // frees the slot before the caller hears of it (if streamEnd did not)
    if (!told.compareAndSet(false, true)) {
      return;
    }
    UpstreamUnavailableException unavailable = busy;
    if (unavailable != null) {
      callback.failed(unavailable);
    } else {
      callback.completed();
    }
  }

  @Override
  public void failed(Exception cause) {
    ended.complete(null);
    if (told.compareAndSet(false, true)) {
      callback.failed(cause);
    }
  }

  /** The caller's consumer, which frees the slot when the body has ended, before it hears of it. */
  private final class EndingConsumer implements AsyncDataConsumer {
    private final AsyncDataConsumer consumer;

    EndingConsumer(AsyncDataConsumer consumer) {
      this.consumer = consumer;
    }

    @Override
    public void updateCapacity(CapacityChannel capacityChannel) throws IOException {
      consumer.updateCapacity(capacityChannel);
    }

    @Override
    public void consume(ByteBuffer src) throws IOException {
      consumer.consume(src);
    }

    @Override
    public void streamEnd(List<? extends Header> trailers) throws HttpException, IOException {
      ended.complete(null);
      consumer.streamEnd(trailers);
    }

    @Override
    public void releaseResources() {
      consumer.releaseResources();
    }
  }

  /** The future the slot is held on: only the exchange's end completes it. */
  private static final class Ended extends CompletableFuture<Void> {
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      return false;
    }
  }

  /** Reads a busy answer's body to its end and drops it, so its connection can be reused. */
  private static final AsyncDataConsumer DISCARD =
      new AsyncDataConsumer() {
        @Override
        public void updateCapacity(CapacityChannel capacityChannel) throws IOException {
          capacityChannel.update(Integer.MAX_VALUE);
        }

        @Override
        public void consume(ByteBuffer src) {
          src.position(src.limit());
        }

        @Override
        public void streamEnd(List<? extends Header> trailers) {}

        @Override
        public void releaseResources() {}
      };
}
