package io.bulkhead.docs;

import io.bulkhead.WorkerPool;

/** docs/sizing.md: its second snippet resizes the worker pool its first one built. */
@SuppressWarnings("unused")
abstract class SizingGivens extends Givens {
  WorkerPool reports;
}
