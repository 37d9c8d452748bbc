package io.bulkhead;

/**
 * The bucket layout shared by the sliding window and {@link LatencySummary}: log-linear, four
 * buckets per power of two from 2^10 ns (about 1 µs) to 2^42 ns (about 73 minutes), one underflow
 * bucket below and one overflow bucket above. Finding a bucket is a leading-zero count and two
 * shifts.
 */
final class Histograms {

  private Histograms() {}

  private static final int SUB_BITS = 2;
  private static final int SUB = 1 << SUB_BITS;
  private static final int MIN_EXP = 10;
  private static final int OCTAVES = 32;
  static final int BUCKETS = 1 + OCTAVES * SUB + 1;

  static int bucketOf(long nanos) {
    if (nanos < (1L << MIN_EXP)) {
      return 0;
    }
    int exp = 63 - Long.numberOfLeadingZeros(nanos);
    if (exp >= MIN_EXP + OCTAVES) {
      return BUCKETS - 1;
    }
    int sub = (int) (nanos >>> (exp - SUB_BITS)) & (SUB - 1);
    return 1 + (exp - MIN_EXP) * SUB + sub;
  }

  /** The smallest duration that falls in bucket {@code b}. */
  static long lowerBound(int b) {
    if (b == 0) {
      return 0;
    }
    if (b >= BUCKETS - 1) {
      return 1L << (MIN_EXP + OCTAVES);
    }
    int i = b - 1;
    int exp = MIN_EXP + i / SUB;
    int sub = i % SUB;
    return (1L << exp) + ((long) sub << (exp - SUB_BITS));
  }

  /**
   * The value reported for a bucket: its midpoint (the overflow bucket reports its lower bound).
   */
  static long representative(int b) {
    if (b >= BUCKETS - 1) {
      return lowerBound(b);
    }
    long lo = lowerBound(b);
    long hi = lowerBound(b + 1);
    return lo + (hi - lo) / 2;
  }
}
