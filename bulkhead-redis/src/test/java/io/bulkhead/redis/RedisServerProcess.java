package io.bulkhead.redis;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
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
      s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      int first = s.getInputStream().read();
      return first == '+' || first == '-'; // -NOAUTH: a server with a password answers too
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * How many clients are connected now, as {@code INFO clients} reports it, not counting the one
   * connection this method opens to ask.
   */
  int connectedClients() throws IOException {
    String info = command("INFO", "clients");
    for (String line : info.split("\r\n")) {
      if (line.startsWith("connected_clients:")) {
        return Integer.parseInt(line.substring("connected_clients:".length()).trim()) - 1;
      }
    }
    throw new IllegalStateException("no connected_clients in " + info);
  }

  /**
   * Sends one command on a connection of its own (no client library, so it adds nothing to what the
   * test counts but itself) and returns the reply's text: a bulk string's content, or the line of a
   * simple reply.
   */
  String command(String... words) throws IOException {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      StringBuilder out = new StringBuilder("*" + words.length + "\r\n");
      for (String w : words) {
        out.append('$').append(w.getBytes(StandardCharsets.UTF_8).length).append("\r\n");
        out.append(w).append("\r\n");
      }
      s.getOutputStream().write(out.toString().getBytes(StandardCharsets.UTF_8));
      java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
      String first = readLine(in);
      if (first.startsWith("$")) {
        int length = Integer.parseInt(first.substring(1));
        if (length < 0) {
          return "";
        }
        byte[] body = new byte[length];
        in.readFully(body);
        return new String(body, StandardCharsets.UTF_8);
      }
      return first;
    }
  }

  private static String readLine(java.io.DataInputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int c; (c = in.read()) != -1; ) {
      if (c == '\r') {
        in.read(); // '\n'
        return line.toString();
      }
      line.append((char) c);
    }
    throw new IOException("the connection closed before the end of a reply line");
  }

  /** Pid of the server process, for kill -STOP and the like; the server must be running. */
  long pid() {
    return process.pid();
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
