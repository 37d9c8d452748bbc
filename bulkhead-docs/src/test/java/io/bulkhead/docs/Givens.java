package io.bulkhead.docs;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.insight.Insight;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.ServletContext;
import java.net.http.HttpRequest;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Handler;

/**
 * The names a documentation snippet may use without declaring them: each snippet compiles as a
 * method of a subclass of this class, or of its page's own {@code <Page>Givens} (which extends this
 * one and may declare a name again with another type). Nothing here runs: the snippets are only
 * compiled.
 */
@SuppressWarnings("unused")
abstract class Givens {
  /** An LLM provider's client, the dependency most snippets put in a compartment. */
  interface LlmClient {
    String complete(String prompt);

    CompletableFuture<String> completeAsync(String prompt);
  }

  /** An SLF4J-style logger. */
  interface Log {
    void info(String format, Object... arguments);
  }

  static final TimeUnit SECONDS = TimeUnit.SECONDS;

  LlmClient client;
  String prompt;
  String p;
  Bulkhead llm;
  BulkheadRegistry registry;
  MeterRegistry meterRegistry;
  Insight insight;
  ScheduledExecutorService scheduler;
  Log log;
  String url;
  String secret;
  HttpRequest request;
  Handler app;
  ServletContext servletContext;
}
