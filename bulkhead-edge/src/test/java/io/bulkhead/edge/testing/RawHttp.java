package io.bulkhead.edge.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a plain socket, so a test decides exactly when a client sends, waits or leaves.
 * Shared by the Jetty and Servlet edges' tests through bulkhead-edge's test-jar.
 */
public final class RawHttp {

  private RawHttp() {}

  /** A parsed response. */
  public record Answer(int status, Map<String, String> headers, String body) {

    /** A header's value, by its name in any case; null if absent. */
    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  /** The connections a test opens as it goes, closed together when it ends. */
  public static final class Connections implements AutoCloseable {
    private final List<Socket> open = new ArrayList<>();

    /** A GET on a fresh connection that stays open until {@link #close()}. */
    public Socket sendGet(int port, String path) throws IOException {
      Socket socket = RawHttp.sendGet(port, path);
      open.add(socket);
      return socket;
    }

    /** The {@code index}th connection opened. */
    public Socket get(int index) {
      return open.get(index);
    }

    @Override
    public void close() throws IOException {
      closeAll(open);
    }
  }

  /** A connection to 127.0.0.1:{@code port} whose reads give up after 30 s. */
  public static Socket connect(int port) throws IOException {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
    socket.setSoTimeout(30_000);
    return socket;
  }

  /** A GET sent on a fresh connection, left open for the caller to read from or to drop. */
  public static Socket sendGet(int port, String path, String... headerLines) throws IOException {
    Socket socket = connect(port);
    sendGet(socket, path, headerLines);
    return socket;
  }

  /** A GET sent on {@code socket}, an open connection (kept alive, or pipelining). */
  public static void sendGet(Socket socket, String path, String... headerLines) throws IOException {
    socket
        .getOutputStream()
        .write(getRequest(path, headerLines).getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
  }

  /** The bytes of a GET, with {@code headerLines} ({@code "Name: value"}) after {@code Host}. */
  public static String getRequest(String path, String... headerLines) {
    StringBuilder request =
        new StringBuilder("GET ").append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (String line : headerLines) {
      request.append(line).append("\r\n");
    }
    return request.append("\r\n").toString();
  }

  /** One GET on a fresh connection, closed afterwards. */
  public static Answer get(int port, String path) throws IOException {
    try (Socket socket = sendGet(port, path)) {
      return read(socket);
    }
  }

  /** Reads one response from {@code socket}. */
  public static Answer read(Socket socket) throws IOException {
    return read(socket.getInputStream());
  }

  /** Reads one response, with a Content-Length, chunked or empty body. */
  public static Answer read(InputStream in) throws IOException {
    String statusLine = line(in);
    if (statusLine == null) {
      throw new IOException("connection closed before a response");
    }
    int status = Integer.parseInt(statusLine.split(" ")[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    String line;
    while ((line = line(in)) != null && !line.isEmpty()) {
      int colon = line.indexOf(':');
      headers.put(
          line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
          line.substring(colon + 1).trim());
    }
    byte[] body;
    if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      int size;
      while ((size = Integer.parseInt(line(in).split(";")[0].trim(), 16)) > 0) {
        bytes.write(in.readNBytes(size));
        line(in);
      }
      line(in);
      body = bytes.toByteArray();
    } else {
      body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
    }
    return new Answer(status, headers, new String(body, StandardCharsets.UTF_8));
  }

  /** Reads the status line only ({@code HTTP/1.1 200 OK}), leaving the rest unread. */
  public static String readStatusLine(InputStream in) throws IOException {
    String line = line(in);
    return line == null ? "" : line;
  }

  /** Closes every socket. */
  public static void closeAll(List<Socket> sockets) throws IOException {
    for (Socket socket : sockets) {
      socket.close();
    }
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) != -1) {
      if (b == '\n') {
        String s = bytes.toString(StandardCharsets.US_ASCII);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
      }
      bytes.write(b);
    }
    return bytes.size() == 0 ? null : bytes.toString(StandardCharsets.US_ASCII);
  }
}
