package io.bulkhead.demo;

import java.time.Duration;
import picocli.CommandLine.Option;

/** The slow-upstream experiment's load, as options shared by {@code load} and {@code demo}. */
final class LoadShapeOptions {

  @Option(
      names = "--chats",
      defaultValue = "80",
      paramLabel = "N",
      description = "Requests to /chat, all at once. Default: ${DEFAULT-VALUE}.")
  int chats;

  @Option(
      names = "--logins",
      defaultValue = "50",
      paramLabel = "N",
      description = "Requests to /login, all at once. Default: ${DEFAULT-VALUE}.")
  int logins;

  @Option(
      names = "--logins-after",
      defaultValue = "1s",
      paramLabel = "DURATION",
      description = "When the logins go, after the chats. Default: ${DEFAULT-VALUE}.")
  Duration loginsAfter;
}
