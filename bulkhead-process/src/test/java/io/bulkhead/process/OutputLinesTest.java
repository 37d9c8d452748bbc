package io.bulkhead.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How output bytes become lines, fed in pieces of every size. */
class OutputLinesTest {

  private final List<String> lines = new ArrayList<>();
  private final List<RuntimeException> failures = new ArrayList<>();

  @Test
  void linesAreCutAtTheirNewlinesWhateverTheReadsAndCarriageReturnsGo() {
    OutputLines out =
        feed(new OutputLines(16, lines::add, failures::add), "one\r\ntwo\n\nthree", 1);
    assertThat(lines).containsExactly("one", "two", "", "three");
    assertThat(out.lastLines()).containsExactly("one", "two", "", "three");
  }

  @Test
  void aLongLineComesInPiecesOfAtMostTheLimitAndAPieceNeverSplitsACharacter() {
    // 'é' is two bytes, '€' three, '𝄞' four: pieces of at most 8 bytes end between characters.
    String text = "abcdefg\u00e9\u20ac\u20ac\ud834\udd1e\ud834\udd1e12345678";
    for (int read = 1; read <= 7; read++) {
      lines.clear();
      feed(new OutputLines(8, lines::add, failures::add), text + "\n", read);
      assertThat(String.join("", lines)).as("read %d bytes at a time", read).isEqualTo(text);
      assertThat(lines)
          .allSatisfy(l -> assertThat(l.getBytes(StandardCharsets.UTF_8).length).isBetween(1, 8))
          .doesNotContain("\ufffd");
    }
    assertThat(lines)
        .containsExactly("abcdefg", "\u00e9\u20ac\u20ac", "\ud834\udd1e\ud834\udd1e", "12345678");
  }

  @Test
  void aLineOfExactlyTheLimitIsOneLine() {
    feed(new OutputLines(4, lines::add, failures::add), "abcd\nefgh", 3);
    assertThat(lines).containsExactly("abcd", "efgh");
  }

  @Test
  void withoutAConsumerTheMarkersAndTheLastLinesAreStillKept() {
    OutputLines out = new OutputLines(8, null, failures::add);
    feed(
        out,
        "x".repeat(10_000) + "\nTerminating due to java.lang.OutOfMemoryError: Java heap space\n",
        100);
    assertThat(out.outOfHeap()).isTrue();
    assertThat(out.launcherFailed()).isFalse();
    assertThat(out.lastLines())
        .containsExactly("Terminating due to java.lang.OutOfMemoryError: Java heap space");
  }

  @Test
  void theLauncherSaysWhenTheMainClassIsMissingAndAWorkerLineAlikeInsideALineDoesNot() {
    OutputLines launcher = new OutputLines(64, lines::add, failures::add);
    feed(launcher, "Error: Could not find or load main class a.B\nCaused by: x\n", 5);
    assertThat(launcher.launcherFailed()).isTrue();
    OutputLines worker = new OutputLines(64, lines::add, failures::add);
    feed(worker, "log: Error: Could not find or load main class a.B\n", 5);
    assertThat(worker.launcherFailed()).isFalse();
  }

  @Test
  void theLastLinesAreTheLastTenOfTheLastFourKibibytes() {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 1000; i++) {
      text.append("line ").append(i).append('\n');
    }
    OutputLines out = feed(new OutputLines(64, null, failures::add), text.toString(), 4099);
    List<String> expected = new ArrayList<>();
    for (int i = 990; i < 1000; i++) {
      expected.add("line " + i);
    }
    assertThat(out.lastLines()).isEqualTo(expected);
    // A tail that starts inside a line drops that line's end.
    OutputLines cut =
        feed(new OutputLines(64, null, failures::add), "y".repeat(5000) + "\nlast", 7);
    assertThat(cut.lastLines()).containsExactly("last");
  }

  @Test
  void aConsumerThatThrowsIsReportedAndHearsTheNextLine() {
    List<String> heard = new ArrayList<>();
    OutputLines out =
        new OutputLines(
            16,
            l -> {
              heard.add(l);
              if (l.equals("bad")) {
                throw new IllegalStateException("consumer broke");
              }
            },
            failures::add);
    feed(out, "bad\ngood\n", 2);
    assertThat(heard).containsExactly("bad", "good");
    assertThat(failures)
        .singleElement()
        .extracting(Throwable::getMessage)
        .isEqualTo("consumer broke");
  }

  /** Feeds {@code text} in reads of {@code read} bytes, then ends it. */
  private static OutputLines feed(OutputLines out, String text, int read) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    byte[] buffer = new byte[read];
    for (int at = 0; at < bytes.length; at += read) {
      int n = Math.min(read, bytes.length - at);
      System.arraycopy(bytes, at, buffer, 0, n); // a reused buffer, as the reader's is
      out.accept(buffer, 0, n);
    }
    out.end();
    return out;
  }
}
