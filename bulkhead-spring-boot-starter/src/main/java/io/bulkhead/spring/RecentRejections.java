package io.bulkhead.spring;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadListener;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;
import org.springframework.beans.factory.DisposableBean;

/*
 * Algorithm: one ring per compartment, written by the rejecting threads without a lock. A writer takes
 * the next sequence number (getAndIncrement) and stores its event, which carries that number, in slot
 * number % capacity. A reader takes the count C, reads every slot, and keeps the events whose number
 * is in [C - capacity, C), in order.
 *
 * Races, as interleavings:
 *   W1 two writers: each has its own number, so they write different slots unless their numbers are a
 *      capacity apart, and then the later number is the one to keep; a slow writer of the earlier may
 *      store after it, and a reader then misses the later event (it sees the earlier one's number,
 *      outside its range) until the slot is written again. Never a torn event: slots hold immutable
 *      records, swapped whole.
 *   R1 reader vs writer: a number taken but not yet stored reads as the slot's older event (outside the
 *      range: dropped) or as nothing; the count said C, so the reader reports at most the events it
 *      found, never one twice.
 * So a reader sees a subset of the last `capacity` rejections, in order, each exactly as written; the
 * count of rejections (`recorded`) is exact.
 */

/**
 * The last rejections of every compartment of a registry, kept for the {@code compartmentevents}
 * endpoint: when and why each was refused. Off the admitted path: its listener acts only on a
 * rejection, where it costs a sequence number, a clock read and one small object, and holds no
 * lock. Bounded: at most {@link #CAPACITY} events per compartment.
 */
final class RecentRejections implements DisposableBean {

  /** How many rejections are kept per compartment. */
  static final int CAPACITY = 100;

  /** One refusal. */
  record Event(long number, long epochMillis, BulkheadFullException.Reason reason) {

    /** The event as the endpoint shows it. */
    Map<String, Object> toMap() {
      Map<String, Object> map = new LinkedHashMap<>();
      map.put("time", Instant.ofEpochMilli(epochMillis).toString());
      map.put("reason", reason.name().toLowerCase(Locale.ROOT));
      return map;
    }
  }

  /** One compartment's ring. */
  static final class Ring implements BulkheadListener {
    private final AtomicReferenceArray<Event> slots = new AtomicReferenceArray<>(CAPACITY);
    private final AtomicLong count = new AtomicLong();
    private final LongSupplier clock;
    final Compartment compartment;

    Ring(Compartment compartment, LongSupplier clock) {
      this.compartment = compartment;
      this.clock = clock;
    }

    @Override
    public void onRejected(Compartment bulkhead, BulkheadFullException.Reason reason) {
      long number = count.getAndIncrement();
      slots.set((int) (number % CAPACITY), new Event(number, clock.getAsLong(), reason));
    }

    /** How many rejections this ring has heard of. */
    long recorded() {
      return count.get();
    }

    /** The last rejections, oldest first. */
    List<Event> events() {
      long end = count.get();
      long start = Math.max(0, end - CAPACITY);
      List<Event> events = new ArrayList<>(CAPACITY);
      for (int i = 0; i < CAPACITY; i++) {
        Event event = slots.get(i);
        if (event != null && event.number() >= start && event.number() < end) {
          events.add(event);
        }
      }
      events.sort(Comparator.comparingLong(Event::number));
      return events;
    }
  }

  private final BulkheadRegistry registry;
  private final LongSupplier clock;
  private final Map<String, Ring> rings = new ConcurrentHashMap<>();
  private final BulkheadRegistry.Listener membership =
      new BulkheadRegistry.Listener() {
        @Override
        public void onAdded(Compartment compartment) {
          Ring ring = new Ring(compartment, clock);
          compartment.addListener(ring);
          Ring replaced = rings.put(compartment.name(), ring);
          if (replaced != null) {
            replaced.compartment.removeListener(replaced);
          }
        }

        @Override
        public void onRemoved(Compartment compartment) {
          Ring ring = rings.get(compartment.name());
          if (ring != null && ring.compartment == compartment) {
            compartment.removeListener(ring);
            rings.remove(compartment.name(), ring);
          }
        }
      };

  /** Follows every compartment of {@code registry}, now and as they come and go. */
  RecentRejections(BulkheadRegistry registry) {
    this(registry, System::currentTimeMillis);
  }

  RecentRejections(BulkheadRegistry registry, LongSupplier clock) {
    this.registry = registry;
    this.clock = clock;
    registry.addListener(membership);
  }

  /** Every compartment's ring, in the registry's order. */
  Map<String, Ring> rings() {
    Map<String, Ring> ordered = new LinkedHashMap<>();
    for (Compartment compartment : registry.all()) {
      Ring ring = rings.get(compartment.name());
      if (ring != null) {
        ordered.put(compartment.name(), ring);
      }
    }
    return ordered;
  }

  @Override
  public void destroy() {
    registry.removeListener(membership);
    rings.values().forEach(ring -> ring.compartment.removeListener(ring));
    rings.clear();
  }
}
