package io.bulkhead.benchmarks.peer;

import io.bulkhead.internal.DaemonThreads;
import io.bulkhead.scenarios.DemoApp;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/*
 * The demo's /chat, guarded by Resilience4j's SemaphoreBulkhead the way its documentation shows:
 * the blocking upstream call wrapped in executeCallable, on the Jetty thread that handles the
 * request. A full bulkhead parks that thread in Semaphore.tryAcquire(maxWaitDuration); Resilience4j
 * has no bound on how many threads may park there.
 *
 * The handler is blocking (Handler.Abstract's default invocation type), so Jetty never calls it on
 * a selector thread; the app's whole handler chain becomes blocking with it.
 *
 * The client cap. The bulkhead lets at most maxConcurrentCalls calls run, each calls the upstream
 * with one blocking HTTP/1.1 exchange on this handler's own client, and an HTTP/1.1 exchange uses
 * one connection: the client opens at most maxConcurrentCalls connections, the same cap the demo's
 * UpstreamClient keeps in bulkhead mode (the experiment measures it on the upstream's side).
 *
 * Counting. `waiting` counts chats that have entered this handler and have not yet been admitted or
 * rejected by the bulkhead. Each of them holds one of the server's slots (the server-wide cap sits
 * in front of every route) and one Jetty thread. A chat increments `waiting` on entry and
 * decrements it exactly once: inside the callable when the bulkhead admits it, or in the finally
 * when the callable never ran (BulkheadFullException after maxWaitDuration,
 * AcquirePermissionCancelledException when the thread was interrupted). executeCallable runs the
 * callable on the calling thread, so the flag that decides between the two (`ChatCall.admitted`) is
 * confined to the request's thread; only the two counters are shared. `calling` counts admitted
 * chats until their upstream call returns.
 *
 * Races, as interleavings
 *   R1 sampler vs arrival. T1 (the sampler) reads `waiting` while T2 has incremented it but not yet
 *      reached tryAcquire: T2 is counted as waiting. It holds a server slot and is about to ask, so
 *      the count is of slots held by undecided chats, which is what it claims to be.
 *   R2 sampler vs admission. T2 is admitted and runs the callable's first statement; T1 reads in
 *      between: T2 is counted neither in `waiting` nor in `calling` for that instant (decrement of
 *      one before increment of the other). The error is one chat for a few instructions, never
 *      lasting.
 */
final class Resilience4jChat extends Handler.Abstract {

  private final Bulkhead bulkhead;
  private final URI upstream;
  private final Duration deadline;
  private final ExecutorService executor;
  private final HttpClient client;
  private final AtomicInteger waiting = new AtomicInteger();
  private final AtomicInteger calling = new AtomicInteger();

  /**
   * @param bulkhead the Resilience4j bulkhead every chat goes through
   * @param upstream the slow provider; chats call its {@link DemoApp#UPSTREAM_PATH}
   * @param deadline how long one upstream call may take, as in the demo
   */
  Resilience4jChat(Bulkhead bulkhead, URI upstream, Duration deadline) {
    this.bulkhead = bulkhead;
    this.upstream = upstream.resolve(DemoApp.UPSTREAM_PATH);
    this.deadline = deadline;
    this.executor = Executors.newCachedThreadPool(DaemonThreads.named("r4j-chat-client"));
    this.client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1) // one connection per exchange: the cap holds
            .executor(executor)
            .build();
  }

  /** Chats that hold a server slot while the bulkhead has neither admitted nor rejected them. */
  int waiting() {
    return waiting.get();
  }

  /** Chats the bulkhead admitted whose upstream call has not returned. */
  int calling() {
    return calling.get();
  }

  /** Stops the client's threads (the JDK 17 client itself ends when it is garbage collected). */
  void close() {
    executor.shutdownNow();
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    waiting.incrementAndGet();
    ChatCall call = new ChatCall();
    HttpResponse<String> answer;
    try {
      answer = bulkhead.executeCallable(call);
    } catch (BulkheadFullException full) {
      response.setStatus(HttpStatus.SERVICE_UNAVAILABLE_503);
      Duration maxWait = bulkhead.getBulkheadConfig().getMaxWaitDuration();
      // Resilience4j gives no hint of its own: its maxWait, in whole seconds rounded up, at least
      // 1.
      long retryAfterSeconds = Math.max(1, maxWait.plusNanos(999_999_999).getSeconds());
      response.getHeaders().put(HttpHeader.RETRY_AFTER, Long.toString(retryAfterSeconds));
      write(response, callback, "bulkhead '" + bulkhead.getName() + "' is full\n");
      return true;
    } catch (HttpTimeoutException late) {
      response.setStatus(HttpStatus.GATEWAY_TIMEOUT_504);
      write(response, callback, "the upstream did not answer in time\n");
      return true;
    } catch (IOException failed) {
      response.setStatus(HttpStatus.BAD_GATEWAY_502);
      write(response, callback, "the upstream failed\n");
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      callback.failed(e);
      return true;
    } catch (Exception e) { // AcquirePermissionCancelledException: interrupted while waiting
      callback.failed(e);
      return true;
    } finally {
      if (!call.admitted) {
        waiting.decrementAndGet();
      }
    }
    if (answer.statusCode() == HttpStatus.OK_200) {
      response.setStatus(HttpStatus.OK_200);
      write(response, callback, answer.body());
    } else {
      response.setStatus(HttpStatus.BAD_GATEWAY_502);
      write(response, callback, "the upstream answered " + answer.statusCode() + "\n");
    }
    return true;
  }

  private static void write(Response response, Callback callback, String body) {
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
    Content.Sink.write(response, true, body, callback);
  }

  /** One chat's upstream call; runs on the request's thread once the bulkhead admits it. */
  private final class ChatCall implements java.util.concurrent.Callable<HttpResponse<String>> {
    boolean admitted; // confined to the request's thread

    @Override
    public HttpResponse<String> call() throws IOException, InterruptedException {
      admitted = true;
      waiting.decrementAndGet();
      calling.incrementAndGet();
      try {
        return client.send(
            HttpRequest.newBuilder(upstream).timeout(deadline).build(),
            HttpResponse.BodyHandlers.ofString());
      } finally {
        calling.decrementAndGet();
      }
    }
  }
}
