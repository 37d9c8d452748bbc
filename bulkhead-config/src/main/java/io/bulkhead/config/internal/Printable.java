package io.bulkhead.config.internal;

/**
 * What the file and the command line say, made safe to echo in a one-line message: control
 * characters (C0, DEL, C1), line and paragraph separators, invisible format characters (such as the
 * bidirectional overrides) and lone surrogates are shown as <code>&#92;uXXXX</code>, so that a key
 * holding a newline cannot split the line and a name holding an escape sequence cannot reach the
 * terminal; and a long text is cut short with an ellipsis, so that a 40,000-character name is not
 * printed whole.
 */
public final class Printable {

  /** How much of one value a message shows: enough to recognise it, short enough for one line. */
  public static final int SHOWN = 40;

  private static final String ELLIPSIS = "…";

  private Printable() {}

  /** Whether {@code codePoint} is one that {@link #escape} shows as <code>&#92;uXXXX</code>. */
  public static boolean unsafe(int codePoint) {
    switch (Character.getType(codePoint)) {
      case Character.CONTROL:
      case Character.FORMAT:
      case Character.LINE_SEPARATOR:
      case Character.PARAGRAPH_SEPARATOR:
      case Character.SURROGATE:
        return true;
      default:
        return false;
    }
  }

  /** {@code text} with every unsafe character as <code>&#92;uXXXX</code>; otherwise unchanged. */
  public static String escape(String text) {
    return shorten(text, Integer.MAX_VALUE);
  }

  /**
   * {@code text} escaped and cut to {@link #SHOWN} characters, with an ellipsis if it was longer.
   */
  public static String shown(String text) {
    return shorten(text, SHOWN);
  }

  /** {@link #shown} in single quotes, the way messages quote a value. */
  public static String quote(String text) {
    return "'" + shown(text) + "'";
  }

  /**
   * {@code text} escaped, keeping at most {@code max} of its code points (an escaped one counts as
   * one): the work and the result are bounded by {@code max}, not by the length of {@code text}.
   */
  public static String shorten(String text, int max) {
    StringBuilder sb = new StringBuilder(Math.min(text.length(), max) + ELLIPSIS.length());
    int kept = 0;
    for (int i = 0; i < text.length(); ) {
      if (kept == max) {
        return sb.append(ELLIPSIS).toString();
      }
      int c = text.codePointAt(i);
      if (unsafe(c)) {
        for (char unit : Character.toChars(c)) {
          sb.append(String.format("\\u%04X", (int) unit));
        }
      } else {
        sb.appendCodePoint(c);
      }
      kept++;
      i += Character.charCount(c);
    }
    return sb.toString();
  }

  /** The first unsafe character of {@code text}, or -1 if it has none. */
  public static int firstUnsafe(String text) {
    for (int i = 0; i < text.length(); ) {
      int c = text.codePointAt(i);
      if (unsafe(c)) {
        return c;
      }
      i += Character.charCount(c);
    }
    return -1;
  }
}
