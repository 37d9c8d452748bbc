package io.bulkhead.scenarios;

import java.lang.reflect.Method;
import java.net.http.HttpClient;
import java.util.concurrent.ExecutorService;

/** Closing an {@link HttpClient} as far as the running JDK allows. */
final class Threads {

  private static final Method SHUTDOWN_NOW = findShutdownNow();

  private Threads() {}

  /**
   * Stops {@code client} and its executor. Java 21 added {@code HttpClient.shutdownNow()}; on Java
   * 17 the client's selector thread and idle connections end once the client is garbage collected.
   */
  static void shutdown(HttpClient client, ExecutorService executor) {
    if (SHUTDOWN_NOW != null) {
      try {
        SHUTDOWN_NOW.invoke(client);
      } catch (ReflectiveOperationException e) {
        System.getLogger("io.bulkhead.scenarios").log(System.Logger.Level.DEBUG, "shutdownNow", e);
      }
    }
    executor.shutdownNow();
  }

  private static Method findShutdownNow() {
    try {
      return HttpClient.class.getMethod("shutdownNow");
    } catch (NoSuchMethodException java17) {
      return null;
    }
  }
}
