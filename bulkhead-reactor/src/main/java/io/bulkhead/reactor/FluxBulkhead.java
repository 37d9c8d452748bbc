package io.bulkhead.reactor;

import io.bulkhead.Bulkhead;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;

/**
 * A {@code Flux} whose every subscription goes through the compartment (see BulkheadSubscriber).
 */
final class FluxBulkhead<T> extends FluxOperator<T, T> {

  private final Bulkhead bulkhead;

  FluxBulkhead(Flux<? extends T> source, Bulkhead bulkhead) {
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
