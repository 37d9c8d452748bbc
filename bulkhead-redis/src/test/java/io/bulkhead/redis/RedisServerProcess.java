package io.bulkhead.redis;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** A redis-server of the test's own on a free loopback port, without persistence: a restart loses all. */
final class RedisServerProcess implements AutoCloseable {

  private final int port;
  private Process process;

  RedisServerProcess(int port) {
    this.port = port;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  int port() {
    return port;
  }

  String uri() {
    return "redis://127.0.0.1:" + port;
  }

  RedisServerProcess start() throws IOException {
    process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind",
        "127.0.0.1", "--save", "", "--appendonly", "no")
        .redirectErrorStream(true)
        .redirectOutput(new File("target/redis-" + port + ".log"))
        .start();
    await().atMost(Duration.ofSeconds(10)).until(this::answers);
    return this;
  }

  private boolean answers() {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.getOutputStream().write("PING\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      return s.getInputStream().read() == '+';
    } catch (IOException e) {
      return false;
    }
  }

  void stop() throws InterruptedException {
    if (process != null) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
      process = null;
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
