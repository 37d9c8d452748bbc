package io.bulkhead.httpclient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import org.junit.jupiter.api.Test;

/** Which outgoing requests an {@code upstream} value puts into its compartment. */
class BaseUrlTest {

  private static boolean matches(String upstream, String request) {
    return BaseUrl.parse(upstream).matches(URI.create(request));
  }

  @Test
  void aBaseUrlMatchesItsSchemeHostPortAndPathsAtOrBelowItsOwn() {
    String base = "https://LLM.internal:8443/v1/";
    assertThat(matches(base, "https://llm.internal:8443/v1")).isTrue();
    assertThat(matches(base, "https://llm.internal:8443/v1/chat?stream=true")).isTrue();
    assertThat(matches(base, "https://llm.internal:8443/v10/chat"))
        .as("not a path segment")
        .isFalse();
    assertThat(matches(base, "https://llm.internal:8443/v2/chat")).isFalse();
    assertThat(matches(base, "http://llm.internal:8443/v1/chat")).as("other scheme").isFalse();
    assertThat(matches(base, "https://llm.internal/v1/chat")).as("other port").isFalse();
    assertThat(matches(base, "https://other.internal:8443/v1/chat")).isFalse();
  }

  @Test
  void aMissingPortIsTheSchemesDefault() {
    assertThat(matches("https://llm.internal", "https://llm.internal:443/x")).isTrue();
    assertThat(matches("http://llm.internal", "http://llm.internal:80/x")).isTrue();
    assertThat(matches("http://llm.internal", "http://llm.internal:8080/x")).isFalse();
  }

  @Test
  void aHostAloneMatchesAnySchemeAndPathOnIt() {
    assertThat(matches("llm.internal", "http://llm.internal/x")).isTrue();
    assertThat(matches("llm.internal", "https://llm.internal:8443/y/z")).isTrue();
    assertThat(matches("llm.internal:8443", "https://llm.internal:8443/y")).isTrue();
    assertThat(matches("llm.internal:8443", "https://llm.internal/y")).isFalse();
    assertThat(matches("llm.internal", "http://other.internal/x")).isFalse();
  }

  @Test
  void valuesThatNameNoHttpUpstreamAreRefusedWithTheReason() {
    assertThatThrownBy(() -> BaseUrl.parse("ftp://llm.internal"))
        .hasMessage("scheme must be http or https but was ftp");
    assertThatThrownBy(() -> BaseUrl.parse("llm.internal/v1"))
        .hasMessageStartingWith("has a path but no scheme");
    assertThatThrownBy(() -> BaseUrl.parse("https:///v1")).hasMessageStartingWith("names no host");
    assertThatThrownBy(() -> BaseUrl.parse("http://llm internal"))
        .hasMessageStartingWith("not a URL or host name");
  }
}
