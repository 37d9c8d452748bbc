package io.bulkhead.scenarios;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.time.Duration;

/**
 * How much a demo server lets its clients hold: connections, idle time, and the time to send a
 * request head. See the README's "HTTP edge" section for why each default is what it is.
 *
 * @param maxConnections connections accepted at once; the next ones wait in the kernel's accept
 *     queue, holding no file descriptor of the process, until one closes
 * @param idleTimeout how long a connection with no request in progress may stay silent
 * @param requestHeadDeadline how long a client may take to send a whole request head, however
 *     steadily it trickles the bytes: the first head counts from the connection's opening, a later
 *     one from its first byte
 */
record EdgeLimits(int maxConnections, Duration idleTimeout, Duration requestHeadDeadline) {

  /**
   * The most connections a demo server accepts. Each costs a file descriptor, and the process needs
   * others too (its upstream connections, database connections, jars, selectors): 512 leaves half
   * of the usual soft limit of 1,024 for them. A lower limit of the process lowers the cap with it,
   * see {@link #defaults()}.
   */
  static final int MAX_CONNECTIONS = 512;

  /** The share of the process's open-file limit the connections may take: one half. */
  private static final int FILE_LIMIT_SHARE = 2;

  /**
   * A connection with no request in progress is closed after this long. The dashboard polls twice a
   * second and the load generator reuses a connection within milliseconds, so 30 s of silence is a
   * client that has gone; kept longer (Jetty's default is 30 s, the app used 5 min) such
   * connections only hold file descriptors an attacker can exhaust.
   */
  static final Duration IDLE_TIMEOUT = Duration.ofSeconds(30);

  /**
   * A request head (at most Jetty's 8 KiB) arrives in one round trip from a real client; 10 s
   * covers a very slow mobile link. A client that takes longer, however steadily it trickles bytes
   * to dodge {@link #IDLE_TIMEOUT}, is a slow-header ("slowloris") attack holding a connection: it
   * is closed.
   */
  static final Duration REQUEST_HEAD_DEADLINE = Duration.ofSeconds(10);

  EdgeLimits {
    if (maxConnections < 1) {
      throw new IllegalArgumentException(
          "maxConnections must be at least 1 but was " + maxConnections);
    }
    requirePositive("idleTimeout", idleTimeout);
    requirePositive("requestHeadDeadline", requestHeadDeadline);
  }

  /**
   * {@link #MAX_CONNECTIONS}, or half the process's open-file limit when that is lower (a container
   * started with {@code ulimit -n 400} gets 200), with {@link #IDLE_TIMEOUT} and {@link
   * #REQUEST_HEAD_DEADLINE}.
   */
  static EdgeLimits defaults() {
    return new EdgeLimits(connectionCap(), IDLE_TIMEOUT, REQUEST_HEAD_DEADLINE);
  }

  /**
   * Half the process's open-file limit in connections (all of them up to that, not {@link
   * #MAX_CONNECTIONS}), with the usual timeouts: for the fake upstream, which must never be what
   * limits an experiment, even at a hundred times its load.
   */
  static EdgeLimits wide() {
    return new EdgeLimits(fileShare(Integer.MAX_VALUE), IDLE_TIMEOUT, REQUEST_HEAD_DEADLINE);
  }

  private static int connectionCap() {
    return fileShare(MAX_CONNECTIONS);
  }

  private static int fileShare(int most) {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
      long files = unix.getMaxFileDescriptorCount();
      if (files > 0) {
        return (int) Math.max(1, Math.min(most, files / FILE_LIMIT_SHARE));
      }
    }
    return Math.min(most, MAX_CONNECTIONS);
  }

  private static void requirePositive(String name, Duration value) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be above zero but was " + value);
    }
  }
}
