package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Bulkhead;
import io.bulkhead.httpclient.testing.TestUpstream;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;

/** An upstream's own 503 or 429 with Retry-After, through RestClient and WebClient. */
class UpstreamRetryHintsTest {

  private final TestUpstream upstream;
  private final Bulkhead llm = Bulkhead.builder("llm").limit(1).build();

  UpstreamRetryHintsTest() throws Exception {
    upstream = TestUpstream.start();
  }

  @AfterEach
  void stop() {
    upstream.close();
  }

  @Test
  void restClient_aBusyAnswerIsSpringsTypedException_withTheUpstreamsHint() {
    RestClient client =
        RestClient.builder()
            .requestInterceptor(BulkheadClientHttpRequestInterceptor.of(llm))
            .build();

    assertThatThrownBy(
            () ->
                client.get().uri(upstream.uri("/busy?retry-after=7")).retrieve().body(String.class))
        .isInstanceOfSatisfying(
            HttpServerErrorException.ServiceUnavailable.class,
            e -> assertThat(UpstreamRetryHints.of(e)).contains(Duration.ofSeconds(7)));
    assertThatThrownBy(
            () -> client.get().uri(upstream.uri("/busy?status=429")).retrieve().body(String.class))
        .isInstanceOfSatisfying(
            HttpClientErrorException.TooManyRequests.class,
            e -> assertThat(UpstreamRetryHints.of(e)).as("no Retry-After").isEmpty());
    assertThat(llm.stats().inFlight()).isZero();
  }

  @Test
  void webClient_aBusyAnswerIsSpringsTypedException_withTheUpstreamsHint() {
    WebClient client = WebClient.builder().filter(BulkheadExchangeFilterFunction.of(llm)).build();

    assertThatThrownBy(
            () ->
                client
                    .get()
                    .uri(upstream.uri("/busy?retry-after=7"))
                    .retrieve()
                    .bodyToMono(String.class)
                    .block(Duration.ofSeconds(30)))
        .isInstanceOfSatisfying(
            WebClientResponseException.ServiceUnavailable.class,
            e -> assertThat(UpstreamRetryHints.of(e)).contains(Duration.ofSeconds(7)));
    assertThat(llm.stats().inFlight()).isZero();
  }

  @Test
  void aFullCompartment_givesItsOwnHint() {
    RestClient client =
        RestClient.builder()
            .requestInterceptor(BulkheadClientHttpRequestInterceptor.of(llm))
            .build();
    var held = llm.tryAcquire().orElseThrow();
    try {
      assertThatThrownBy(() -> client.get().uri(upstream.uri("/ok")).retrieve().body(String.class))
          .satisfies(e -> assertThat(UpstreamRetryHints.of(e)).isPresent());
    } finally {
      held.close();
    }
  }
}
