package io.bulkhead.docs;

import io.bulkhead.Bulkhead;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.ServerBuilder;

/** docs/grpc.md: a server being built, a service, a channel and a second compartment. */
@SuppressWarnings("unused")
abstract class GrpcGivens extends Givens {
  ServerBuilder<?> serverBuilder;
  BindableService chatService;
  ManagedChannel managedChannel;
  Bulkhead search;
}
