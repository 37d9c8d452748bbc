package io.bulkhead.jetty;

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

/** HTTP/1.1 over a plain socket, so a test decides exactly when a client sends, waits or leaves. */
final class RawHttp {

  private RawHttp() {}

  /** The connections a test opens as it goes, closed together when it ends. */
  static final class Connections implements AutoCloseable {
    private final List<Socket> open = new ArrayList<>();

    /** A GET on a fresh connection that stays open until {@link #close()}. */
    Socket sendGet(int port, String path) throws IOException {
      Socket socket = RawHttp.sendGet(port, path);
      open.add(socket);
      return socket;
    }

    Socket get(int index) {
      return open.get(index);
    }

    @Override
    public void close() throws IOException {
      for (Socket socket : open) {
        socket.close();
      }
    }
  }

  /** A parsed response. */
  static final class Answer {
    final int status;
    final Map<String, String> headers;
    final String body;

    Answer(int status, Map<String, String> headers, String body) {
      this.status = status;
      this.headers = headers;
      this.body = body;
    }

    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }

    @Override
    public String toString() {
      return status + " " + headers + " " + body;
    }
  }

  static Socket connect(int port) throws IOException {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
    socket.setSoTimeout(30_000);
    return socket;
  }

  /** A GET sent on a fresh connection, left open for the caller to read from or to drop. */
  static Socket sendGet(int port, String path) throws IOException {
    Socket socket = connect(port);
    sendGet(socket, path);
    return socket;
  }

  static void sendGet(Socket socket, String path) throws IOException {
    socket.getOutputStream().write(getRequest(path).getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
  }

  static String getRequest(String path) {
    return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  }

  /** One GET on a fresh connection, closed afterwards. */
  static Answer get(int port, String path) throws IOException {
    try (Socket socket = connect(port)) {
      sendGet(socket, path);
      return read(socket.getInputStream());
    }
  }

  /** Reads one response with a Content-Length body (or an empty one) from {@code in}. */
  static Answer read(InputStream in) throws IOException {
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
    int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
    byte[] body = in.readNBytes(length);
    return new Answer(status, headers, new String(body, StandardCharsets.UTF_8));
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
