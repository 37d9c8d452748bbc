package io.bulkhead.config.internal;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/**
 * Suggests the known word a misspelt one was probably meant to be.
 *
 * <p>The work is bounded whatever the file holds: a word longer than {@link #LONGEST_WORD} is no
 * typo and gets no suggestion; a candidate whose length differs by more than the edits allowed is
 * skipped without comparing (the distance is at least the difference in length); at most {@link
 * #MOST_CANDIDATES} candidates are compared; and a comparison keeps three rows, not the whole
 * matrix.
 */
public final class DidYouMean {

  /** Longer than any key or sensible name; a 40,000-character word is not a typo of one. */
  public static final int LONGEST_WORD = 64;

  /** Suggestions come from the first this many candidates (budgets, say) in file order. */
  public static final int MOST_CANDIDATES = 1_000;

  private DidYouMean() {}

  /**
   * Returns the candidate closest to {@code word} by edit distance (insertions, deletions,
   * substitutions and swaps of neighbours each cost 1, case is ignored), if it is close enough to
   * be a typo: at most 1 edit for words up to 4 letters, 2 up to 8, 3 beyond.
   */
  public static Optional<String> closest(String word, Collection<String> candidates) {
    if (word.length() > LONGEST_WORD) {
      return Optional.empty();
    }
    String w = word.toLowerCase(Locale.ROOT);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    int compared = 0;
    for (String c : candidates) {
      if (compared++ == MOST_CANDIDATES) {
        break;
      }
      if (Math.abs(c.length() - w.length()) > allowed(c.length())) {
        continue;
      }
      int d = distance(w, c.toLowerCase(Locale.ROOT));
      if (d <= allowed(c.length()) && d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
    return Optional.ofNullable(best);
  }

  private static int allowed(int length) {
    return length <= 4 ? 1 : length <= 8 ? 2 : 3;
  }

  /**
   * Optimal string alignment distance: Levenshtein plus swaps of adjacent letters. Keeps the
   * current row and the two before it (a swap looks two back), each as long as the shorter word.
   */
  public static int distance(String a, String b) {
    if (a.length() < b.length()) {
      return distance(b, a); // the distance is symmetric; rows as long as the shorter word
    }
    int n = b.length();
    int[] twoBack = new int[n + 1];
    int[] previous = new int[n + 1];
    int[] current = new int[n + 1];
    for (int j = 0; j <= n; j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= n; j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        int d = Math.min(Math.min(previous[j] + 1, current[j - 1] + 1), previous[j - 1] + cost);
        if (i > 1
            && j > 1
            && a.charAt(i - 1) == b.charAt(j - 2)
            && a.charAt(i - 2) == b.charAt(j - 1)) {
          d = Math.min(d, twoBack[j - 2] + 1);
        }
        current[j] = d;
      }
      int[] recycled = twoBack;
      twoBack = previous;
      previous = current;
      current = recycled;
    }
    return previous[n];
  }
}
