package io.bulkhead.httpclient;

import io.bulkhead.internal.Durations;
import io.bulkhead.internal.Urls;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Instant;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/*
 * One call of an UpstreamClient, from the moment its compartment admits it until its slot is freed.
 *
 * Algorithm
 * ---------
 * start() sends the request with the client's own HttpClient, arms the deadline, and returns `stage`,
 * which the compartment holds the slot on. `stage` completes only through finish(), guarded by the
 * `finished` CAS: the release-once path shared by an answer, a failure, the deadline, a cancellation
 * forwarded by the compartment, and the client closing.
 *
 * Why the slot can cap connections
 * --------------------------------
 * With HTTP/1.1 an exchange uses one connection, and the HttpClient opens a new one only when none of
 * its idle connections is free. So the client never holds more connections than there are calls in
 * flight, provided a call's connection is back in the pool, or closed, before its slot is freed:
 *   - an answer: the JDK returns the connection to its pool when the body's last byte is read, before
 *     it completes the response future (ResponseContent runs onFinished before onComplete);
 *   - an abort (deadline, cancel, close): cancelling the JDK's future closes the connection on the
 *     calling thread before cancel() returns. But the future itself completes *inside* that cancel(),
 *     before the connection is closed, and the JDK's own request timeout completes it on another thread
 *     while the selector thread is still closing. Either would free the slot too early and let the next
 *     call open a connection while this one is still open. So an abort sets `aborting` first, which
 *     makes exchangeEnded() ignore the exchange's completion, and calls finish() itself only after
 *     cancel() has returned; and the JDK's request timeout is never armed (sendAsync refuses a request
 *     that carries one).
 *   - a failure of the exchange itself (an invalid status line, response headers over the JDK's
 *     limit): the JDK fails the exchange without closing its connection, which stays open, outside
 *     the pool, for as long as the upstream keeps it. exchangeEnded() closes it before finish():
 *     cancelling a new incomplete future of the JDK's (newIncompleteFuture() shares the exchange's
 *     cancel hook) cancels the exchange, which closes its connection on the calling thread unless
 *     the response was read to its end, when the connection is already back in the pool and is
 *     left alone. On a future without such a hook the cancel is a no-op.
 *
 * Races, as interleavings
 * -----------------------
 *   R1 answer vs deadline. T1 (HttpClient) completes the exchange normally; T2 (timer) aborts. If T1
 *      reads `aborting` first, it finishes with the answer and T2's cancel() finds the exchange done
 *      and its finish() loses the CAS. If T2 sets `aborting` first, T1 ignores the completion; T2's
 *      cancel() returns false (already done) and T2 finishes with the exchange's own outcome, so an
 *      answer that arrived in time is never reported as a timeout.
 *   R2 cancel during start. The compartment can forward a cancellation only after start() returned
 *      `stage`, when `exchange` is already set; the deadline timer is armed after `exchange` is set too.
 *   R3 abort vs abort (deadline, a forwarded cancel, close): the `aborting` CAS lets the first one
 *      through; the others return at once.
 *   R4 deadline vs other calls' callers. The timer thread T0 serves every call of the client. An abort
 *      ends in finish(), which frees the slot and completes the caller's future, running the caller's
 *      dependents and the compartment's onReleased listeners. Were that run on T0, a caller's
 *      whenComplete that blocks would hold every other call's deadline back. So T0 only hands the
 *      abort to `callbacks` (the client's executor) and is free for the next deadline at once; T1
 *      there closes the connection and finishes.
 *   R5 a refused hand-off. `callbacks` may be the user's executor, which can refuse a task. The
 *      client's own pool refuses only once close() has shut it down, and close() has by then aborted
 *      every call in flight (`aborting` is set), so nothing is left to hand. Any other refusal of a
 *      deadline's abort hands it to CompletableFuture's default executor (never run on T0: R4); if
 *      that refuses too, T0 asks again after RETRY_NANOS, until a thread takes it or the timer is shut
 *      down, which close() does only after aborting the call. So a refusal delays an abort at most by
 *      the retries and never loses it: the slot is freed once the connection is closed, as always.
 *
 * Where a call completes
 * ----------------------
 * The HttpClient completes the future of sendAsync on CompletableFuture's default executor, not on
 * its own executor (seen on Java 17 and 25: the JDK adds a whenCompleteAsync of its own). So
 * exchangeEnded() is handed to `callbacks`, where the caller's dependents are documented to run. An
 * answer `callbacks` refuses is finished on the thread that delivered it, the JDK's.
 */
