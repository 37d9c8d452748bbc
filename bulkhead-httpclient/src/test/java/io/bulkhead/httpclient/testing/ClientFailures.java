package io.bulkhead.httpclient.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.httpclient.UpstreamUnavailableException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/** What the client edges' tests expect of a failed call, in one place for every client module. */
public final class ClientFailures {

  private ClientFailures() {}

  /** The failure {@code call} ended with; an assertion error if it answered (30 s at most). */
  public static Throwable failureOf(Future<?> call) throws Exception {
    try {
      call.get(30, TimeUnit.SECONDS);
      throw new AssertionError("expected the call to fail, but it answered");
    } catch (ExecutionException e) {
      return e.getCause();
    }
  }

  /**
   * The checks of {@code GET path} answered {@code 503} with {@code Retry-After: 7} by {@code
   * upstream}, for compartment {@code llm}: status, hint and the one-line message.
   */
  public static Consumer<UpstreamUnavailableException> answered503WithRetryAfter7(
      TestUpstream upstream, String path) {
    return e -> {
      assertThat(e.status()).isEqualTo(503);
      assertThat(e.retryAfter()).contains(Duration.ofSeconds(7));
      assertThat(e)
          .hasMessage(
              "upstream 'llm' answered 503 Service Unavailable to GET "
                  + upstream.uri(path)
                  + ": retry after 7s");
    };
  }
}
