package io.bulkhead.demo;

import io.bulkhead.redis.FleetBulkhead;
import io.bulkhead.redis.RedisCompartments;
import io.bulkhead.scenarios.AppSettings;
import io.bulkhead.scenarios.DemoApp;
import io.bulkhead.scenarios.Mode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * One app process of {@code demo fleet}, started by it with {@code java -cp <its classpath>
 * io.bulkhead.demo.FleetApp REDIS_URI LIMIT QUEUE WAIT_MS LEASE_TTL_MS MAX_CALL_MS UPSTREAM_URL}:
 * the slow-upstream experiment's app in bulkhead mode whose {@code llm} compartment is a fleet
 * compartment on Redis, shared by every process that runs it. It prints {@code ready PORT} once it
 * listens on a loopback port and its lease holds slots (a Redis that just started grants none for
 * one lease TTL plus the longest call), or {@code not connected} and exits 3 when Redis does not
 * answer (the demo's oracle needs every process on leases). It exits when its standard input ends:
 * the parent closed it, or died.
 *
 * <p>The compartment fails closed while Redis is unreachable: a local share would let the fleet run
 * past the limit the upstream's count is checked against.
 *
 * <p>Not an API: its own main class, so that it runs from the demo's jar or classpath as is.
 */
public final class FleetApp {

  static final String READY = "ready ";
  static final String NOT_CONNECTED = "not connected";
  static final int EXIT_NOT_CONNECTED = 3;

  private FleetApp() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 7) {
      System.err.println(
          "usage: FleetApp REDIS_URI LIMIT QUEUE WAIT_MS LEASE_TTL_MS MAX_CALL_MS UPSTREAM_URL");
      System.exit(2);
    }
    int limit = Integer.parseInt(args[1]);
    int queue = Integer.parseInt(args[2]);
    Duration wait = Duration.ofMillis(Long.parseLong(args[3]));
    Duration leaseTtl = Duration.ofMillis(Long.parseLong(args[4]));
    Duration maxCall = Duration.ofMillis(Long.parseLong(args[5]));
    URI upstream = URI.create(args[6]);
    RedisCompartments fleet = RedisCompartments.settings().leaseTtl(leaseTtl).connect(args[0]);
    FleetBulkhead llm =
        fleet
            .builder("llm")
            .limit(limit)
            .maxQueue(queue)
            .maxWait(wait)
            .maxCallDuration(maxCall)
            .failClosed()
            .build();
    long grantBy = System.nanoTime() + leaseTtl.plus(maxCall).multipliedBy(3).toNanos();
    while (!llm.fleetStats().inFallback()
        && llm.fleetStats().leaseSlots() == 0
        && System.nanoTime() - grantBy < 0) {
      try {
        Thread.sleep(50); // polling an observable state, bounded above
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    if (llm.fleetStats().inFallback()) {
      System.out.println(NOT_CONNECTED);
      System.out.flush();
      fleet.close();
      System.exit(EXIT_NOT_CONNECTED);
    }
    AppSettings settings =
        new AppSettings(
            Mode.BULKHEAD,
            upstream,
            AppSettings.SERVER_LIMIT,
            limit,
            queue,
            wait,
            AppSettings.UPSTREAM_DEADLINE);
    DemoApp app = new DemoApp(settings, llm);
    int port = app.start(0);
    System.out.println(READY + port);
    System.out.flush();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    while (in.readLine() != null) {
      // no commands: the parent only ever closes our standard input
    }
    app.close();
    fleet.close();
    System.exit(0);
  }
}
