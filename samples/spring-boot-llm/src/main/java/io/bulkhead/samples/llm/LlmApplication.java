package io.bulkhead.samples.llm;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/**
 * The slow-upstream experiment's service on Spring MVC: {@code /chat} asks the LLM upstream through
 * a {@code RestClient}, whose calls the starter puts into the {@code llm} compartment ({@code
 * bulkhead.compartments.llm.upstream} in {@code application.yml}); {@code /login} calls nothing. A
 * chat the compartment refuses becomes {@code 503} with {@code Retry-After}, answered by the
 * starter; this class has no bulkhead code at all.
 */
@SpringBootApplication
public class LlmApplication {

  /** Starts the service. */
  public static void main(String[] args) {
    SpringApplication.run(LlmApplication.class, args);
  }

  /** The two routes. */
  @RestController
  static class Routes {
    private final RestClient llm;

    Routes(RestClient.Builder clients, @Value("${llm.base-url}") String llmBaseUrl) {
      this.llm = clients.baseUrl(llmBaseUrl).build();
    }

    @GetMapping("/chat")
    String chat() {
      return llm.get().uri("/complete").retrieve().body(String.class);
    }

    @GetMapping("/login")
    String login() {
      return "welcome\n";
    }
  }
}
