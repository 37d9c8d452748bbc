package io.bulkhead.httpclient;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An upstream that answers every request with garbage and keeps its side of the connection open, so
 * that a connection counts as closed only once the client has closed it: each accepted socket has a
 * thread that reads until end of stream, which is what the client's close looks like from here.
 */
final class MalformedUpstream implements AutoCloseable {

  /** What the upstream sends instead of a valid response head. */
  enum Garbage {
    /** Not HTTP at all. */
    INVALID_STATUS_LINE,
    /** A valid status line followed by more header bytes than the JDK client accepts (384 KiB). */
    OVERSIZED_HEADERS;

    void writeTo(OutputStream out) throws IOException {
      if (this == INVALID_STATUS_LINE) {
        out.write("garbage, not a status line\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return;
      }
      out.write("HTTP/1.1 200 OK\r\n".getBytes(StandardCharsets.US_ASCII));
      String value = "x".repeat(8 * 1024);
      for (int i = 0; i < 64; i++) { // 512 KiB of headers
        out.write(("X-Filler-" + i + ": " + value + "\r\n").getBytes(StandardCharsets.US_ASCII));
      }
      out.write("Content-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    }
  }

  private static final byte[] END_OF_HEAD = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private final Garbage garbage;
  private final ServerSocket server;
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicInteger open = new AtomicInteger();
  private final List<Socket> sockets = new ArrayList<>();

  MalformedUpstream(Garbage garbage) throws IOException {
    this.garbage = garbage;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "malformed-upstream");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort() + "/complete");
  }

  /** Connections accepted so far. */
  int accepted() {
    return accepted.get();
  }

  /** Connections accepted that the client has not closed yet. */
  int openNow() {
    return open.get();
  }

  private void accept() {
    try {
      for (; ; ) {
        Socket socket = server.accept();
        accepted.incrementAndGet();
        open.incrementAndGet();
        synchronized (sockets) {
          sockets.add(socket);
        }
        Thread serving = new Thread(() -> serve(socket), "malformed-upstream-conn");
        serving.setDaemon(true);
        serving.start();
      }
    } catch (IOException closed) {
      // the test is over
    }
  }

  private void serve(Socket socket) {
    try (socket) {
      InputStream in = socket.getInputStream();
      int matched = 0;
      int b;
      while (matched < END_OF_HEAD.length && (b = in.read()) >= 0) {
        matched = b == END_OF_HEAD[matched] ? matched + 1 : (b == END_OF_HEAD[0] ? 1 : 0);
      }
      garbage.writeTo(socket.getOutputStream());
      socket.getOutputStream().flush();
      while (in.read() >= 0) {
        // drain until the client closes
      }
    } catch (IOException e) {
      // the client reset it: closed too
    } finally {
      open.decrementAndGet();
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    synchronized (sockets) {
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
