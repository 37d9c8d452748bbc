package io.bulkhead.benchmarks.adaptive;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A fake dependency that shares its capacity among the calls inside (processor sharing): up to
 * {@code knee} calls progress at full speed; with n &gt; knee inside, each progresses at knee / n
 * of full speed for as long as n are inside. A call needing {@code work} nanos of full-speed
 * service alone takes {@code work}; among 10 with a knee of 6 it takes 10 / 6 of that, and less if
 * others leave before it ends. Its throughput is knee / work a second whatever the number inside
 * past the knee.
 *
 * <p>{@link #serve} blocks its caller (parked) until the call ends.
 */
final class SharedDependency implements AutoCloseable {

  /*
   * Algorithm. Every call inside receives the same service rate, r(n) = min(1, knee / n), so one
   * number describes the service all of them received: the attained service S(t), with
   * dS/dt = r(n(t)). A call that arrives at t0 needing w ends when S reaches S(t0) + w (its mark),
   * so calls end in the order of their marks, kept in a priority queue.
   *
   * S is advanced lazily (Book), under the lock, by whichever thread comes (an arrival, or the
   * dependency's own thread): from `at` to now, event by event. If the head's mark is reached before
   * now, S advances exactly to it, at the instant it was reached (at + (mark - S) / r), the head
   * ends there and the rate changes for what follows. So the book is exact whenever a thread wakes
   * late: only the caller's wake-up is late, not the service the others received.
   *
   * Invariants (under the lock): S never decreases; every call in the queue has mark > S, except
   * between advance's steps; `at` never decreases.
   *
   * Races. An arrival and the dependency's thread both take the lock, so a call is added either
   * before the thread computes its next wake-up (it sees it) or after (the arrival unparks the
   * thread, which recomputes). A call's `done` is set under the lock and read by its caller without
   * it (volatile); whoever ended it unparks its caller after the lock is released. The caller parks
   * until it reads true, so an unpark that comes before its park is not lost (park returns at once)
   * and a spurious wake-up parks again.
   */

  /** One call inside: its mark, and whether it ended. */
  static final class Call {
    final double mark;
    final long arrival; // ties on the mark end in the order they arrived
    final Thread caller;
    volatile boolean done;

    Call(double mark, long arrival, Thread caller) {
      this.mark = mark;
      this.arrival = arrival;
      this.caller = caller;
    }
  }

  /** The book of S and the calls inside; not thread-safe (the dependency keeps it under a lock). */
  static final class Book {
    private final int knee;
    private final PriorityQueue<Call> inside =
        new PriorityQueue<>(
            (a, b) ->
                a.mark != b.mark
                    ? Double.compare(a.mark, b.mark)
                    : Long.compare(a.arrival, b.arrival));
    private long arrivals;
    private double attained; // S at `at`
    private long at;

    Book(int knee, long now) {
      this.knee = knee;
      this.at = now;
    }

    /**
     * A call needing {@code work} nanos arrives at {@code now}; the ended ones go to {@code ended}.
     */
    Call arrive(long now, long work, Thread caller, List<Call> ended) {
      advance(now, ended);
      Call call = new Call(attained + work, arrivals++, caller);
      inside.add(call);
      return call;
    }

    /** Advances S to {@code now}, ending every call whose mark it passes, at its own instant. */
    void advance(long now, List<Call> ended) {
      while (!inside.isEmpty()) {
        Call head = inside.peek();
        double endsAt = at + (head.mark - attained) / rate();
        if (endsAt > now) {
          break;
        }
        attained = Math.max(attained, head.mark);
        at = Math.max(at, (long) endsAt);
        inside.poll();
        head.done = true;
        ended.add(head);
      }
      if (now > at) {
        attained += (now - at) * rate();
        at = now;
      }
    }

    /** When the first call inside ends if nobody arrives, or {@link Long#MAX_VALUE} if none is. */
    long nextEnd() {
      if (inside.isEmpty()) {
        return Long.MAX_VALUE;
      }
      return at + Math.max(1, (long) Math.ceil((inside.peek().mark - attained) / rate()));
    }

    int inside() {
      return inside.size();
    }

    private double rate() {
      int n = inside.size();
      return n <= knee ? 1.0 : (double) knee / n;
    }
  }

  private final ReentrantLock lock = new ReentrantLock();
  private final Book book;
  private final Thread thread;
  private volatile boolean closed;

  SharedDependency(int knee) {
    this.book = new Book(knee, System.nanoTime());
    this.thread = new Thread(this::run, "shared-dependency");
    this.thread.setDaemon(true);
    this.thread.start();
  }

  /** Serves one call needing {@code work} nanos of full-speed service; returns when it ends. */
  void serve(long work) {
    List<Call> ended = new ArrayList<>();
    Call call;
    lock.lock();
    try {
      call = book.arrive(System.nanoTime(), work, Thread.currentThread(), ended);
    } finally {
      lock.unlock();
    }
    wake(ended);
    LockSupport.unpark(thread); // the next end may now be later: recompute
    while (!call.done) {
      LockSupport.park(this);
    }
  }

  private static void wake(List<Call> ended) {
    for (Call c : ended) {
      LockSupport.unpark(c.caller);
    }
  }

  private void run() {
    List<Call> ended = new ArrayList<>();
    while (!closed) {
      long next;
      lock.lock();
      try {
        book.advance(System.nanoTime(), ended);
        next = book.nextEnd();
      } finally {
        lock.unlock();
      }
      wake(ended);
      ended.clear();
      if (next == Long.MAX_VALUE) {
        LockSupport.park(this);
      } else {
        LockSupport.parkNanos(this, next - System.nanoTime());
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    LockSupport.unpark(thread);
  }
}
