#!/usr/bin/env python3
"""Builds BENCHMARKS.md from the result files that bulkhead-benchmarks/run writes.

Every figure in the output comes from those files; the targets are the ones issue 7 sets.
"""
import json
import math
import os
import sys

# report.py DIR                                   the whole of BENCHMARKS.md, on standard output
# report.py --only fleet-cost DIR BENCHMARKS.md   regenerate that one section in place, from DIR
only = None
args = sys.argv[1:]
if args and args[0] == "--only":
    only = args[1]
    args = args[2:]
    if only != "fleet-cost" or len(args) != 2:
        sys.exit("usage: report.py DIR | report.py --only fleet-cost DIR BENCHMARKS.md")
out = args[0]


def load(name, default=None):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return default
    with open(path) as f:
        return json.load(f)


FLEET_BEGIN = "<!-- fleet-cost: begin -->"
FLEET_END = "<!-- fleet-cost: end -->"


def fmt_us(v):
    if v >= 1000:
        return "{:,.1f} ms".format(v / 1000)
    if v >= 100:
        return "%.0f µs" % v
    if v >= 1:
        return "%.1f µs" % v
    return "%.0f ns" % (v * 1000)


def fleet_cost_section(fc):
    """The fleet-cost section, between its markers, from FleetCost's JSON."""
    q = []
    q.append(FLEET_BEGIN)
    q.append("## A fleet compartment on Redis: admit and release")
    q.append("")
    q.append("`FleetCost`: take a permit and give it back at once, on a fleet compartment of "
             "`RedisCompartments` (Redis at `%s`, loopback) and on a local `Bulkhead`, with one "
             "thread and with four. The limit (1000) is far above the thread count, so nobody "
             "waits: this is the admitted path alone. For the fleet compartment that is the local "
             "gate, one script round trip to take the lease and one to give it back (which also "
             "publishes a release message, received by this process's own subscription). Every "
             "operation is timed on its own (`System.nanoTime`, HdrHistogram), so the figures are "
             "per-operation percentiles, and the throughput is all threads together; %s s of "
             "warm-up, then %s s measured, per row, in the order of the table's rows."
             % (fc["redis"], fc["warm_up_s"], fc["measure_s"]))
    q.append("")
    q.append("| subject | threads | p50 | p99 | p99.9 | max | admit+release per second | p50 vs local |")
    q.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    local = {r["threads"]: r for r in fc["results"] if r["subject"] == "local"}
    for r in sorted(fc["results"], key=lambda r: (r["threads"], r["subject"] != "local")):
        base = local.get(r["threads"])
        ratio = "{:,.0f}×".format(r["p50_us"] / base["p50_us"]) if base and base["p50_us"] > 0 else "–"
        q.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
            "fleet (Redis)" if r["subject"] == "fleet" else "local",
            r["threads"], fmt_us(r["p50_us"]), fmt_us(r["p99_us"]), fmt_us(r["p999_us"]),
            fmt_us(r["max_us"]), "{:,}".format(r["ops_per_s"]), ratio))
    q.append("")
    q.append("Machine: %d processors, load average %s before and %s after; the fleet compartment "
             "fell back to its local policy %d times during the run. The local figures include "
             "the two `System.nanoTime` reads around each operation. Run it alone with "
             "`java -cp bulkhead-benchmarks/target/benchmarks.jar io.bulkhead.benchmarks.FleetCost "
             "[REDIS_URI [WARM_UP [MEASURE]]]` after building the benchmarks."
             % (fc["cores"], fc["load_before"], fc["load_after"], fc["fallback_switches"]))
    q.append(FLEET_END)
    return q