final class UpstreamCall<T> {

  /** Where a deadline's abort runs when the client's executor refuses it (R5). */
  private static final Executor FALLBACK = new CompletableFuture<Void>().defaultExecutor();

  private final UpstreamClient client;
  private final HttpRequest request;
  private final HttpResponse.BodyHandler<T> handler;
  private final Stage stage = new Stage();
  private final AtomicBoolean aborting = new AtomicBoolean();
  private final AtomicBoolean finished = new AtomicBoolean();
  private volatile CompletableFuture<HttpResponse<T>> exchange;
  private volatile ScheduledFuture<?> deadline;
  private ScheduledExecutorService timer; // set in start(), before the deadline is armed
  private Executor callbacks;

  UpstreamCall(UpstreamClient client, HttpRequest request, HttpResponse.BodyHandler<T> handler) {
    this.client = client;
    this.request = request;
    this.handler = handler;
  }

  /** The compartment admitted this call: send it and return the stage the slot is held on. */
  CompletionStage<HttpResponse<T>> start(
      HttpClient http, ScheduledExecutorService timer, Executor callbacks, long deadlineNanos) {
    this.timer = timer;
    this.callbacks = callbacks;
    if (!client.track(this)) {
      finish(null, new CancellationException("upstream client '" + client.name() + "' is closed"));
      return stage;
    }
    CompletableFuture<HttpResponse<T>> sent;
    try {
      sent = http.sendAsync(request, handler);
    } catch (RuntimeException | Error e) {
      // An invalid request (the caller's mistake), or the executor refused to start the exchange:
      // reported as it is.
      finish(null, e);
      return stage;
    }
    exchange = sent;
    try {
      deadline = timer.schedule(this::deadlinePassed, deadlineNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException closing) {
      abort(new CancellationException("upstream client '" + client.name() + "' is closed"));
      return stage;
    }
    sent.whenComplete(
        (response, failure) -> {
          Runnable end = () -> exchangeEnded(response, failure);
          try {
            callbacks.execute(end);
          } catch (RejectedExecutionException refused) {
            end.run(); // R5: on the JDK's thread, where the exchange ended
          }
        });
    return stage;
  }

  /** On the timer thread, which runs no caller's code (R4): the abort runs on {@code callbacks}. */
  private void deadlinePassed() {
    Runnable abort = () -> abort(null);
    try {
      callbacks.execute(abort);
      return;
    } catch (RejectedExecutionException refused) {
      if (aborting.get()) {
        return; // close() or a cancellation is ending the call (R5)
      }
    }
    try {
      FALLBACK.execute(abort);
    } catch (RejectedExecutionException alsoRefused) {
      try {
        deadline =
            timer.schedule(this::deadlinePassed, UpstreamClient.RETRY_NANOS, TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException closed) {
        // close() aborted the call before it shut the timer down (R5)
      }
    }
  }

  private void exchangeEnded(HttpResponse<T> response, Throwable failure) {
    if (aborting.get()) {
      return; // the abort finishes, after the connection is closed (R1)
    }
    if (failure != null) {
      closeConnectionOf(exchange);
    }
    finish(response, failure == null ? null : translate(failure));
  }

  /** Closes the connection of an exchange that failed by itself; see the design comment. */
  private static void closeConnectionOf(CompletableFuture<?> failed) {
    try {
      failed.newIncompleteFuture().cancel(true);
    } catch (RuntimeException notCancellable) {
      // Nothing more can be done from outside the JDK; the failure is reported as it is.
    }
  }

  /**
   * Ends the call early: {@code reason} null means the deadline passed. Returns once the connection
   * is closed and the slot released.
   */
  void abort(Throwable reason) {
    if (!aborting.compareAndSet(false, true)) {
      return; // R3
    }
    CompletableFuture<HttpResponse<T>> sent = exchange;
    if (sent == null) {
      finish(null, reason); // never sent
      return;
    }
    if (sent.cancel(true)) { // closes the connection before it returns
      finish(null, reason != null ? reason : timeout());
      return;
    }
    // It had already ended by itself (R1): report what it did.
    HttpResponse<T> response = null;
    Throwable failure = null;
    try {
      response = sent.get();
    } catch (ExecutionException e) {
      closeConnectionOf(sent);
      failure = translate(e.getCause());
    } catch (CancellationException | InterruptedException e) {
      failure = reason != null ? reason : timeout();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    }
    finish(response, failure);
  }

  /** The release-once path: completes the stage exactly once, which frees the slot. */
  private void finish(HttpResponse<T> response, Throwable failure) {
    if (!finished.compareAndSet(false, true)) {
      return;
    }
    ScheduledFuture<?> timer = deadline;
    if (timer != null) {
      timer.cancel(false);
    }
    client.untrack(this);
    if (failure == null && response != null && client.unavailableAsException()) {
      UpstreamUnavailableException busy = busy(response);
      if (busy != null) {
        stage.settle(null, busy);
        return;
      }
    }
    stage.settle(response, failure);
  }

  /** The answer as an exception if it says the upstream is busy (503, 429); its body closed. */
  private @Nullable UpstreamUnavailableException busy(HttpResponse<T> response) {
    UpstreamUnavailableException busy =
        UpstreamUnavailableException.ofAnswer(
                client.name(),
                request.method(),
                request.uri().toString(),
                response.statusCode(),
                response.headers().firstValue(RetryAfter.HEADER).orElse(null),
                Instant.now())
            .orElse(null);
    if (busy != null && response.body() instanceof AutoCloseable) {
      try {
        ((AutoCloseable) response.body()).close(); // a streamed body: its connection goes back
      } catch (Exception e) {
        busy.addSuppressed(e);
      }
    }
    return busy;
  }

  private UpstreamTimeoutException timeout() {
    return new UpstreamTimeoutException(
        client.name(),
        "upstream '"
            + client.name()
            + "' did not answer "
            + request.method()
            + " "
            + Urls.masked(request.uri().toString())
            + " within its "
            + Durations.format(client.deadline())
            + " deadline");
  }

  private Throwable translate(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof UpstreamException) {
      return cause;
    }
    if (cause instanceof HttpTimeoutException) {
      return timeout();
    }
    if (cause instanceof IOException) {
      return new UpstreamException(
          client.name(),
          "upstream '"
              + client.name()
              + "' failed on "
              + request.method()
              + " "
              + Urls.masked(request.uri().toString())
              + ": "
              + cause,
          cause);
    }
    return cause; // not the upstream's doing (a bad body handler, say): passed through as it is
  }

  /**
   * The stage the compartment holds the slot on. The compartment cancels it to forward a
   * cancellation of the caller's future; that aborts the exchange, and the stage completes once the
   * connection is closed, never earlier.
   */
  private final class Stage extends CompletableFuture<HttpResponse<T>> {

    void settle(HttpResponse<T> response, Throwable failure) {
      if (failure == null) {
        super.complete(response);
      } else {
        super.completeExceptionally(failure);
      }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      abort(
          new CancellationException("the call to upstream '" + client.name() + "' was cancelled"));
      return isCancelled() || isCompletedExceptionally();
    }

    @Override
    public boolean complete(HttpResponse<T> value) {
      throw new UnsupportedOperationException("only the call itself completes its stage");
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
      throw new UnsupportedOperationException("only the call itself completes its stage");
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
      return new CompletableFuture<>();
    }
  }
}
