package io.bulkhead.docs;

import io.bulkhead.process.WorkerProcess;

/** docs/operations.md: the report worker of docs/processes.md, whose resources get gauges. */
@SuppressWarnings("unused")
abstract class OperationsGivens extends Givens {
  WorkerProcess reports;
}
