#!/usr/bin/env python3
"""Summarizes one h2load run from its --log-file into one JSON line (appended to OUT).

    h2load-summary.py LOG SECONDS OUT key=value...

The log has one row per request: start (us since epoch), HTTP status, microseconds to the end of
the response. The summary gives requests per second over the measured SECONDS, overall and per
status (200 admitted, 503 refused), and the latency percentiles of each; the key=value pairs
(variant, round, case, ...) are copied into it. Used by edge-bench.sh; report.py reads OUT.
"""
import json
import sys


def percentile(sorted_values, q):
    if not sorted_values:
        return None
    # nearest rank: the smallest value with at least q of the values at or below it
    rank = max(1, -(-len(sorted_values) * q // 1))
    return sorted_values[int(min(rank, len(sorted_values))) - 1]


def stats(latencies_us, seconds):
    latencies_us.sort()
    ms = lambda v: None if v is None else v / 1000.0
    return {
        "count": len(latencies_us),
        "per_s": len(latencies_us) / seconds,
        "p50_ms": ms(percentile(latencies_us, 0.50)),
        "p99_ms": ms(percentile(latencies_us, 0.99)),
        "p999_ms": ms(percentile(latencies_us, 0.999)),
        "max_ms": ms(latencies_us[-1] if latencies_us else None),
    }


def main():
    log, seconds, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    by_status = {}
    every = []
    with open(log) as f:
        for line in f:
            parts = line.split("\t")
            if len(parts) < 3:
                continue
            status, us = int(parts[1]), int(parts[2])
            by_status.setdefault(status, []).append(us)
            every.append(us)
    summary = {}
    for pair in sys.argv[4:]:
        k, v = pair.split("=", 1)
        summary[k] = v
    summary["seconds"] = seconds
    summary["all"] = stats(every, seconds)
    summary["status"] = {str(s): stats(v, seconds) for s, v in sorted(by_status.items())}
    with open(out, "a") as f:
        f.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()
