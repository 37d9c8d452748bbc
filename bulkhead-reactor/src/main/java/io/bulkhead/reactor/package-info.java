/**
 * Compartments for Project Reactor.
 *
 * <p>{@link io.bulkhead.reactor.BulkheadOperator} puts each subscription to a {@code Mono} or a
 * {@code Flux} into a {@link io.bulkhead.Bulkhead}: the upstream is subscribed only once the
 * compartment admits it, and the slot is held until the upstream completes, fails, or is cancelled.
 *
 * <pre>{@code
 * Bulkhead llm = Bulkhead.builder("llm").limit(10).maxQueue(20).maxWait(Duration.ofSeconds(1)).build();
 *
 * Mono<Answer> answer = client.complete(prompt).transformDeferred(BulkheadOperator.of(llm));
 * Flux<Token> tokens = client.stream(prompt).transformDeferred(BulkheadOperator.of(llm));
 * }</pre>
 *
 * <h2>What a subscription does</h2>
 *
 * <ul>
 *   <li><b>A free slot</b>: the upstream is subscribed at once, on the subscribing thread, and its
 *       signals pass through unchanged, with the subscriber's {@code Context} and its {@code
 *       request(n)}.
 *   <li><b>Every slot taken</b>: the subscription waits in the compartment's FIFO queue, for at
 *       most {@code maxWait}. No thread waits with it: waiting is an entry in the queue, so ten
 *       thousand waiting subscriptions cost ten thousand small objects, not ten thousand threads,
 *       and an event loop is never blocked. Demand requested meanwhile is kept and passed on at
 *       admission.
 *   <li><b>Not admitted</b>: the subscriber gets {@code onError(BulkheadFullException)} with reason
 *       {@code QUEUE_FULL} (no room to wait: at once, during {@code subscribe}) or {@code
 *       WAIT_TIMEOUT} (no slot within {@code maxWait}). Nothing is thrown from {@code subscribe},
 *       and the upstream is never subscribed.
 *   <li><b>Cancelled while waiting</b> (a {@code timeout()}, a {@code take}, a client that went
 *       away): the subscription leaves the queue and counts in {@link
 *       io.bulkhead.BulkheadStats#cancelled()}; the upstream is never subscribed.
 *   <li><b>Cancelled after admission</b>: the upstream is cancelled first, then the slot is freed,
 *       so the dependency never sees more subscriptions than the limit.
 *   <li><b>Completion or error</b>: the slot is freed, then the signal is passed on; except for an
 *       upstream that answers during its own subscription (a {@code Mono.just}), whose signal is
 *       passed on first and whose slot is freed as soon as that subscription returns.
 * </ul>
 *
 * <p>The slot is freed exactly once however the subscription ends, even when a cancel races with
 * the upstream's completion.
 *
 * <h2>Which thread runs what</h2>
 *
 * <p>The operator never switches threads itself, and never holds a lock while it calls the upstream
 * or the subscriber. A subscription that had to wait is started on one of its compartment's own
 * threads ({@code bulkhead-<name>-<n>}), never on the thread that freed the slot and never on a
 * thread shared with other compartments. The upstream is subscribed there, so whatever the upstream
 * does synchronously on subscription runs there too. A {@code WAIT_TIMEOUT} is signalled on the
 * compartment's own threads as well. If that matters, move the work off those threads with
 * Reactor's own operators: {@code subscribeOn} before the operator for the upstream's subscription,
 * {@code publishOn} after it for what the subscriber does with the signals:
 *
 * <pre>{@code
 * client.complete(prompt)
 *     .subscribeOn(Schedulers.boundedElastic())     // the upstream starts there, whoever admits it
 *     .transformDeferred(BulkheadOperator.of(llm))
 *     .publishOn(Schedulers.parallel())              // the subscriber's work, rejections included
 * }</pre>
 */
@NullMarked
package io.bulkhead.reactor;

import org.jspecify.annotations.NullMarked;
