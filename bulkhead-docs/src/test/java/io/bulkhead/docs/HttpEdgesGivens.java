package io.bulkhead.docs;

import io.bulkhead.Bulkhead;

/** docs/http-edges.md: a second compartment behind the edge. */
@SuppressWarnings("unused")
abstract class HttpEdgesGivens extends Givens {
  Bulkhead reports;
}
