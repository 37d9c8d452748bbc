package io.bulkhead.benchmarks.adaptive;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The shared dependency's book, on instants the test chooses: no clock, no thread. */
class SharedDependencyTest {

  private final List<SharedDependency.Call> ended = new ArrayList<>();

  @Test
  void callsPastTheKneeShareItsCapacityAndSpeedUpWhenOthersLeave() {
    var book = new SharedDependency.Book(2, 0);
    var short_ = book.arrive(0, 100, null, ended);
    var longA = book.arrive(0, 300, null, ended);
    var longB = book.arrive(0, 300, null, ended);
    // Three inside, knee 2: each at 2/3 speed, so the short one ends at 150.
    assertThat(book.nextEnd()).isEqualTo(150);
    book.advance(149, ended);
    assertThat(ended).isEmpty();
    book.advance(150, ended);
    assertThat(ended).containsExactly(short_);
    // Two inside: full speed for their 200 left (a fixed latency would have kept them to 450).
    assertThat(book.nextEnd()).isEqualTo(350);
    book.advance(349, ended);
    assertThat(ended).containsExactly(short_);
    book.advance(350, ended);
    assertThat(ended).containsExactly(short_, longA, longB);
    assertThat(book.inside()).isZero();
  }

  @Test
  void aLateAdvanceEndsEachCallAtItsOwnInstant() {
    var book = new SharedDependency.Book(1, 0);
    var first = book.arrive(0, 100, null, ended);
    // Arrives halfway through the first: both at half speed from 50, so the first ends at 150 and
    // the second, with 50 left, alone from there at 200.
    var second = book.arrive(50, 100, null, ended);
    book.advance(1_000, ended);
    assertThat(ended).containsExactly(first, second);
    assertThat(first.done).isTrue();
    assertThat(second.done).isTrue();
    // The book is at 1,000 now: a call arriving then is served from then.
    var third = book.arrive(1_000, 40, null, ended);
    assertThat(book.nextEnd()).isEqualTo(1_040);
    assertThat(third.done).isFalse();
  }

  @Test
  void pastTheKneeTheDependencyAnswersKneeOverWorkWhateverTheNumberInside() {
    for (int n : new int[] {4, 8, 16}) {
      var book = new SharedDependency.Book(2, 0);
      ended.clear();
      for (int i = 0; i < n; i++) {
        book.arrive(0, 100, null, ended);
      }
      // n calls of 100 at 2 / n speed: all end at 50 n, so 2 per 100 whatever n is.
      book.advance(50L * n - 1, ended);
      assertThat(ended).isEmpty();
      book.advance(50L * n, ended);
      assertThat(ended).hasSize(n);
    }
  }
}
