package io.bulkhead.servlet;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** HTTP/1.1 over a plain socket, so a test decides exactly when a client sends, waits or leaves. */
final class RawHttp {

  private RawHttp() {}

  /** A parsed response. */
  record Answer(int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  static Socket connect(int port) throws IOException {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
    socket.setSoTimeout(30_000);
    return socket;
  }

  /** A GET sent on a fresh connection, left open for the caller to read from or to drop. */
  static Socket sendGet(int port, String path, String... headerLines) throws IOException {
    Socket socket = connect(port);
    StringBuilder request =
        new StringBuilder("GET ").append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (String line : headerLines) {
      request.append(line).append("\r\n");
    }
    request.append("\r\n");
    socket.getOutputStream().write(request.toString().getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
    return socket;
  }

  /** One GET on a fresh connection, closed afterwards. */
  static Answer get(int port, String path) throws IOException {
    try (Socket socket = sendGet(port, path)) {
      return read(socket);
    }
  }

  /** Reads one response, with a Content-Length, chunked or empty body. */
  static Answer read(Socket socket) throws IOException {
    InputStream in = socket.getInputStream();
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
