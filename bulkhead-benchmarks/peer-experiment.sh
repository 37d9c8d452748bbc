#!/usr/bin/env bash
# The slow-upstream experiment against a peer: the demo's app with /chat guarded by our compartment, then by
# Resilience4j's SemaphoreBulkhead, under the same load. Writes DIR/peer.json (read by report.py for
# BENCHMARKS.md) and the chart bulkhead-benchmarks/peer-experiment.svg. About a minute with
# the seed's 30 s upstream.
#
#   bulkhead-benchmarks/peer-experiment.sh DIR [--delay 3s] [--logins-after 1s] [--sample-every 20ms]
#
# Builds nothing: bulkhead-benchmarks/run builds the jar first (or run
#   mvn -B -q -Pbenchmarks -pl bulkhead-benchmarks -am package -DskipTests
# yourself).
set -euo pipefail
if [[ $# -lt 1 || "$1" == -* ]]; then
  echo "usage: $0 DIR [--delay 3s] [--logins-after 1s] [--sample-every 20ms] [--svg FILE]" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd) # before the cd below, so a DIR relative to the caller stays where it was meant
shift
cd "$(dirname "$0")/.."
jar=bulkhead-benchmarks/target/benchmarks.jar
if [[ ! -f "$jar" ]]; then
  echo "peer-experiment: $jar is missing; build it with" \
    "mvn -B -q -Pbenchmarks -pl bulkhead-benchmarks -am package -DskipTests" >&2
  exit 1
fi
exec java -cp "$jar" io.bulkhead.benchmarks.peer.PeerExperiment \
  --out "$out" --svg bulkhead-benchmarks/peer-experiment.svg "$@"
