package io.bulkhead.httpclient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Bulkhead;
import io.bulkhead.httpclient.testing.TestUpstream;
import io.bulkhead.testing.Closer;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** An upstream's own 503 or 429 with Retry-After, through the JDK client. */
class UpstreamUnavailableTest {

  @RegisterExtension final Closer closer = new Closer();

  private final Bulkhead llm = Bulkhead.builder("llm").limit(1).build();

  @Test
  void optedIn_aBusyAnswerFailsTyped_withTheUpstreamsHint_andFreesTheSlot() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    UpstreamClient client =
        closer.closeLater(
            UpstreamClient.builder(llm)
                .deadline(Duration.ofSeconds(30))
                .unavailableAsException()
                .build());

    assertThatThrownBy(
            () ->
                client.send(
                    HttpRequest.newBuilder(upstream.uri("/busy?retry-after=7")).build(),
                    BodyHandlers.ofString()))
        .isInstanceOfSatisfying(
            UpstreamUnavailableException.class,
            e -> {
              assertThat(e.status()).isEqualTo(503);
              assertThat(e.retryAfter()).contains(Duration.ofSeconds(7));
              assertThat(e.upstream()).isEqualTo("llm");
              assertThat(e)
                  .hasMessage(
                      "upstream 'llm' answered 503 Service Unavailable to GET "
                          + upstream.uri("/busy?retry-after=7")
                          + ": retry after 7s");
            });
    assertThatThrownBy(
            () ->
                client.send(
                    HttpRequest.newBuilder(upstream.uri("/busy?status=429")).build(),
                    BodyHandlers.ofInputStream()))
        .as("a streamed body is closed before the call fails")
        .isInstanceOfSatisfying(
            UpstreamUnavailableException.class, e -> assertThat(e.retryAfter()).isEmpty());
    assertThat(llm.stats().inFlight()).isZero();
    assertThat(llm.stats().completed()).isEqualTo(2);
    HttpResponse<String> ok =
        client.send(HttpRequest.newBuilder(upstream.uri("/ok")).build(), BodyHandlers.ofString());
    assertThat(ok.statusCode()).isEqualTo(200);
  }

  @Test
  void byDefault_aBusyAnswerIsAResponse() throws Exception {
    TestUpstream upstream = closer.closeLater(TestUpstream.start());
    UpstreamClient client =
        closer.closeLater(UpstreamClient.builder(llm).deadline(Duration.ofSeconds(30)).build());

    HttpResponse<String> answer =
        client.send(
            HttpRequest.newBuilder(upstream.uri("/busy?retry-after=7")).build(),
            BodyHandlers.ofString());

    assertThat(answer.statusCode()).isEqualTo(503);
    assertThat(answer.headers().firstValue("Retry-After")).contains("7");
  }
}
