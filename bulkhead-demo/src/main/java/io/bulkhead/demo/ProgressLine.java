package io.bulkhead.demo;

import io.bulkhead.scenarios.Experiment;
import io.bulkhead.scenarios.LoadGenerator;
import io.bulkhead.scenarios.LoadResult;
import io.bulkhead.scenarios.Mode;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The demo's progress on standard error: one line rewritten in place on a terminal, or a line every
 * five seconds when the output goes to a file or a pipe.
 */
final class ProgressLine implements Experiment.Progress {

  private static final long QUIET_INTERVAL_NANOS = 5_000_000_000L;

  private final PrintWriter err;
  private final boolean terminal;
  private final ReentrantLock lock =
      new ReentrantLock(); // the ticker and the main thread both print
  private long lastPrinted = Long.MIN_VALUE;
  private int lastLength;

  ProgressLine(PrintWriter err, boolean terminal) {
    this.err = err;
    this.terminal = terminal;
  }

  @Override
  public void tick(Mode mode, long elapsedNanos, LoadGenerator load) {
    lock.lock();
    try {
      printTick(mode, elapsedNanos, load);
    } finally {
      lock.unlock();
    }
  }

  private void printTick(Mode mode, long elapsedNanos, LoadGenerator load) {
    String line =
        String.format(
            Locale.ROOT,
            "%s mode: %5.1f s, chats answered %d/%d, logins answered %d/%d",
            mode.label(),
            elapsedNanos / 1e9,
            load.chatsAnswered(),
            load.chats(),
            load.loginsAnswered(),
            load.logins());
    if (terminal) {
      err.print("\r" + pad(line));
      err.flush();
    } else if (lastPrinted == Long.MIN_VALUE
        || elapsedNanos - lastPrinted >= QUIET_INTERVAL_NANOS
        || elapsedNanos < lastPrinted) {
      lastPrinted = elapsedNanos;
      err.println(line);
      err.flush();
    }
  }

  @Override
  public void done(Mode mode, LoadResult result) {
    lock.lock();
    try {
      printDone(mode, result);
    } finally {
      lock.unlock();
    }
  }

  private void printDone(Mode mode, LoadResult result) {
    String line =
        String.format(
            Locale.ROOT,
            "%s mode: done in %.1f s (login p99 %s; chats %d x 200, %d x 503, %d other)",
            mode.label(),
            result.wallMs() / 1000,
            Report.ms(result.login().p99Ms()),
            result.chatOk(),
            result.chatRejected(),
            result.chatOther());
    if (terminal) {
      err.print("\r" + pad(line) + "\n");
      lastLength = 0;
    } else {
      err.println(line);
    }
    lastPrinted = Long.MIN_VALUE;
    err.flush();
  }

  private String pad(String line) {
    String padded =
        line.length() < lastLength ? line + " ".repeat(lastLength - line.length()) : line;
    lastLength = line.length();
    return padded;
  }
}
