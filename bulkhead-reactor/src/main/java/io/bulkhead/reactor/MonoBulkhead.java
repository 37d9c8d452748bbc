package io.bulkhead.reactor;

import io.bulkhead.Bulkhead;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;

/**
 * A {@code Mono} whose every subscription goes through the compartment (see BulkheadSubscriber).
 */
final class MonoBulkhead<T> extends MonoOperator<T, T> {

  private final Bulkhead bulkhead;

  MonoBulkhead(Mono<? extends T> source, Bulkhead bulkhead) {
    super(source);
    this.bulkhead = bulkhead;
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    new BulkheadSubscriber<T>(source, bulkhead, actual).start();
  }

  @Override
  @SuppressWarnings("rawtypes") // Scannable declares the raw Attr
  public Object scanUnsafe(Attr key) {
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.ASYNC; // a waiting subscription starts on its compartment's own threads
    }
    return super.scanUnsafe(key);
  }
}
