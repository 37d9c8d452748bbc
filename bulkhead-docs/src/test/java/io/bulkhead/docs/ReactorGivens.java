package io.bulkhead.docs;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** docs/reactor.md: a reactive client whose answers are a {@code Mono} and a {@code Flux}. */
@SuppressWarnings("unused")
abstract class ReactorGivens extends Givens {
  record Answer(String text) {}

  record Token(String text) {}

  interface ReactiveClient {
    Mono<Answer> complete(String prompt);

    Flux<Token> stream(String prompt);
  }

  ReactiveClient client;
}
