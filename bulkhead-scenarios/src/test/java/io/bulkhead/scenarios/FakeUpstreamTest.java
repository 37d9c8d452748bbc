package io.bulkhead.scenarios;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FakeUpstreamTest {

  private final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @Test
  void failsTheGivenFractionOfRequestsEvenlySpread() throws Exception {
    try (FakeUpstream upstream = FakeUpstream.start(0, Duration.ofMillis(1), 0.25)) {
      List<Integer> statuses = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        HttpResponse<String> r =
            client.send(
                HttpRequest.newBuilder(upstream.uri().resolve(DemoApp.UPSTREAM_PATH)).build(),
                HttpResponse.BodyHandlers.ofString());
        statuses.add(r.statusCode());
        assertThat(r.body())
            .isEqualTo(r.statusCode() == 200 ? FakeUpstream.ANSWER : FakeUpstream.FAILURE);
      }
      assertThat(statuses).containsExactly(200, 200, 200, 500, 200, 200, 200, 500);
      assertThat(upstream.requests()).isEqualTo(8);
    }
  }

  @Test
  void neverFailsByDefault() throws Exception {
    try (FakeUpstream upstream = FakeUpstream.start(0, Duration.ofMillis(1))) {
      for (int i = 0; i < 5; i++) {
        assertThat(
                client
                    .send(
                        HttpRequest.newBuilder(upstream.uri()).build(),
                        HttpResponse.BodyHandlers.ofString())
                    .statusCode())
            .isEqualTo(200);
      }
      assertThat(upstream.failureFraction()).isZero();
    }
  }

  /** The delay changes while it runs: the next request waits the new one (at least; never less). */
  @Test
  void answersAfterTheNewDelay_onceItIsChanged() throws Exception {
    try (FakeUpstream upstream = FakeUpstream.start(0, Duration.ofMillis(1))) {
      Duration slower = Duration.ofMillis(400);
      upstream.delay(slower);
      long start = System.nanoTime();
      client.send(
          HttpRequest.newBuilder(upstream.uri()).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(slower);
      assertThat(upstream.delay()).isEqualTo(slower);
      assertThatThrownBy(() -> upstream.delay(Duration.ofMillis(-1)))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void refusesAFractionOutsideZeroToOne() {
    assertThatThrownBy(() -> FakeUpstream.start(0, Duration.ofMillis(1), 1.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("failureFraction must be within [0, 1] but was 1.5");
    assertThatThrownBy(() -> FakeUpstream.start(0, Duration.ofMillis(1), Double.NaN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("failureFraction must be within [0, 1] but was NaN");
  }
}
