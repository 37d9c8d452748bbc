package io.bulkhead.process;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Cuts a process's output, read as bytes, into lines for a consumer, in memory that does not grow
 * with the output: a line longer than {@code maxLineBytes} is handed over in fragments of at most
 * that many bytes (cut between characters, never inside one), so a worker that prints a gibibyte
 * without a newline costs its supervisor one buffer, not a gibibyte of heap. Without a consumer
 * nothing is decoded: the bytes are only scanned for newlines.
 *
 * <p>Whatever the consumer, it keeps what a supervisor needs once the process has ended: whether a
 * line said the JVM ran out of heap or could not start (the launcher's own {@code Error:} lines),
 * and the last lines printed (those within the last {@value #TAIL_BYTES} bytes, at most {@value
 * #LAST_LINES}).
 *
 * <p>One reader thread feeds it ({@link #accept}, then {@link #end}); the flags are volatile and
 * the last lines are read after that thread has finished.
 */
final class OutputLines {

  /** What a JVM with -XX:+ExitOnOutOfMemoryError prints as it exits for want of heap. */
  static final String OUT_OF_HEAP_LINE = "Terminating due to java.lang.OutOfMemoryError";

  /**
   * What the {@code java} launcher prints when the JVM cannot start or cannot start the main class;
   * it then exits with 1 before any of the worker's code ran, and another try fails the same way.
   */
  static final List<String> LAUNCHER_ERRORS =
      List.of(
          "Error: Could not find or load main class",
          "Error: Main method not found in class",
          "Error: Unable to initialize main class",
          "Error: LinkageError occurred while loading main class",
          "Error: Could not create the Java Virtual Machine");

  /** How much of the end of the output is kept for {@link #lastLines()}. */
  static final int TAIL_BYTES = 4096;

  /** How many lines {@link #lastLines()} returns at most. */
  static final int LAST_LINES = 10;

  /** The start of a line that is compared with the markers above: longer than all of them. */
  private static final int HEAD_BYTES = 64;

  private static final byte NEWLINE = '\n';
  private static final byte RETURN = '\r';

  private final int maxLineBytes;
  private final @Nullable Consumer<String> consumer;
  private final Consumer<RuntimeException> consumerFailed;

  /** The current line so far (or its unsent fragment); only with a consumer. */
  private final byte[] line;

  private int lineLength;

  /** The first bytes of the current line, for the markers. */
  private final byte[] head = new byte[HEAD_BYTES];

  private int headLength;

  /** The last TAIL_BYTES bytes of the output, a ring; `written` counts every byte ever put in. */
  private final byte[] tail = new byte[TAIL_BYTES];

  private long written;

  private volatile boolean outOfHeap;
  private volatile boolean launcherFailed;

  /**
   * Lines for {@code consumer} (null: nobody reads them), cut at {@code maxLineBytes}; a consumer
   * that throws is reported to {@code consumerFailed} and hears the next line all the same.
   */
  OutputLines(
      int maxLineBytes,
      @Nullable Consumer<String> consumer,
      Consumer<RuntimeException> consumerFailed) {
    if (maxLineBytes < 4) {
      throw new IllegalArgumentException(
          "maxLineBytes must hold a character but was " + maxLineBytes);
    }
    this.maxLineBytes = maxLineBytes;
    this.consumer = consumer;
    this.consumerFailed = consumerFailed;
    this.line = consumer == null ? new byte[0] : new byte[maxLineBytes];
  }

  /** Takes the next {@code length} bytes of the output. */
  void accept(byte[] bytes, int offset, int length) {
    keepTail(bytes, offset, length);
    int end = offset + length;
    int from = offset;
    while (from < end) {
      int newline = from;
      while (newline < end && bytes[newline] != NEWLINE) {
        newline++;
      }
      append(bytes, from, newline);
      if (newline == end) {
        return;
      }
      endLine();
      from = newline + 1;
    }
  }

  /** The output ended: an unfinished last line is a line. */
  void end() {
    if (headLength > 0) {
      endLine();
    }
  }

  /** Whether a line said the JVM ran out of heap and exits. */
  boolean outOfHeap() {
    return outOfHeap;
  }

  /** Whether a line was the launcher's: the JVM or its main class could not start. */
  boolean launcherFailed() {
    return launcherFailed;
  }

  /** The last lines printed, oldest first, each without its line end. */
  List<String> lastLines() {
    int kept = (int) Math.min(written, TAIL_BYTES);
    byte[] bytes = new byte[kept];
    int start = (int) ((written - kept) % TAIL_BYTES);
    int first = Math.min(kept, TAIL_BYTES - start);
    System.arraycopy(tail, start, bytes, 0, first);
    System.arraycopy(tail, 0, bytes, first, kept - first);
    List<String> lines =
        new ArrayList<>(Arrays.asList(new String(bytes, StandardCharsets.UTF_8).split("\n", -1)));
    if (written > TAIL_BYTES) {
      lines.remove(0); // the end of a line whose start is gone
    }
    if (!lines.isEmpty() && lines.get(lines.size() - 1).isEmpty()) {
      lines.remove(lines.size() - 1); // the output ended with a newline
    }
    lines.replaceAll(OutputLines::withoutReturn);
    return List.copyOf(lines.subList(Math.max(0, lines.size() - LAST_LINES), lines.size()));
  }

  private void keepTail(byte[] bytes, int offset, int length) {
    int skip = Math.max(0, length - TAIL_BYTES);
    int from = offset + skip;
    int n = length - skip;
    int at = (int) (written % TAIL_BYTES);
    int first = Math.min(n, TAIL_BYTES - at);
    System.arraycopy(bytes, from, tail, at, first);
    System.arraycopy(bytes, from + first, tail, 0, n - first);
    written += length;
  }

  /** Bytes of the current line, without a newline among them. */
  private void append(byte[] bytes, int from, int to) {
    if (headLength < HEAD_BYTES) {
      int n = Math.min(HEAD_BYTES - headLength, to - from);
      System.arraycopy(bytes, from, head, headLength, n);
      headLength += n;
    }
    if (consumer == null) {
      return; // nobody reads the lines: only their heads are kept
    }
    while (from < to) {
      if (lineLength == maxLineBytes) {
        handOverFragment();
      }
      int n = Math.min(maxLineBytes - lineLength, to - from);
      System.arraycopy(bytes, from, line, lineLength, n);
      lineLength += n;
      from += n;
    }
  }

  /** The line buffer is full and the line goes on: hands over what it holds, up to a character. */
  private void handOverFragment() {
    int unfinished = unfinishedCharacter(line, lineLength);
    handOver(new String(line, 0, lineLength - unfinished, StandardCharsets.UTF_8));
    System.arraycopy(line, lineLength - unfinished, line, 0, unfinished);
    lineLength = unfinished;
  }

  private void endLine() {
    int headEnd = headLength;
    if (headEnd > 0 && head[headEnd - 1] == RETURN && headEnd < HEAD_BYTES) {
      headEnd--;
    }
    String start = new String(head, 0, headEnd, StandardCharsets.UTF_8);
    if (start.startsWith(OUT_OF_HEAP_LINE)) {
      outOfHeap = true;
    }
    for (String error : LAUNCHER_ERRORS) {
      if (start.startsWith(error)) {
        launcherFailed = true;
      }
    }
    headLength = 0;
    if (consumer != null) {
      int end = lineLength > 0 && line[lineLength - 1] == RETURN ? lineLength - 1 : lineLength;
      handOver(new String(line, 0, end, StandardCharsets.UTF_8));
      lineLength = 0;
    }
  }

  private void handOver(String text) {
    Consumer<String> c = consumer;
    if (c == null) {
      return;
    }
    try {
      c.accept(text);
    } catch (RuntimeException e) {
      consumerFailed.accept(e);
    }
  }

  /**
   * How many bytes at the end of {@code bytes[0, length)} begin a UTF-8 character that is not
   * complete yet (0 to 3): they wait for the next fragment rather than be cut into two.
   */
  static int unfinishedCharacter(byte[] bytes, int length) {
    for (int back = 1; back <= Math.min(4, length); back++) {
      int b = bytes[length - back] & 0xFF;
      if ((b & 0xC0) == 0x80) {
        continue; // a continuation byte: its lead is further back
      }
      int needed = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
      return back < needed ? back : 0;
    }
    return 0; // not UTF-8 (more than three continuation bytes): cut anywhere
  }

  private static String withoutReturn(String s) {
    return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
  }
}
