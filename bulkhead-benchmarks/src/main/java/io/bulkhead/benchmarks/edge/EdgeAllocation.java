package io.bulkhead.benchmarks.edge;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Locale;
import org.eclipse.jetty.server.LocalConnector;
import org.eclipse.jetty.server.Server;

/**
 * Where the edge's time goes, in the figures a busy machine cannot blur: the bytes allocated and
 * the CPU time spent per request by the whole server (every thread of the JVM), for each variant of
 * {@link EdgeServer}, through Jetty's in-memory {@link LocalConnector} so that no socket and no
 * load tool is counted. Requests go one at a time, below the limit; the difference from {@code
 * plain} is what the guard costs.
 *
 * <pre>
 * java -cp benchmarks.jar io.bulkhead.benchmarks.edge.EdgeAllocation [requests] &gt; edge-allocation.json
 * </pre>
 */
public final class EdgeAllocation {

  // Each getResponse opens an endpoint of its own; without "close" every one stayed open until its
  // idle timeout, and 200,000 of them filled the 512 MB heap (the JVM then spent minutes in GC).
  private static final String REQUEST =
      "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

  private EdgeAllocation() {}

  public static void main(String[] args) throws Exception {
    int requests = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    StringBuilder json =
        new StringBuilder("{\n  \"requests\": " + requests + ",\n  \"variants\": {");
    String separator = "";
    for (String variant : new String[] {"plain", "qos", "bulkhead"}) {
      Server server = EdgeServer.server(variant, 64, 0, Duration.ofSeconds(1), Duration.ZERO);
      LocalConnector local = new LocalConnector(server);
      server.addConnector(local);
      server.start();
      try {
        run(local, requests / 2); // warm-up: the JIT compiles the path measured next
        long bytes = allocatedBytes();
        long cpu = cpuNanos();
        run(local, requests);
        double bytesPerRequest = (double) (allocatedBytes() - bytes) / requests;
        double cpuPerRequest = (double) (cpuNanos() - cpu) / requests;
        json.append(separator)
            .append(
                String.format(
                    Locale.ROOT,
                    "\n    \"%s\": {\"bytes_per_request\": %.0f, \"cpu_us_per_request\": %.2f}",
                    variant,
                    bytesPerRequest,
                    cpuPerRequest / 1000));
        separator = ",";
      } finally {
        server.stop();
      }
    }
    System.out.println(json.append("\n  }\n}"));
  }

  private static void run(LocalConnector local, int requests) throws Exception {
    for (int i = 0; i < requests; i++) {
      String response = local.getResponse(REQUEST);
      if (response == null || !response.startsWith("HTTP/1.1 200")) {
        throw new IllegalStateException("expected 200, got " + response);
      }
    }
  }

  /** Bytes allocated so far by every live thread of this JVM. */
  private static long allocatedBytes() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long total = 0;
    for (long bytes : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
      total += Math.max(0, bytes);
    }
    return total;
  }

  /** CPU time used so far by the whole process (its GC and JIT threads included). */
  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }
}