if only == "fleet-cost":
    fc = load("fleet-cost.json")
    if not fc:
        sys.exit("report.py: no fleet-cost.json in " + out)
    target_file = args[1]
    with open(target_file) as f:
        text = f.read()
    section = "\n".join(fleet_cost_section(fc))
    if FLEET_BEGIN in text and FLEET_END in text:
        before = text[:text.index(FLEET_BEGIN)]
        after = text[text.index(FLEET_END) + len(FLEET_END):]
        text = before + section + after
    elif "\n## The experiment against a peer" in text:
        i = text.index("\n## The experiment against a peer") + 1
        text = text[:i] + section + "\n\n" + text[i:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(target_file, "w") as f:
        f.write(text)
    sys.exit(0)

machine = load("machine.json", {})
jmh = load("jmh.json", [])
load_after = ""
if os.path.exists(os.path.join(out, "load_after.txt")):
    load_after = open(os.path.join(out, "load_after.txt")).read().strip()

def number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


# (benchmark method, subject) -> (score ns/op, error, alloc B/op)
results = {}
for r in jmh:
    method = r["benchmark"].rsplit(".", 2)[-2] + "." + r["benchmark"].rsplit(".", 1)[-1]
    subject = r.get("params", {}).get("subject", "")
    pm = r["primaryMetric"]
    alloc = r.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score")
    # JMH writes "NaN" for the error when a run has too few iterations to estimate one (--quick).
    results[(method, subject)] = (pm["score"], number(pm["scoreError"]), alloc)


def cell(method, subject):
    v = results.get((method, subject))
    if v is None:
        return None
    return v


def fmt_ns(v):
    if not v:
        return "–"
    if math.isnan(v[1]):
        return "%.1f ± n/a" % v[0]
    return "%.1f ± %.1f" % (v[0], v[1])


def fmt_alloc(v):
    if not v or v[2] is None:
        return "–"
    return "%.0f" % v[2] if v[2] >= 0.5 else "0"


subjects = ["bulkhead", "resilience4j", "resilience4j-nostack", "failsafe", "netflix-simple",
            "semaphore-fair", "semaphore-nonfair", "none", "future"]
lines = []
p = lines.append
p("# Benchmarks")
p("")
p("Generated by `bulkhead-benchmarks/run` from the files it writes under "
  "`bulkhead-benchmarks/target/results/`; nothing here is typed by hand. Run it yourself:")
p("")
p("```")
p("bulkhead-benchmarks/run")
p("```")
p("")
p("## Machine")
p("")
p("| | |")
p("|---|---|")
for k in ["date", "cpu", "cores", "memory", "java", "load_before"]:
    if k in machine:
        p("| %s | %s |" % (k.replace("_", " "), machine[k]))
if load_after:
    p("| load after | %s |" % load_after.split(":", 1)[1].strip())
p("")
p("## How to read it")
p("")
p("Scores are JMH average time per operation (lower is better) with the 99.9% confidence interval "
  "JMH reports (`±`); when two intervals overlap, the difference is not established by this run. "
  "Allocation is `gc.alloc.rate.norm` from `-prof gc`, in bytes per operation. All subjects ran in "
  "the same JVM run on the same machine; ratios between them mean more than the absolute numbers, "
  "which depend on the machine (`System.nanoTime` alone costs about 25 ns on this virtual machine).")
p("")

sections = [
    ("AdmitReleaseBenchmark.sync", "Admitted, synchronous: run a trivial task inside the compartment (uncontended)"),
    ("AdmitReleaseBenchmark.permit", "Admitted, bare permit: take and give back a permit (uncontended)"),
    ("AdmitReleaseBenchmark.async", "Admitted, asynchronous: a task whose stage is already complete (uncontended)"),
    ("ContendedBenchmark.sync", "Two threads contending on one compartment (synchronous)"),
    ("RejectionBenchmark.rejected", "Rejection: every slot taken, a caller asks to run a task"),
]
for method, title in sections:
    rows = [(s, cell(method, s)) for s in subjects if cell(method, s)]
    if not rows:
        continue
    p("## " + title)
    p("")
    p("| subject | ns/op | B/op | vs bulkhead |")
    p("|---|---:|---:|---:|")
    ours = cell(method, "bulkhead")
    for s, v in rows:
        ratio = "%.2f×" % (v[0] / ours[0]) if ours and ours[0] > 0 else "–"
        p("| %s | %s | %s | %s |" % (s, fmt_ns(v), fmt_alloc(v), ratio))
    p("")

# Targets (issue 7)
p("## Targets")
p("")
p("| target | measured | met |")
p("|---|---|---|")


def target(desc, measured, ok):
    p("| %s | %s | %s |" % (desc, measured, "yes" if ok else "**no**"))


sync = cell("AdmitReleaseBenchmark.sync", "bulkhead")
sem = cell("AdmitReleaseBenchmark.sync", "semaphore-nonfair")
r4j = cell("AdmitReleaseBenchmark.sync", "resilience4j")
if sync and sem:
    ratio = sync[0] / sem[0]
    target("admitted sync path within 1.5× the non-fair Semaphore", "%.2f×" % ratio, ratio <= 1.5)
if sync and r4j:
    target("admitted sync path not slower than Resilience4j (default config)",
           "%.1f vs %.1f ns/op" % (sync[0], r4j[0]), sync[0] <= r4j[0])
if sync:
    target("0 B/op on the admitted sync path", "%s B/op" % fmt_alloc(sync),
           sync[2] is not None and sync[2] < 0.5)
rej = cell("RejectionBenchmark.rejected", "bulkhead")
rej_r4j = cell("RejectionBenchmark.rejected", "resilience4j")
rej_r4j_ns = cell("RejectionBenchmark.rejected", "resilience4j-nostack")
if rej and rej_r4j:
    ratio = rej_r4j[0] / rej[0]
    target("rejection at least 20× faster than Resilience4j's default", "%.1f×" % ratio, ratio >= 20)
if rej and rej_r4j_ns:
    target("rejection faster than Resilience4j without stack traces",
           "%.1f vs %.1f ns/op" % (rej[0], rej_r4j_ns[0]), rej[0] < rej_r4j_ns[0])
if rej:
    target("rejection allocates no more than one small object", "%s B/op" % fmt_alloc(rej),
           rej[2] is not None and rej[2] <= 64)
asy = cell("AdmitReleaseBenchmark.async", "bulkhead")
fut = cell("AdmitReleaseBenchmark.async", "future")
if asy and fut:
    # "Costs no more than its future": the only allocation is the future it returns (an instance
    # of a CompletableFuture subclass that carries the call's state), and the time is compared
    # with allocating and completing a plain CompletableFuture.
    target("admitted async path costs no more than its future: allocates only the future it returns",
           "%s B/op, %.1f ns/op (one plain future: %s B/op, %.1f ns/op)" % (
               fmt_alloc(asy), asy[0], fmt_alloc(fut), fut[0]),
           asy[2] is not None and asy[2] <= 64)
for gc in ["G1", "Serial"]:
    sc = load("scale-%s.json" % gc)
    if sc:
        target("%d async waiters with timeouts (%s GC): at most 200 bytes per waiter" % (sc["waiters"], gc),
               "%.1f B" % sc["bytes_per_waiter"], sc["bytes_per_waiter"] <= 200)
        target("%d async waiters with timeouts (%s GC): p99 timeout lateness at most 20 ms" % (sc["waiters"], gc),
               "p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (sc["lateness_p50_ms"], sc["lateness_p99_ms"], sc["lateness_max_ms"]),
               sc["lateness_p99_ms"] <= 20)
p("")
p("What the admitted path pays for: two CASes on one state word, the first of which also counts the "
  "admission (`admitted` is exact; `completed` is derived), a check of the latency-sampling state, and "
  "an empty listener walk. The clock is read for every call that can matter (a compartment more than half full, a call "
  "that waited, calls taking 20 µs or more, or any listener attached) and for one in 64 of the fast "
  "calls of a compartment with room to spare, as here; see `DefaultBulkhead`'s design comment.")
p("")
scales = [(gc, load("scale-%s.json" % gc)) for gc in ["G1", "Serial"]]
scales = [(gc, sc) for gc, sc in scales if sc]
if scales:
    p("Waiter scale (`WaiterScale`, one JVM per collector, heap fixed at 2 GB with `-Xms2g -Xmx2g` as "
      "on a server): every slot of a compartment is held, %d calls are submitted and wait without a "
      "thread until their 3 s `maxWait` passes. Bytes per waiter is the growth of the used heap after "
      "full collections, less the harness's own array; lateness is how long after its deadline each "
      "waiter's rejection arrived. Submitting took %s, so every deadline falls within that span and "
      "the sweep expires them back to back: the harshest case for lateness. One unmeasured round of "
      "20,000 waiters runs first so that the JIT has compiled the expiry path."
      % (scales[0][1]["waiters"],
         " and ".join("%d ms (%s)" % (sc["enqueue_ms"], gc) for gc, sc in scales)))
    p("")

fleet_cost = load("fleet-cost.json")
if fleet_cost:
    lines.extend(fleet_cost_section(fleet_cost))
    p("")

peer = load("peer.json")
if peer:
    p("## The experiment against a peer")
    p("")
    p(peer.get("markdown", ""))
    p("")

print("\n".join(lines))
