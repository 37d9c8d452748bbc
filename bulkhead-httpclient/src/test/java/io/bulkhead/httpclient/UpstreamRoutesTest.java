package io.bulkhead.httpclient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Bulkhead;
import java.net.URI;
import org.junit.jupiter.api.Test;

/** Which compartment an outgoing request enters. */
class UpstreamRoutesTest {

  private final Bulkhead llm = Bulkhead.builder("llm").limit(2).build();
  private final Bulkhead chat = Bulkhead.builder("chat").limit(2).build();
  private final Bulkhead billing = Bulkhead.builder("billing").limit(2).build();

  @Test
  void theMostSpecificRouteWins_whateverTheOrder() {
    UpstreamRoutes routes =
        UpstreamRoutes.builder()
            .route("https://llm.internal", llm)
            .route("billing.internal", billing)
            .route("https://llm.internal/v1/chat", chat)
            .build();

    assertThat(routes.route(URI.create("https://llm.internal/v1/chat/x"))).contains(chat);
    assertThat(routes.route(URI.create("https://llm.internal/v1/embed"))).contains(llm);
    assertThat(routes.route(URI.create("http://billing.internal:8080/pay"))).contains(billing);
    assertThat(routes.route(URI.create("https://other.internal/"))).as("not guarded").isEmpty();
  }

  @Test
  void oneCompartmentForEveryRequest() {
    assertThat(UpstreamRoutes.of(llm).route(URI.create("http://anything/at/all"))).contains(llm);
  }

  @Test
  void aBadOrRepeatedRoute_isOneLineNamingIt() {
    UpstreamRoutes.Builder builder =
        UpstreamRoutes.builder().route("https://llm.internal/v1/", llm);
    assertThatThrownBy(() -> builder.route("https://llm.internal/v1", chat))
        .hasMessage("upstream 'https://llm.internal/v1' is already routed to compartment 'llm'");
    assertThatThrownBy(() -> builder.route("ftp://svc:pw@llm.internal", chat))
        .hasMessage("upstream 'ftp://***@llm.internal' scheme must be http or https but was ftp");
  }
}
