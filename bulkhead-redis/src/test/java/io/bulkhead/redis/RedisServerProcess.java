package io.bulkhead.redis;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A redis-server of the test's own on a free loopback port, without persistence unless asked for: a
 * restart loses all. Extra arguments are passed as they are ({@code --requirepass}, {@code --dir}).
 */
final class RedisServerProcess implements AutoCloseable {

  private final int port;
  private final List<String> extraArgs;
  private Process process;

  RedisServerProcess(int port, String... extraArgs) {
    this.port = port;
    this.extraArgs = List.of(extraArgs);
  }

  /**
   * A server that keeps its data across a kill -9: every write is in its append-only file, fsynced
   * before the reply, in {@code dir}.
   */
  static RedisServerProcess persistent(int port, Path dir) {
    return new RedisServerProcess(
        port,
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--dir",
        dir.toAbsolutePath().toString());
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
    List<String> command =
        new ArrayList<>(
            List.of(
                "redis-server",
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no"));
    command.addAll(extraArgs); // later arguments win
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(new File("target/redis-" + port + ".log")))
            .start();
    await().atMost(Duration.ofSeconds(10)).until(this::answers);
    return this;
  }

  private boolean answers() {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.getOutputStream().write("PING\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      int first = s.getInputStream().read();
      return first == '+' || first == '-'; // -NOAUTH: a server with a password answers too
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
