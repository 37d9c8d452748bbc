package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.BulkheadRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code POST /actuator/compartments/{name}} once the application allows writes: the limit changes
 * through {@code setLimit}, and a limit the budget has no room for is refused with its message.
 */
@SpringBootTest(
    classes = LimitWriteTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "bulkhead.budgets.llm-api.capacity=10",
      "bulkhead.compartments.llm.limit=4",
      "bulkhead.compartments.llm.budget=llm-api",
      "bulkhead.compartments.batch.limit=6",
      "bulkhead.compartments.batch.budget=llm-api",
      "management.endpoints.web.exposure.include=compartments",
      "management.endpoint.compartments.access=unrestricted"
    })
class LimitWriteTest {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {}

  @LocalServerPort int port;
  @Autowired BulkheadRegistry registry;

  private HttpResponse<String> post(String name, String body) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/actuator/compartments/" + name))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }

  private int limit(String name) {
    return registry.find(name).orElseThrow().config().limit();
  }

  @Test
  void aLimitWithinTheBudgetIsSetAndOneBeyondItIsRefusedWithTheBudgetsMessage() throws Exception {
    HttpResponse<String> over = post("llm", "{\"limit\":5}");
    System.out.println(
        "POST /actuator/compartments/llm {\"limit\":5}: " + over.statusCode() + " " + over.body());
    assertThat(over.statusCode()).isEqualTo(400);
    JsonNode refused = JSON.readTree(over.body());
    assertThat(refused.get("error").asString()).contains("llm-api");
    assertThat(limit("llm")).isEqualTo(4);

    HttpResponse<String> lower = post("llm", "{\"limit\":3}");
    System.out.println(
        "POST /actuator/compartments/llm {\"limit\":3}: "
            + lower.statusCode()
            + " "
            + lower.body());
    assertThat(lower.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(lower.body()).get("previousLimit").asInt()).isEqualTo(4);
    assertThat(JSON.readTree(lower.body()).get("limit").asInt()).isEqualTo(3);
    assertThat(limit("llm")).isEqualTo(3);

    // The budget now has room for one more in batch.
    assertThat(post("batch", "{\"limit\":7}").statusCode()).isEqualTo(200);
    assertThat(limit("batch")).isEqualTo(7);

    assertThat(post("llm", "{\"limit\":0}").statusCode()).isEqualTo(400);
    assertThat(post("nope", "{\"limit\":2}").statusCode()).isEqualTo(404);
    assertThat(limit("llm")).isEqualTo(3);
  }
}
