package io.bulkhead.demo;

import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The app's compartments, as options shared by {@code app} and {@code demo}; defaults from the
 * slow-upstream experiment.
 */
final class CompartmentOptions {

  @Option(
      names = "--server-limit",
      defaultValue = "50",
      paramLabel = "N",
      description =
          "Server-wide cap: requests in flight over all routes. Default: ${DEFAULT-VALUE}.")
  int serverLimit;

  @Option(
      names = "--llm-limit",
      defaultValue = "10",
      paramLabel = "N",
      description =
          "Bulkhead mode: upstream calls in flight, and the client's connection cap."
              + " Default: ${DEFAULT-VALUE}.")
  int llmLimit;

  @Option(
      names = "--llm-max-queue",
      defaultValue = "20",
      paramLabel = "N",
      description = "Bulkhead mode: upstream calls that may wait. Default: ${DEFAULT-VALUE}.")
  int llmQueue;

  @Option(
      names = "--llm-max-wait",
      defaultValue = "1s",
      paramLabel = "DURATION",
      description = "Bulkhead mode: how long one call may wait. Default: ${DEFAULT-VALUE}.")
  Duration llmWait;
}
