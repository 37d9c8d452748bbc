package io.bulkhead.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The records logged under a java.util.logging logger (where System.Logger writes when no other
 * backend is installed), at every level, while it is open.
 */
final class LogCapture implements AutoCloseable {

  private final Logger logger;
  private final Level previous;
  private final List<LogRecord> records = new CopyOnWriteArrayList<>();
  private final Handler handler =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          records.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  private LogCapture(String name) {
    this.logger = Logger.getLogger(name);
    this.previous = logger.getLevel();
    handler.setLevel(Level.ALL);
    logger.setLevel(Level.ALL);
    logger.addHandler(handler);
  }

  /** Captures the library's logger, {@code io.bulkhead.redis}. */
  static LogCapture library() {
    return new LogCapture("io.bulkhead.redis");
  }

  /** Captures every logger (the root), the client's too. */
  static LogCapture everything() {
    return new LogCapture("");
  }

  /** The messages at WARNING or above that contain {@code text}. */
  List<String> warningsContaining(String text) {
    List<String> out = new ArrayList<>();
    for (LogRecord r : records) {
      if (r.getLevel().intValue() >= Level.WARNING.intValue()
          && r.getMessage() != null
          && r.getMessage().contains(text)) {
        out.add(r.getMessage());
      }
    }
    return out;
  }

  /** Every message and every message of the attached exceptions and their causes, as logged. */
  List<String> allText() {
    return allText(Level.ALL);
  }

  /** {@link #allText()} of the records at {@code atLeast} or above. */
  List<String> allText(Level atLeast) {
    List<String> out = new ArrayList<>();
    for (LogRecord r : records) {
      if (r.getLevel().intValue() < atLeast.intValue()) {
        continue;
      }
      out.add(String.valueOf(r.getMessage()));
      if (r.getParameters() != null) {
        for (Object p : r.getParameters()) {
          out.add(String.valueOf(p));
        }
      }
      for (Throwable t = r.getThrown(); t != null; t = t.getCause() == t ? null : t.getCause()) {
        out.add(t.toString());
      }
    }
    return out;
  }

  @Override
  public void close() {
    logger.removeHandler(handler);
    logger.setLevel(previous);
  }
}
