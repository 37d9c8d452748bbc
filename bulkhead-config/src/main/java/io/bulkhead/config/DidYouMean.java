package io.bulkhead.config;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/** Suggests the known word a misspelt one was probably meant to be. */
final class DidYouMean {

  private DidYouMean() {}

  /**
   * Returns the candidate closest to {@code word} by edit distance (insertions, deletions,
   * substitutions and swaps of neighbours each cost 1, case is ignored), if it is close enough to be a
   * typo: at most 1 edit for words up to 4 letters, 2 up to 8, 3 beyond.
   */
  static Optional<String> closest(String word, Collection<String> candidates) {
    String w = word.toLowerCase(Locale.ROOT);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String c : candidates) {
      int d = distance(w, c.toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
    if (best == null) {
      return Optional.empty();
    }
    int len = best.length();
    int allowed = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    return bestDistance <= allowed ? Optional.of(best) : Optional.empty();
  }

  /** Optimal string alignment distance: Levenshtein plus swaps of adjacent letters. */
  static int distance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }
}
