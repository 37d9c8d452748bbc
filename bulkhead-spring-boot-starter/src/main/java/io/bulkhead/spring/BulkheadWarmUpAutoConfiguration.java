package io.bulkhead.spring;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * A readiness warm-up, opt-in with {@code bulkhead.warm-up.enabled=true}: once the application's
 * web server listens, and before Spring Boot reports {@code ReadinessState.ACCEPTING_TRAFFIC}, the
 * application sends {@code bulkhead.warm-up.requests} GET requests (default 20) to each of {@code
 * bulkhead.warm-up.paths} on its own server, over loopback HTTP. A fresh JVM loads and compiles a
 * request path while it serves its first requests; behind a readiness probe (Kubernetes, a load
 * balancer reading {@code /actuator/health/readiness}) that cost is paid before any client waits.
 *
 * <p>It is an {@code ApplicationRunner}: Spring Boot runs those after the context has started (the
 * server listens, readiness is still {@code REFUSING_TRAFFIC}) and reports {@code
 * ACCEPTING_TRAFFIC} only after the last one returns. Each round sends one request to every path at
 * once and waits for their answers. The requests go through everything a client's would, filters,
 * the compartments their paths are in (and so their counters and meters), controllers; any status
 * counts as an answer. The whole warm-up ends after {@code bulkhead.warm-up.timeout} (default 30s);
 * a request that gets no answer ends it too, with one warning: readiness then follows as it would
 * have without a warm-up. Plain HTTP only: with {@code server.ssl.enabled=true} it logs that and
 * does nothing. Paths are sent as given, the servlet context path included.
 *
 * <p>Bad settings stop start-up with one line naming the key: no paths, a path not starting with
 * {@code /}, fewer than 1 or more than 10000 requests, a timeout that is not positive.
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnWebApplication
@ConditionalOnProperty(prefix = "bulkhead.warm-up", name = "enabled", havingValue = "true")
@EnableConfigurationProperties(BulkheadProperties.class)
public class BulkheadWarmUpAutoConfiguration {

  private static final Log LOG = LogFactory.getLog(BulkheadWarmUpAutoConfiguration.class);
  private static final String PREFIX = BulkheadProperties.PREFIX + ".warm-up.";
  private static final int MOST_REQUESTS = 10_000;

  /** Created by Spring Boot. */
  public BulkheadWarmUpAutoConfiguration() {}

  /** The warm-up, checked when the context starts and run before readiness. */
  @Bean
  ApplicationRunner bulkheadWarmUp(BulkheadProperties properties, Environment environment) {
    BulkheadProperties.WarmUp settings = properties.getWarmUp();
    List<String> paths = List.copyOf(settings.getPaths());
    int requests = settings.getRequests();
    Duration timeout = settings.getTimeout();
    if (paths.isEmpty()) {
      throw BulkheadConfigurationException.missing(
          PREFIX + "paths", "the warm-up is enabled and needs at least one path to request");
    }
    for (int i = 0; i < paths.size(); i++) {
      if (paths.get(i) == null || !paths.get(i).startsWith("/")) {
        throw BulkheadConfigurationException.property(
            PREFIX + "paths[" + i + "]", paths.get(i), "a path starts with / (like /login)");
      }
    }
    if (requests < 1 || requests > MOST_REQUESTS) {
      throw BulkheadConfigurationException.property(
          PREFIX + "requests", requests, "must be between 1 and " + MOST_REQUESTS);
    }
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw BulkheadConfigurationException.property(
          PREFIX + "timeout", timeout, "must be longer than zero");
    }
    return args -> run(environment, paths, requests, timeout);
  }

  private static void run(
      Environment environment, List<String> paths, int requests, Duration timeout) {
    Integer port = environment.getProperty("local.server.port", Integer.class);
    if (port == null || port <= 0) {
      LOG.info("bulkhead warm-up: no local server port (no embedded server); nothing to warm");
      return;
    }
    if (environment.getProperty("server.ssl.enabled", Boolean.class, false)) {
      LOG.warn("bulkhead warm-up: the server speaks TLS and the warm-up plain HTTP; skipped");
      return;
    }
    String host = environment.getProperty("server.address", "127.0.0.1");
    if (host.contains(":") && !host.startsWith("[")) {
      host = "[" + host + "]"; // an IPv6 address in a URI
    }
    List<URI> targets = new ArrayList<>();
    for (String path : paths) {
      targets.add(URI.create("http://" + host + ":" + port + path));
    }
    long started = System.nanoTime();
    long deadline = started + timeout.toNanos();
    int answered = 0;
    String stopped = null;
    HttpClient client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(timeout)
            .build();
    // No close: the client is Java 21's AutoCloseable; its daemon selector ends with it.
    rounds:
    for (int round = 0; round < requests; round++) {
      List<CompletableFuture<HttpResponse<Void>>> calls = new ArrayList<>();
      for (URI target : targets) {
        calls.add(
            client.sendAsync(
                HttpRequest.newBuilder(target).timeout(timeout).GET().build(),
                HttpResponse.BodyHandlers.discarding()));
      }
      for (CompletableFuture<HttpResponse<Void>> call : calls) {
        long left = deadline - System.nanoTime();
        try {
          call.get(Math.max(left, 0), TimeUnit.NANOSECONDS);
          answered++;
        } catch (TimeoutException e) {
          stopped = "the timeout of " + timeout + " ran out";
        } catch (ExecutionException e) {
          stopped = "a request got no answer (" + e.getCause() + ")";
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          stopped = "interrupted";
        }
        if (stopped != null) {
          calls.forEach(c -> c.cancel(true));
          break rounds;
        }
      }
    }
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    if (stopped == null) {
      LOG.info(
          "bulkhead warm-up: " + answered + " requests to " + paths + " answered in " + ms + " ms");
    } else {
      LOG.warn(
          "bulkhead warm-up stopped after "
              + answered
              + " answered requests to "
              + paths
              + " in "
              + ms
              + " ms: "
              + stopped
              + "; readiness follows without the rest");
    }
  }
}
