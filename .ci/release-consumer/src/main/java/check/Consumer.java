package check;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadRegistry;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** Calls through a compartment of its own, then starts Spring Boot with the starter and one from properties. */
@SpringBootApplication
public class Consumer {
  public static void main(String[] args) throws Exception {
    Bulkhead llm = Bulkhead.builder("llm").limit(2).build();
    String answer = llm.call(() -> "answered");
    try (ConfigurableApplicationContext context =
        new SpringApplicationBuilder(Consumer.class)
            .web(WebApplicationType.NONE)
            .properties("bulkhead.compartments.reports.limit=3", "spring.main.banner-mode=off")
            .run(args)) {
      BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);
      int reports = registry.find("reports").orElseThrow().config().limit();
      System.out.println(
          "consumer: core " + answer + " through 'llm'; starter made 'reports' with limit " + reports);
      if (reports != 3) {
        throw new IllegalStateException("the starter did not read bulkhead.compartments.reports.limit");
      }
    }
  }
}
