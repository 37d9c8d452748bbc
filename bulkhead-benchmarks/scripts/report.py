#!/usr/bin/env python3
"""The one report generator of bulkhead-benchmarks: every table, figure and verdict of BENCHMARKS.md
and of docs/experiments.md comes from the result files the runners in this directory write under
bulkhead-benchmarks/results/<date>-<name>/; nothing in those sections is typed by hand.

    report.py benchmarks [--run DIR] [--into FILE]   BENCHMARKS.md's generated sections, each from the
                                                     newest results/<date>-<kind>/ that has its files
                                                     (DIR first, when given: a run of scripts/run)
    report.py experiments [--into FILE]              docs/experiments.md's generated sections: every
                                                     before/after run, kept or not
    report.py show DIR                               the section(s) of any one run directory, whatever
                                                     its date and name (a run not in the pages)
    report.py peer DIR                               a scripts/peer run's chart, peer-experiment.svg,
                                                     from its peer.json
    report.py soak DIR                               a scripts/soak run's summary.md and soak.svg, from
                                                     its samples.csv, minutes.csv and soak.json
    report.py edge-rounds DIR...                     per run, case, variant and round of an edge run:
                                                     p99 and the JIT compiler threads' CPU
    report.py jit-summary DIR                        per case of a scripts/edge-jit-diagnosis run: JIT
                                                     compilations, GC pauses, safepoints, thread CPU

A generated section sits between `<!-- report.py: NAME -->` and `<!-- report.py: end NAME -->` in its
file; the text outside the markers (the method, the reading of the numbers) is written by people and
left alone, and a section whose results are absent is left as it is.
"""
import argparse
import csv
import glob
import gzip
import json
import math
import os
import re
import statistics
import sys
from decimal import ROUND_HALF_UP, Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
RESULTS = os.path.join(BENCH, "results")


def runs_of(kind):
    """Every results/<date>-<kind>/ directory, oldest first (exactly that kind: edge is not edge-below)."""
    pattern = os.path.join(RESULTS, "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]-" + kind)
    return [d for d in sorted(glob.glob(pattern)) if os.path.isdir(d)]


def newest(kinds, filename, first=None):
    """The newest directory of one of these kinds that holds filename, or first if it holds it."""
    if first and os.path.exists(os.path.join(first, filename)):
        return first
    candidates = [d for kind in kinds for d in runs_of(kind) if os.path.exists(os.path.join(d, filename))]
    return max(candidates, key=os.path.basename) if candidates else None


def read_json_file(path, default=None):
    if path is None or not os.path.exists(path):
        return default
    with open(path) as f:
        return json.load(f)


def read_text(path):
    with open(path) as f:
        return f.read()


def rel(path):
    """A path as the repository names it, for the text of a section."""
    return os.path.relpath(path, ROOT)

NODE_APP = "article's Node app"
OUR_APP = "bulkhead-demo app"
WARM_APP = "bulkhead-demo app --warm-up"
COLD_APP = "bulkhead-demo app --no-warm-up"
AOT_APP = "bulkhead-demo app, JDK 25 AOT cache"
FLOOR_APP = "floor: canned answers from one C thread"


# Thread names as /proc shows them (15 characters, digits folded into #) and what they are.
THREAD_GROUPS = [
    ("C# CompilerThre", "JIT compilers"),
    ("app-bulkhead-#", "Jetty's pool: acceptor, selector, request handling"),
    ("bulkhead-jetty-", "the disconnect watcher"),
    ("bulkhead-insigh", "the diagnosis sampler"),
    ("bulkhead-llm-#", "the llm compartment's timer and hand-off threads"),
    ("upstream-llm-#", "the upstream client's executor"),
    ("HttpClient-#-Se", "the upstream client's selector"),
    ("Thread-#", "CompletableFuture's thread per task"),
    ("GC Thread##", "G1 GC workers"),
    ("VM Thread", "JVM safepoint operations (Serial GC runs here)"),
    ("VM Periodic Tas", "JVM periodic tasks"),
]



def case_warmup_note(m):
    """edge-bench's --case-warmup, in the methodology sentence of the edge section."""
    if not m.get("case_warmup"):
        return ""
    return (" and after its own load, unmeasured, in passes of %s s until the JIT compiler threads "
            "took under 1%% of a pass (at most 4)" % m["case_warmup"])

def headline_section(path):
    """The section on login p99 against the article's Node app, from headline.json; [] if absent."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        h = json.load(f)
    m, c = h["machine"], h["config"]
    summary = {(s["app"], s["client"], s["phase"]): s for s in h["summary"]}
    clients = {"demo": "the demo's `load` (a fresh JVM per round)",
               "demo-warmed": "the demo's `load` warmed up in its own process before its burst"
                              " (`load --warm-up %d`: bursts to a throwaway app inside the client,"
                              " then the compiler's settling; nothing reaches the measured app)"
                              % c.get("client_warm_up", 3),
               "node": "the article's `load.ts` (Node)"}
    lines = []
    p = lines.append
    p("## The headline: login p99 against the article's Node app")
    p("")
    default_warm_up = c.get("default_warm_up", False)  # the app warms up unless told not to
    warm_up = 0 if default_warm_up else c.get("warm_up", 0)
    p("The slow-upstream experiment in bulkhead mode (80 chats at once, 50 logins one second later, "
      "upstream delay %d ms), run by `bulkhead-benchmarks/headline` against the demo's `app` and the "
      "Node app of the article the experiment comes from, started alternately by the same script, "
      "against the same Node upstream and measured by the same clients. Each app process serves "
      "%d rounds of the load in a row: the first is *fresh* (the process has just started), the "
      "others *warm*; %d processes per app and client. Medians, with the range over the rounds in "
      "brackets. Client and app CPU are user + system time per round (the client's whole process; "
      "the app's over the round). The article's `load.ts` prints p99 in whole milliseconds; the "
      "p99 of 50 logins is the slowest of them." % (c["delay_ms"], c["rounds"], c["runs"]))
    p("")
    if warm_up:
        p("Our app is measured twice: as it starts by default, and with `app --warm-up %d`, its "
          "readiness warm-up: before it listens, it serves %d bursts of the experiment to a throwaway "
          "copy of itself (same mode and compartments, an in-process upstream answering in 150 ms), "
          "closes it and waits for the JIT compiler to settle; its own compartments and meters start "
          "from zero. A deployment that sends traffic only once the app is ready pays this at start "
          "instead of in the first burst; the *time to listen* column says what it costs. The Node app "
          "has no warm-up; the plain columns are the like-for-like comparison." % (warm_up, warm_up))
        p("")
    if default_warm_up:
        p("Our app starts as it does by default: before it listens it warms up, serving %s bursts of "
          "the experiment to a throwaway copy of itself (same mode and compartments, an in-process "
          "upstream answering in 150 ms) and waiting for the JIT compiler to settle; its own "
          "compartments and meters start from zero. So its *fresh* round is the first burst after "
          "its port opened, as behind a readiness probe; the *time to listen* column includes the "
          "warm-up.%s The Node app has no warm-up."
          % (c.get("warm_up") or 3,
             " It is also measured with `app --no-warm-up`, cold, to show what the warm-up is worth."
             if c.get("cold") else ""))
        p("")
    if c.get("floor"):
        p("The floor: the same clients, in the same run, against a server that does nothing "
          "(`lib/headline_floor.c`: one C thread, epoll, canned answers with one header, the llm "
          "compartment's behaviour played from counters), started and stopped like the apps. It is "
          "the least any server can add to the client's own time, so a row of ours below Node and "
          "above the floor is as much as a server can win with that client.")
        p("")
    if c.get("cds"):
        p("Class data sharing: before the measured runs, the script makes an AppCDS archive for each "
          "variant of our app, once, by a training run (start the app with "
          "`-XX:ArchiveClassesAtExit`, one round of the demo's load, stop it), and the measured "
          "processes start with `-XX:SharedArchiveFile` on it, so they load the JDK's, Jetty's and our "
          "classes already parsed and verified. That is a deployment step (made with the build, "
          "shipped with the jar), not something the app does; it is not counted in the time to "
          "listen.")
        p("")
    if c.get("aot_java"):
        p("JDK 25 and its AOT cache: one more variant of our app, the same jar and flags run by %s "
          "instead, from an AOT cache (JEP 483 and 515) made by the same kind of training run "
          "(`-XX:AOTCacheOutput`, then `-XX:AOTCache` on the measured processes): the classes are "
          "loaded and linked before `main`, and the method profiles of the training run are there "
          "from the start. The code is built with `--release 17`; only the JVM that runs it differs."
          % c["aot_java"])
        p("")
    import statistics
    during = [float(r["loadavg"].split()[0]) for r in h["rounds"]]
    p("Machine: %s cores (%s), %s, Node %s; load average %s before, %s after, 1-minute load at the "
      "start of a round %.1f to %.1f (median %.1f); %s to %s. Our app's JVM flags: `%s`%s."
      % (m["nproc"], m["cpu"], m["java"], m["node"], h["loadavg_before"], h["loadavg_after"],
         min(during), max(during), statistics.median(during), h["started"], h["finished"],
         c["app_flags"] or "(none)",
         (" plus `-XX:SharedArchiveFile=` the variant's archive"
          + (" (`-XX:AOTCache=` its cache on JDK 25)" if c.get("aot_java") else ""))
         if c.get("cds") else ""))
    p("")

    def rng(x, fmt="%.1f"):
        return (fmt + " (" + fmt + "–" + fmt + ")") % (x["median"], x["min"], x["max"])

    def listen(label, client):
        ms = [r["listen_ms"] for r in h["rounds"]
              if r["app"] == label and r["client"] == client and r["round"] == 0]
        return ("%.0f" % statistics.median(ms)) if ms else "–"

    variants = [(OUR_APP, "our app (warm-up by default)" if default_warm_up else "our app")]
    if c.get("cold"):
        variants.append((COLD_APP, "our app, `--no-warm-up`"))
    if warm_up:
        variants.append((WARM_APP, "our app, `--warm-up %d`" % warm_up))
    if c.get("aot_java"):
        variants.append((AOT_APP, "our app on JDK 25, AOT cache"))
    p("| client | phase | app | login p99 ms | ÷ Node | client CPU ms | app CPU ms per round | time to listen ms |")
    p("|---|---|---|---:|---:|---:|---:|---:|")
    for client in c["clients"]:
        for phase in ["fresh", "warm"]:
            node = summary.get((NODE_APP, client, phase))
            if not node:
                continue
            for label, name in variants:
                ours = summary.get((label, client, phase))
                if not ours:
                    continue
                ratio = ours["login_p99_ms"]["median"] / node["login_p99_ms"]["median"]
                p("| %s | %s (n=%d) | %s | %s | **%.2f×** | %.0f | %.0f | %s |" % (
                    clients.get(client, client), phase, ours["login_p99_ms"]["n"], name,
                    rng(ours["login_p99_ms"]), ratio, ours["client_cpu_ms"]["median"],
                    ours["app_cpu_ms"]["median"], listen(label, client) if phase == "fresh" else ""))
            p("| %s | %s (n=%d) | the article's Node app | %s | 1.00× | %.0f | %.0f | %s |" % (
                clients.get(client, client), phase, node["login_p99_ms"]["n"],
                rng(node["login_p99_ms"]), node["client_cpu_ms"]["median"],
                node["app_cpu_ms"]["median"], listen(NODE_APP, client) if phase == "fresh" else ""))
            floor = summary.get((FLOOR_APP, client, phase))
            if floor:
                p("| %s | %s (n=%d) | floor: no app, canned answers from one C thread | %s | %.2f× | %.0f | %.0f | |" % (
                    clients.get(client, client), phase, floor["login_p99_ms"]["n"],
                    rng(floor["login_p99_ms"]),
                    floor["login_p99_ms"]["median"] / node["login_p99_ms"]["median"],
                    floor["client_cpu_ms"]["median"], floor["app_cpu_ms"]["median"]))
    p("")
    others = [a[0] for a in c.get("java_apps", [])]
    if others:
        p("Other builds and flags of our app in the same run (for before/after):")
        p("")
        p("| app | JVM flags | client | phase | login p99 ms | app CPU ms per round | threads after |")
        p("|---|---|---|---|---:|---:|---:|")
        flags = {a[0]: a[2] for a in c["java_apps"]}
        flags[OUR_APP] = c["app_flags"] + (" -XX:SharedArchiveFile=(its archive)" if c.get("cds") else "")
        for label in others + [OUR_APP]:
            for client in c["clients"]:
                for phase in ["fresh", "warm"]:
                    s = summary.get((label, client, phase))
                    if s:
                        p("| %s | `%s` | %s | %s | %s | %.0f | %.0f |" % (
                            label, flags.get(label) or "(none)", client, phase,
                            rng(s["login_p99_ms"]), s["app_cpu_ms"]["median"],
                            s["app_threads"]["median"]))
        p("")
    # Where our app's CPU goes in a round, per group of threads, fresh and warm, for each variant.
    cols = [(label, phase) for label, _ in variants for phase in ["fresh", "warm"]]
    per = {}
    counts = {}
    for col in cols:
        rs = [r for r in h["rounds"] if (r["app"], r["phase"]) == col]
        counts[col] = len(rs)
        for r in rs:
            for g, v in r.get("app_thread_cpu_ms", {}).items():
                per.setdefault(g, {}).setdefault(col, 0.0)
                per[g][col] += v
    if per:
        names = dict(variants)
        p("Where our app's CPU goes (mean ms per round, by thread; threads that ended during a round, "
          "such as compiler threads the JVM stops when idle, are not counted, the totals above are; the "
          "kernel counts each thread's time in ticks of 10 ms):")
        p("")
        p("| threads | " + " | ".join("%s, %s (%d rounds)" % (names[l], ph, counts[(l, ph)])
                                    for l, ph in cols) + " |")
        p("|---|" + "---:|" * len(cols))
        what = dict(THREAD_GROUPS)
        rows = sorted(per.items(), key=lambda kv: -sum(kv[1].values()))
        for g, v in rows[:10]:
            p("| `%s`%s | %s |" % (g, (" (" + what[g] + ")") if g in what else "", " | ".join(
                "%.1f" % (v.get(col, 0.0) / counts[col]) if counts[col] else "–" for col in cols)))
        p("")
    return lines


# The headings of the before/after runs made before a run recorded its own (BEFORE_AFTER_CHANGE);
# a newer run's heading is "Before and after: " and its change.
BEFORE_AFTER_TITLES = {
    "before-after-sparse-sample": "Before and after: fast calls timed one in 256 instead of one in 64 (kept)",
    "before-after-lockfree-carry": "Before and after: a lock-free carry, tried and not kept",
    "before-after-fast16": "Before and after: a 16-bit fast count, tried and not kept",
}


def before_after_section(ba_dir):
    """One before/after section, from a results/<date>-before-after-NAME/ directory."""
    kind = os.path.basename(ba_dir)[11:]
    ba_machine = read_json_file(os.path.join(ba_dir, "machine.json"), {})
    heading = "## " + BEFORE_AFTER_TITLES.get(kind, "Before and after: " + (
        ba_machine.get("change") or kind))
    lines = []
    p = lines.append
    # (build, threads, round) -> {(method, subject): score}
    runs = {}
    for name in sorted(os.listdir(ba_dir)):
        if (not name.endswith(".json") or name == "machine.json"
                or os.path.getsize(os.path.join(ba_dir, name)) == 0):  # a run cut short writes nothing
            continue
        build, t, r = name[:-5].split("-")
        scores = {}
        for rec in json.load(open(os.path.join(ba_dir, name))):
            scores[(rec["benchmark"].rsplit(".", 1)[-1], rec["params"]["subject"])] = (
                rec["primaryMetric"]["score"],
                rec.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score"))
        runs[(build, int(t[1:]), int(r[1:]))] = scores

    def median(xs):
        xs = sorted(xs)
        n = len(xs)
        if n == 0:
            return math.nan
        return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2

    p(heading)
    p("")
    p("`bulkhead-benchmarks/scripts/before-after BEFORE.jar AFTER.jar` (results in `%s`) ran the same `ContendedBenchmark` from two "
      "builds of the benchmarks jar (%s and %s), the bulkhead core before and after the change, with "
      "the same JMH options, in %s interleaved rounds (before, after, before, after, ...), with "
      "Resilience4j and the non-fair Semaphore in every JMH run as the common yardsticks. Each figure is "
      "the median over the rounds; each ratio is taken within one JMH run, then its median over the "
      "rounds. %s cores; load average %s before and %s after; %s."
      % (rel(ba_dir), ba_machine.get("before_jar", "?"), ba_machine.get("after_jar", "?"),
         ba_machine.get("rounds", "?"), ba_machine.get("cores", "?"),
         ba_machine.get("load_before", "?"),
         read_text(os.path.join(ba_dir, "load_after.txt")).strip()
         if os.path.exists(os.path.join(ba_dir, "load_after.txt")) else "?",
         ba_machine.get("date", "?")))
    if ba_machine.get("change"):
        p("")
        p("The change measured: %s." % ba_machine["change"])
    p("")
    p("| path | threads | before ns/op | after ns/op | Resilience4j | Semaphore | before ÷ R4j | after ÷ R4j | before ÷ Semaphore | after ÷ Semaphore | B/op before → after |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rounds_seen = sorted({k[2] for k in runs})
    for method in ["sync", "permit", "acquire"]:
        for t in [1, 2, 4, 8]:
            row = {}
            for build in ["before", "after"]:
                per = [runs[(build, t, r)] for r in rounds_seen if (build, t, r) in runs]
                per = [x for x in per if (method, "bulkhead") in x]
                if not per:
                    continue
                row[build] = median([x[(method, "bulkhead")][0] for x in per])
                row[build + "_alloc"] = median([x[(method, "bulkhead")][1] or 0 for x in per])
                row[build + "_r4j"] = median([x[(method, "bulkhead")][0] / x[(method, "resilience4j")][0] for x in per])
                row[build + "_sem"] = median([x[(method, "bulkhead")][0] / x[(method, "semaphore-nonfair")][0] for x in per])
                row.setdefault("r4j", []).extend(x[(method, "resilience4j")][0] for x in per)
                row.setdefault("sem", []).extend(x[(method, "semaphore-nonfair")][0] for x in per)
            if "before" not in row or "after" not in row:
                continue
            p("| `%s` | %d | %.1f | %.1f | %.1f | %.1f | %.2f× | %.2f× | %.2f× | %.2f× | %.0f → %.0f |" % (
                method, t, row["before"], row["after"], median(row["r4j"]), median(row["sem"]),
                row["before_r4j"], row["after_r4j"], row["before_sem"], row["after_sem"],
                row["before_alloc"], row["after_alloc"]))
    p("")
    return lines


def fmt_us(v):
    if v >= 1000:
        return "{:,.1f} ms".format(v / 1000)
    if v >= 100:
        return "%.0f µs" % v
    if v >= 1:
        return "%.1f µs" % v
    return "%.0f ns" % (v * 1000)


def fleet_shares(fc):
    """'1 thread 45%, 4 threads 47%': each thread count's fleet throughput over the local one's."""
    local = {r["threads"]: r["ops_per_s"] for r in fc["results"] if r["subject"] == "local"}
    fleet = sorted((r["threads"], r["ops_per_s"]) for r in fc["results"] if r["subject"] == "fleet")
    return ", ".join("%d thread%s %.0f%%" % (t, "" if t == 1 else "s", 100.0 * ops / local[t])
                     for t, ops in fleet)


def fleet_cost_section(fc, before=None):
    """The fleet-cost section, from FleetCost's JSON; `before`, if given, is the same measurement of
    an earlier build in the same session (fleet-cost-before.json beside it), shown as more rows."""
    q = []
    q.append("## A fleet compartment on Redis: admit and release")
    q.append("")
    q.append("`FleetCost`: take a permit and give it back at once, on a fleet compartment of "
             "`RedisCompartments` (Redis at `%s`, loopback) and on a local `Bulkhead`, with one "
             "thread and with four. The limit (1000) is far above the thread count, so nobody "
             "waits: this is the admitted path alone. For the fleet compartment that is the local "
             "gate's lock-free CAS, then a slot taken in memory from the batch its process holds "
             "on lease (a CAS on the lease word and one clock reading), and the same undone at "
             "release; no round trip to Redis, which the process's background sync talks to "
             "while its demand changes. Every "
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
    for r in (before or {}).get("results", []):
        if r["subject"] != "fleet":
            continue
        base = local.get(r["threads"])
        ratio = "{:,.0f}×".format(r["p50_us"] / base["p50_us"]) if base and base["p50_us"] > 0 else "–"
        q.append("| fleet, the build before (%s) | %d | %s | %s | %s | %s | %s | %s |" % (
            before.get("label", "earlier"), r["threads"], fmt_us(r["p50_us"]), fmt_us(r["p99_us"]),
            fmt_us(r["p999_us"]), fmt_us(r["max_us"]), "{:,}".format(r["ops_per_s"]), ratio))
    q.append("")
    if before:
        q.append("Throughput of the fleet compartment as a share of the local one's, same threads: %s; "
                 "the build before: %s (load average %s before it ran)."
                 % (fleet_shares(fc), fleet_shares(before), before.get("load_before", "?")))
        q.append("")
    q.append("Machine: %d processors, load average %s before and %s after; the fleet compartment "
             "fell back to its local policy %d times during the run. The local figures include "
             "the two `System.nanoTime` reads around each operation. Run it alone with "
             "`java -cp bulkhead-benchmarks/target/benchmarks.jar io.bulkhead.benchmarks.FleetCost "
             "[REDIS_URI [WARM_UP [MEASURE [SUBJECTS [OPERATION]]]]]` after building the benchmarks "
             "(SUBJECTS `local`, `fleet` or `clocked` runs one alone; OPERATION `call` measures "
             "`call()` instead of a permit)."
             % (fc["cores"], fc["load_before"], fc["load_after"], fc["fallback_switches"]))
    return q



def jmh_sections(run_dir):
    """The sections of one scripts/run: machine, JMH tables, contended runs, targets, waiter scale."""
    def load(name, default=None):
        return read_json_file(os.path.join(run_dir, name), default)

    machine = load("machine.json", {})
    jmh = load("jmh.json", [])
    load_after = ""
    if os.path.exists(os.path.join(run_dir, "load_after.txt")):
        load_after = open(os.path.join(run_dir, "load_after.txt")).read().strip()

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


    # The contended runs, one JMH run per thread count: (method, subject, threads) -> as above.
    THREADS = [1, 2, 4, 8]
    contended = {}
    for t in THREADS:
        for r in load("jmh-contended-t%d.json" % t, []):
            method = r["benchmark"].rsplit(".", 1)[-1]
            subject = r.get("params", {}).get("subject", "")
            pm = r["primaryMetric"]
            alloc = r.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score")
            contended[(method, subject, t)] = (pm["score"], number(pm["scoreError"]), alloc)


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
    p("Results: `%s/`, written by `bulkhead-benchmarks/scripts/run`." % rel(run_dir))
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

    CONTENDED_METHODS = [
        ("sync", "`call`: run a trivial task inside the compartment"),
        ("permit", "`tryAcquire` and close: a bare permit, never waiting"),
        ("acquire", "`acquire` and close: the call that would wait for a permit"),
    ]
    contended_subjects = ["bulkhead", "resilience4j", "failsafe", "netflix-simple", "semaphore-fair",
                          "semaphore-nonfair"]
    if contended:
        p("## The admitted path with 1, 2, 4 and 8 threads on one compartment")
        p("")
        p("`ContendedBenchmark`: every thread takes a slot, does the trivial task and gives the slot back, "
          "on one compartment whose limit (1,000) is high enough that every call is admitted. Each thread "
          "count is its own JMH run (`-t N`) with every subject side by side; with more threads than "
          "cores (%s here) the threads also take turns on the cores. Cells are ns/op ± the 99.9%% "
          "interval; the ratio rows divide the compartment's score by the peer's in the same run."
          % machine.get("cores", "?"))
        p("")
        for method, title in CONTENDED_METHODS:
            if not any((method, "bulkhead", t) in contended for t in THREADS):
                continue
            p("### " + title)
            p("")
            p("| subject | " + " | ".join("%d thread%s" % (t, "" if t == 1 else "s") for t in THREADS) + " |")
            p("|---|" + "---:|" * len(THREADS))
            for subj in contended_subjects:
                row = [contended.get((method, subj, t)) for t in THREADS]
                if not any(row):
                    continue
                p("| %s | %s |" % (subj, " | ".join(fmt_ns(v) for v in row)))
            for peer in ["resilience4j", "semaphore-nonfair"]:
                ratios = []
                for t in THREADS:
                    ours = contended.get((method, "bulkhead", t))
                    theirs = contended.get((method, peer, t))
                    ratios.append("%.2f×" % (ours[0] / theirs[0]) if ours and theirs and theirs[0] > 0 else "–")
                p("| *bulkhead ÷ %s* | %s |" % (peer, " | ".join(ratios)))
            allocs = [contended.get((method, "bulkhead", t)) for t in THREADS]
            p("| *bulkhead B/op* | %s |" % " | ".join(fmt_alloc(v) for v in allocs))
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
    for method, title in CONTENDED_METHODS:
        for t in THREADS:
            ours = contended.get((method, "bulkhead", t))
            r4 = contended.get((method, "resilience4j", t))
            se = contended.get((method, "semaphore-nonfair", t))
            if ours and r4:
                target("`%s` at %d thread%s: not slower than Resilience4j" % (method, t, "" if t == 1 else "s"),
                       "%.1f vs %.1f ns/op (%.2f×)" % (ours[0], r4[0], ours[0] / r4[0]), ours[0] <= r4[0])
            if ours and se:
                target("`%s` at %d thread%s: within 1.2× the non-fair Semaphore" % (method, t, "" if t == 1 else "s"),
                       "%.2f×" % (ours[0] / se[0]), ours[0] <= 1.2 * se[0])
    permit1 = cell("AdmitReleaseBenchmark.permit", "bulkhead")
    if permit1:
        target("0 B/op for `tryAcquire` and close", "%s B/op" % fmt_alloc(permit1),
               permit1[2] is not None and permit1[2] < 0.5)
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

    return lines


RAW = "https://raw.githubusercontent.com/bulkhead/bulkhead/main/"


def peer_section(d):
    """The experiment against a peer, from d/peer.json; writes its chart, d/peer-experiment.svg,
    which the section links by its address on GitHub (BENCHMARKS.md is read at the root and on the
    site)."""
    peer = read_json_file(os.path.join(d, "peer.json"))
    svg = os.path.join(d, "peer-experiment.svg")
    with open(svg, "w") as f:
        f.write(peer_svg(peer))
    return ["## The experiment against a peer", "", peer_markdown(peer, RAW + rel(svg)).rstrip("\n"), ""]


def median_range(values, fmt):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    if len(values) == 1:
        return fmt % values[0]
    return (fmt + " (" + fmt + "–" + fmt + ")") % (statistics.median(values), min(values), max(values))


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None




# The change each edge before/after run measured, for the runs made before scripts/edge --change.
EDGE_CHANGES = {
    "edge-watcher": "the disconnect watcher's batches (kept)",
    "edge-h-edge": "the HTTP edge branch of 2026-12-01 against main (the change was not recorded beside the run)",
}


def edge_section(d, e, before_after=False, recheck=None):
    """The HTTP-edge tables of the scripts/edge run in d, appended with e. recheck: the heading of a
    run of some variants and cases only, shown after the full run's tables."""
    section = os.path.basename(d)

    def read_json(_, name):
        path = os.path.join(d, name)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)

    def read_jsonl(_, name):
        path = os.path.join(d, name)
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]

    edge_machine = read_json(section, "edge-machine.json")
    edge_runs = read_jsonl(section, "edge-runs.jsonl")
    if not (edge_machine and edge_runs):
        return
    m = dict(edge_machine)
    m["rounds"] = len({r["round"] for r in edge_runs})  # the rounds that ran, if a run was cut short
    present = []
    for r in edge_runs:
        if r["variant"] not in present:
            present.append(r["variant"])
    variants = [v for v in ["plain", "qos", "bulkhead-before", "bulkhead"] if v in present]
    names = {"plain": "plain Jetty", "qos": "Jetty `QoSHandler`", "bulkhead": "`BulkheadHandler`",
             "bulkhead-before": "`BulkheadHandler` before"}
    if before_after:
        names["bulkhead"] = "`BulkheadHandler` after"
    cases = m.get("cases", "below below-5ms over").split()

    def refused_below(r):
        return r["case"] != "over" and any(code != "200" for code in r["status"])

    def runs(variant, case):
        # Below the limit every answer should be a 200; a round with others (QoSHandler answered
        # every request 503 in some rounds, after the overload warm-up) is listed, not averaged in.
        return [r for r in edge_runs if r["variant"] == variant and r["case"] == case
                and not refused_below(r)]

    def status(r, code, key):
        return r["status"].get(code, {}).get(key)

    def cpu_us(r):
        # Without the JIT compiler threads' time where the run recorded it (see scripts/edge).
        answers = r["all"]["count"]
        cpu = float(r["server_cpu_s"]) - float(r.get("server_jit_cpu_s", 0))
        return cpu * 1e6 / answers if answers else None

    def jit_share(rs):
        shares = [float(r["server_jit_cpu_s"]) / float(r["server_cpu_s"]) * 100 for r in rs
                  if "server_jit_cpu_s" in r and float(r["server_cpu_s"]) > 0]
        return median_range(shares, "%.0f%%") if shares else None

    def switches(r):
        answers = r["all"]["count"]
        return int(r["server_switches"]) / answers if answers and "server_switches" in r else None

    def paired(variant, case, value, base_variant="plain"):
        # The variants of one round run minutes apart, so a slow spell of the machine falls on all of
        # them; their ratio within each round, then its median over the rounds, is steadier than the
        # ratio of two medians (the before/after of the admitted path is read the same way).
        base = {r["round"]: value(r) for r in runs(base_variant, case)}
        return [value(r) / base[r["round"]] for r in runs(variant, case)
                if base.get(r["round"]) and value(r) is not None]

    has_jit = any("server_jit_cpu_s" in r for r in edge_runs)

    if before_after:
        e("## Before and after: " + (m.get("change") or EDGE_CHANGES.get(section[11:], section[11:])))
        e("")
        e("`BulkheadHandler` before the change (an earlier build, `--before-jar`) and after it, with plain "
          "Jetty, in one interleaved run of `scripts/edge` (results in `%s`; %s, load average %s before, %s after; "
          "median over %s rounds of %s s, range in brackets)." % (
              rel(d), m.get("date", "?"), m.get("load_before", "?"), m.get("load_after", "?"),
              m["rounds"], m["seconds"]))
        e("")
    elif recheck:
        e("### " + recheck)
        e("")
        e("`scripts/edge --variants \"%s\" --cases \"%s\" --rounds %s --seconds %s` (%s, load average "
          "%s before, %s after): the same server, pinning and load as above, for these variants and "
          "cases only, so that more rounds fit; each case for %s s after %s s of warm-up%s; median "
          "over %s rounds, range in brackets."
          % (m.get("variants", "?"), " ".join(cases), m["rounds"], m["seconds"], m.get("date", "?"),
             m.get("load_before", "?"), m.get("load_after", "?"), m["seconds"], m["warmup"],
             case_warmup_note(m), m["rounds"]))
        e("")
    else:
        e("## The HTTP edge: plain Jetty, `QoSHandler`, `BulkheadHandler`")
        e("")
        e("Generated from `bulkhead-benchmarks/scripts/edge` results (`%s`; %s, %s cores, %s, %s; load "
          "average %s before, %s after). One Jetty 12 server and one trivial handler (`200 ok`) "
          "behind nothing, behind Jetty's `QoSHandler` and behind `BulkheadHandler`, the two guards with "
          "the same limit of %d requests, no queue (`maxQueue 0`, `maxSuspendedRequestCount 0`), "
          "driven by h2load over HTTP/1.1 with one thread, its per-request log giving the latency of "
          "each status. The server (one JVM per variant and round, G1, 512 MB heap) is pinned to core 0 "
          "and h2load to core 1 (`taskset`); each round runs the three variants in an order that "
          "rotates, each case for %s s after %s s of warm-up%s, and the tables give the median over %s "
          "rounds with the range in brackets; *vs plain* is each round's ratio to plain Jetty in the same "
          "round, its median over the rounds and their range. *CPU/answer* is the server process's user + system CPU "
          "time during the case over the answers it gave: the figure least disturbed by the other "
          "work on the machine. The load averages above count the run's own server and h2load (two "
          "busy processes on 2 cores) and whatever else ran; where other work shared the cores, the "
          "wall-clock figures (answers/s, latency) vary between rounds, as the ranges show." % (
              rel(d), m.get("date", "?"), m.get("cores", "?"), m.get("java", "?"), m.get("h2load", "?"),
              m.get("load_before", "?"), m.get("load_after", "?"), m["limit"], m["seconds"],
              m["warmup"], case_warmup_note(m), m["rounds"]))
        e("")
    titles = {
        "below": "Below the limit: %d connections to `/`, answered at once" % m["below"],
        "below-5ms": "Below the limit: %d connections to `/slow`, answered after %s without a "
                     "thread" % (m["below"], m["work"]),
    }
    for case in [c for c in ["below", "below-5ms"] if c in cases]:
        e("#### " + titles[case])
        e("")
        refused = [r for r in edge_runs if r["case"] == case and refused_below(r)]
        if refused:
            e("Left out of the table, because not every answer was a 200 although the load was below "
              "the limit: " + "; ".join(
                  "%s in round %s (%s)" % (names[r["variant"]], r["round"], ", ".join(
                      "%s %.0f/s" % (code, st["per_s"]) for code, st in sorted(r["status"].items())))
                  for r in refused) + ".")
            e("")
        e("| | answers/s | p50 ms | p99 ms | p99.9 ms | CPU/answer µs | switches/answer | throughput vs plain | p99 vs plain |")
        e("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for v in variants:
            rs = runs(v, case)
            if not rs:
                continue
            rps_ratio = paired(v, case, lambda r: r["all"]["per_s"])
            p99_ratio = paired(v, case, lambda r: r["all"]["p99_ms"])
            e("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                names[v],
                median_range([r["all"]["per_s"] for r in rs], "%.0f"),
                median_range([r["all"]["p50_ms"] for r in rs], "%.2f"),
                median_range([r["all"]["p99_ms"] for r in rs], "%.2f"),
                median_range([r["all"]["p999_ms"] for r in rs], "%.2f"),
                median_range([cpu_us(r) for r in rs], "%.1f"),
                median_range([switches(r) for r in rs], "%.2f"),
                "1.000×" if v == "plain" else median_range(rps_ratio, "%.3f×"),
                "1.00×" if v == "plain" else median_range(p99_ratio, "%.2f×")))
        e("")
    if "over" in cases:
        e("#### Ten times the limit: %d connections to `/slow`" % m["over"])
        e("")
        e("| | answers/s | 200/s | 503/s | admitted p50 ms | admitted p99 ms | admitted p99.9 ms | 503 p99 ms | CPU/answer µs | switches/answer | server threads |")
        e("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for v in variants:
            rs = runs(v, "over")
            if not rs:
                continue
            e("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                names[v],
                median_range([r["all"]["per_s"] for r in rs], "%.0f"),
                median_range([status(r, "200", "per_s") for r in rs], "%.0f"),
                median_range([status(r, "503", "per_s") or 0 for r in rs], "%.0f"),
                median_range([status(r, "200", "p50_ms") for r in rs], "%.2f"),
                median_range([status(r, "200", "p99_ms") for r in rs], "%.2f"),
                median_range([status(r, "200", "p999_ms") for r in rs], "%.2f"),
                median_range([status(r, "503", "p99_ms") for r in rs], "%.2f"),
                median_range([cpu_us(r) for r in rs], "%.1f"),
                median_range([switches(r) for r in rs], "%.2f"),
                median_range([int(r["server_threads"]) if "server_threads" in r else None
                              for r in rs], "%.0f")))
        e("")
    e("h2load's own CPU (core 1, user + system over the measured seconds), median over the rounds: "
      + ", ".join("%s %s" % (case, median_range(
          [float(r["client_cpu_s"]) / float(r["seconds"]) * 100 for r in edge_runs
           if r["case"] == case], "%.0f%%")) for case in cases)
      + ": far from 100%, so h2load did not set the pace.")
    e("")
    if has_jit:
        e("*CPU/answer* leaves out the CPU time of the server's JIT compiler threads (C1, C2), which "
          "compile through the first seconds of every case on a shared core and are a warm-up cost, "
          "not an answer's; they took, median over the rounds, "
          + ", ".join("%s %s" % (names[v], jit_share([r for r in edge_runs if r["variant"] == v]))
                      for v in variants)
          + " of the server's CPU. *switches/answer* counts the context switches of all the server's "
            "threads over the answers: a thread hand-off per request would show as two or more. "
            "*server threads* is the JVM's thread count at the end of the case.")
        e("")
    if before_after:
        return
    alloc = read_json(section, "edge-allocation.json")
    if alloc and not recheck:
        e("#### Bytes and CPU per request, through the in-memory connector")
        e("")
        e("`EdgeAllocation`: %d requests one at a time through Jetty's `LocalConnector` (no socket, no "
          "load tool), after as many again of warm-up; bytes allocated by every thread of the JVM and "
          "the process's CPU time, per request. The connector itself allocates most of it; the "
          "difference from plain Jetty is the guard's. (The disconnect watcher is not exercised: an "
          "in-memory connection has no socket to watch.)" % alloc["requests"])
        e("")
        e("| | B/request | vs plain | CPU µs/request |")
        e("|---|---:|---:|---:|")
        base = alloc["variants"].get("plain", {}).get("bytes_per_request")
        for v in ["plain", "qos", "bulkhead"]:
            a = alloc["variants"].get(v)
            if a:
                e("| %s | %.0f | %s | %.2f |" % (names[v], a["bytes_per_request"],
                  "%+.0f B" % (a["bytes_per_request"] - base) if base is not None else "–",
                  a["cpu_us_per_request"]))
        e("")
    e("#### Targets" + (" (this run)" if recheck else ""))
    e("")
    e("| target | measured | met |")
    e("|---|---|---|")

    def edge_target(desc, measured, ok):
        e("| %s | %s | %s |" % (desc, measured, "yes" if ok else "**no**"))

    for case in [c for c in ["below", "below-5ms"] if c in cases]:
        b_rps = med([r["all"]["per_s"] for r in runs("bulkhead", case)])
        p_rps = med([r["all"]["per_s"] for r in runs("plain", case)])
        b_p99 = med([r["all"]["p99_ms"] for r in runs("bulkhead", case)])
        p_p99 = med([r["all"]["p99_ms"] for r in runs("plain", case)])
        b_cpu = med([cpu_us(r) for r in runs("bulkhead", case)])
        p_cpu = med([cpu_us(r) for r in runs("plain", case)])
        # Judged on the ratio within each round (see paired); the medians are shown beside it.
        rps_ratio = paired("bulkhead", case, lambda r: r["all"]["per_s"])
        p99_ratio = paired("bulkhead", case, lambda r: r["all"]["p99_ms"])
        cpu_ratio = paired("bulkhead", case, cpu_us)
        if b_rps and p_rps and rps_ratio:
            edge_target("%s: throughput within 5%% of plain Jetty's" % case,
                        "%s per round; medians %.0f vs %.0f answers/s" % (
                            median_range(rps_ratio, "%.3f×"), b_rps, p_rps),
                        med(rps_ratio) >= 0.95)
        if b_p99 and p_p99 and p99_ratio:
            edge_target("%s: p99 within 5%% of plain Jetty's" % case,
                        "%s per round; medians %.2f vs %.2f ms" % (
                            median_range(p99_ratio, "%.2f×"), b_p99, p_p99),
                        med(p99_ratio) <= 1.05)
        if b_cpu and p_cpu and cpu_ratio:
            edge_target("%s: server CPU per answer within 5%% of plain Jetty's" % case,
                        "%s per round; medians %.1f vs %.1f µs" % (
                            median_range(cpu_ratio, "%.2f×"), b_cpu, p_cpu),
                        med(cpu_ratio) <= 1.05)
    b_over = med([r["all"]["per_s"] for r in runs("bulkhead", "over")])
    q_over = med([r["all"]["per_s"] for r in runs("qos", "over")])
    over_ratio = paired("bulkhead", "over", lambda r: r["all"]["per_s"], base_variant="qos")
    if b_over and q_over and over_ratio:
        edge_target("10× the limit: more answers per second than `QoSHandler`",
                    "%s per round; medians %.0f vs %.0f answers/s" % (
                        median_range(over_ratio, "%.2f×"), b_over, q_over),
                    med(over_ratio) > 1)
    b_adm = med([status(r, "200", "p99_ms") for r in runs("bulkhead", "over")])
    b_below = med([r["all"]["p99_ms"] for r in runs("bulkhead", "below-5ms")])
    if b_adm and b_below:
        edge_target("10× the limit: admitted p99 no worse than below the limit (same `/slow`)",
                    "%.2f vs %.2f ms" % (b_adm, b_below), b_adm <= b_below)
    e("")



def scale_section(d):
    """The experiment at 10x and 100x, from a scripts/scale run in d."""
    scale_lines = []
    x = scale_lines.append

    def read_json(_, name):
        return read_json_file(os.path.join(d, name))

    scale_machine = read_json("scale", "scale-machine.json")
    if scale_machine:
        sm = scale_machine
        factors = [int(f) for f in sm.get("factors", "").split()]

        def scale(f, run):
            return read_json("scale", "scale-%d-%s.json" % (f, run))

        def ms(v):
            return "–" if v is None else ("%.0f" % v if v >= 100 else "%.1f" % v)

        x("## The slow-upstream experiment at 10× and 100×")
        x("")
        x("Generated from `bulkhead-benchmarks/scripts/scale` results (`%s`; %s, %s cores, %s memory, "
          "%s; load average %s before, %s after; open-file limit %s, accept queue cap "
          "`net.core.somaxconn` %s). The experiment's load and compartments times 10 and times 100: 80 "
          "chats and 50 logins per unit, a server cap of 50 (unbounded queue) and an llm compartment of "
          "10 in flight, 20 waiting and 1 s of patience per unit, an upstream that answers after %s. The "
          "upstream and the app (`%s`) are two JVMs; the load is sent by %s, two processes with a "
          "connection per request, all opened at once: the chats, and the logins 1 s later. All on the "
          "same cores." % (
              rel(d), sm.get("date", "?"), sm.get("cores", "?"), sm.get("memory", "?"), sm.get("java", "?"),
              sm.get("load_before", "?"), sm.get("load_after", "?"), sm.get("open_files", "?"),
              sm.get("somaxconn", "?"), sm.get("delay", "?"), sm.get("app_jvm", "?"),
              sm.get("client", "the demo's `load`")))
        x("")
        x("*Fresh*: the app's first burst, while its JIT compiles the code the burst runs; *warm*: the "
          "same load again on the same app once it is idle. Login latency is h2load's, from the request "
          "written on a connected socket to the end of the answer; *from the start* counts from the "
          "moment the logins' h2load was started, so it holds the connect and the client's own serial "
          "work on its one thread as well (see the floor below). App CPU is user + system during the "
          "round, and the share of it the JIT compilers took.")
        x("")
        x("| load | mode | server cap | llm | login p50 / p99 / max ms | login p99 from the start ms | chats 200 / 503 / other | 503 p50 / p99 ms | app CPU s (JIT) | app threads (at 3 s) | load avg |")
        x("|---|---|---:|---|---|---:|---|---|---|---:|---:|")
        for f in factors:
            for run in ["shared", "bulkhead", "warm"]:
                r = scale(f, run)
                if not r:
                    continue
                label = {"shared": "shared", "bulkhead": "bulkhead, fresh", "warm": "bulkhead, warm"}[run]
                llm = ("%d / %d / 1s" % (r["llm_limit"], r["llm_queue"])) if run != "shared" else "–"
                cpu = ("%.1f (%.1f)" % (r["app_total_s"], r["app_jit_s"])) if "app_total_s" in r else "–"
                x("| %d chats + %d logins (×%d) | %s | %d | %s | %s / %s / %s | %s | %d / %d / %d | %s / %s | %s | %s | %s |" % (
                    r["chats"], r["logins"], f, label, r["server_limit"], llm,
                    ms(r["login_p50_ms"]), ms(r["login_p99_ms"]), ms(r["login_max_ms"]),
                    ms(r.get("login_from_start_p99_ms")),
                    r["chat_ok"], r["chat_rejected"], r["chat_other"],
                    ms(r["rejected_p50_ms"]), ms(r["rejected_p99_ms"]), cpu,
                    r.get("app_threads_at_probe", "–"), r.get("load", "–")))
        x("")
        x("### Heap per request, measured")
        x("")
        x("The app's used heap after two full collections (`jcmd GC.run` twice, then `GC.heap_info`) "
          "on a fresh bulkhead-mode app sent the chats alone: once every chat has arrived (the counts "
          "read from the app's `/bulkheads` at that moment), less the same once the load generator was "
          "killed and the app holds no request again (the same app, as warm, its pools as full), over "
          "the requests held at the probe. *In flight*: every chat admitted (server cap and llm limit "
          "at the number of chats), each holding its connection to the app, a Jetty request, its slots "
          "and an upstream call with its connection. *Queued*: the server cap and the llm limit at the "
          "experiment's llm limit, so that every other chat waits in the server cap's queue with its "
          "connection and its request; its calls in flight are subtracted at the in-flight figure.")
        stale = [f for f in factors if scale(f, "inflight") and "after_wait_s" not in scale(f, "inflight")]
        if stale:
            x("")
            x("For %s the figure to use is" % ", ".join("×%d" % f for f in stale) + " the one *over the fresh app*: the probe less the same app idle before "
          "the run. The first figure of each cell, against the app idle again after the run, is not "
          "one: with every connection closed (open files back to the idle count) the app still held "
          "about as much heap as at the probe (the column *idle app heap*), because the demo's request "
          "head deadline (`RequestHeadDeadline`) keeps a closed connection reachable from Jetty's "
          "scheduler for up to one period, 10 s, after it closed. The app now cancels that check when "
          "a connection closes; run it again for the first figures.")
        x("")
        x("| load | in flight: requests, heap held | per request in flight | queued: requests (+ in flight), heap held | per queued request | idle app heap: fresh, after the in-flight run | app open files before / at the probe / after (in flight) | app threads at the probe (in flight, queued) |")
        x("|---|---|---:|---|---:|---|---|---|")
        for f in factors:
            inf, q = scale(f, "inflight"), scale(f, "queued")
            if not inf:
                continue
            held_inf = inf["heap_probe_kb"] - inf["heap_after_kb"]
            per_inflight = held_inf / inf["in_flight_at_probe"]
            over_fresh = ("; over the fresh app %.1f KiB" % (
                (inf["heap_probe_kb"] - inf["heap_before_kb"]) / inf["in_flight_at_probe"])
                if "heap_before_kb" in inf else "")
            row = "| ×%d | %d, %.1f MiB | %.1f KiB%s |" % (
                f, inf["in_flight_at_probe"], held_inf / 1024, per_inflight, over_fresh)
            if q:
                held = q["heap_probe_kb"] - q["heap_after_kb"]
                per_queued = (held - q["in_flight_at_probe"] * per_inflight) / q["queued_at_probe"]
                if "heap_before_kb" in q and "heap_before_kb" in inf:
                    per_inflight_fresh = (inf["heap_probe_kb"] - inf["heap_before_kb"]) / inf["in_flight_at_probe"]
                    per_queued_fresh = "; over the fresh app %.1f KiB" % (
                        (q["heap_probe_kb"] - q["heap_before_kb"]
                         - q["in_flight_at_probe"] * per_inflight_fresh) / q["queued_at_probe"])
                else:
                    per_queued_fresh = ""
                row += " %d (+ %d), %.1f MiB | %.1f KiB%s | %.1f MiB, %.1f MiB | %s / %s / %s | %s, %s |" % (
                    q["queued_at_probe"], q["in_flight_at_probe"], held / 1024, per_queued,
                    per_queued_fresh,
                    inf.get("heap_before_kb", 0) / 1024, inf["heap_after_kb"] / 1024,
                    inf.get("fds_before", "–"), inf.get("fds_probe", "–"), inf.get("fds_after", "–"),
                    inf["app_threads_at_probe"], q["app_threads_at_probe"])
            else:
                row += " – | – | – | – | %s |" % inf["app_threads_at_probe"]
            x(row)
        x("")
        x("### The load generator's own limits")
        x("")
        x("What the client spends, so that the figures above are the app's: its threads, its CPU "
          "during the run, the time its connects took (h2load's own figure: a SYN dropped by a full "
          "accept queue would show as a second), and the *floor*: the logins alone, sent to the same "
          "warm app with nothing else going on, which no app can beat with this client on this machine.")
        x("")
        x("| load | client threads (peak) | client sockets | client CPU during the run (share of the machine) | logins' connect mean / max ms | SYNs sent again / accept queue overflows | floor: logins alone, p50 / p99 / max ms | floor from the start p99 ms |")
        x("|---|---:|---:|---:|---|---|---|---:|")
        cores = float(sm.get("cores", 1) or 1)
        for f in factors:
            for run in ["bulkhead", "warm"]:
                r, fl = scale(f, run), scale(f, "floor")
                if not r:
                    continue
                wall_s = r["wall_ms"] / 1000
                x("| ×%d bulkhead, %s | %d | %d | %.2f s over %.1f s (%.1f%%) | %s / %s | %s / %s | %s | %s |" % (
                    f, "fresh" if run == "bulkhead" else "warm", r["peak_threads"],
                    r["chats"] + r["logins"], r["client_cpu_s_during_run"], wall_s,
                    100 * r["client_cpu_s_during_run"] / (wall_s * cores) if wall_s else 0,
                    ms(r.get("logins_connect_mean_ms")), ms(r.get("logins_connect_max_ms")),
                    r.get("syn_retrans", "–"), r.get("listen_overflows", "–"),
                    "%s / %s / %s (%d logins)" % (ms(fl["login_p50_ms"]), ms(fl["login_p99_ms"]),
                                                   ms(fl["login_max_ms"]), fl["logins"]) if fl else "–",
                    ms(fl.get("login_from_start_p99_ms")) if fl else "–"))
        x("")
    return scale_lines


# ------------------------------------------------------------------------------------------------
# Charts: self-contained SVG, panels sharing a time axis, one line per series. The soak's and the
# peer experiment's charts are drawn by the same few helpers.

INK = "#1f2328"
MUTED = "#57606a"
GRID = "#e5e7eb"
COLORS = ["#2563eb", "#ea580c", "#16a34a", "#9333ea", "#0891b2"]
FONT = "system-ui,-apple-system,Segoe UI,Roboto,sans-serif"


def fixed(v, decimals=1):
    """v with that many decimals, halves rounded up from the shortest decimal that reads back as v
    (as Java's String.format does, so that a chart redrawn here matches one drawn before)."""
    q = Decimal(repr(float(v))).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return "%.*f" % (decimals, q)


def general(v, precision, plus=False):
    """Java's %.<precision>g: significant digits, trailing zeros kept, plain between 1e-4 and
    10^precision."""
    if v == 0:
        s = "0." + "0" * (precision - 1) if precision > 1 else "0"
    else:
        d = Decimal(repr(float(abs(v))))
        exponent = d.adjusted()
        rounded = d.quantize(Decimal(1).scaleb(exponent - precision + 1), rounding=ROUND_HALF_UP)
        exponent = rounded.adjusted()
        if Decimal("1e-4") <= rounded < Decimal(10) ** precision:
            s = "%.*f" % (max(precision - 1 - exponent, 0), rounded)
        else:
            digits = rounded.scaleb(-exponent)
            s = "%.*fe%+03d" % (precision - 1, digits, exponent)
        s = ("-" if v < 0 else "") + s
    return ("+" + s) if plus and not s.startswith("-") else s


def plain(v):
    """1.5 -> "1.5", 2.0 -> "2", 0.25 -> "0.3": one decimal at most, halves up."""
    q = Decimal(repr(float(v))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP).normalize()
    return format(q, "f")


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def svg_text(x, y, anchor, fill, size, weight, content):
    return ('<text x="%s" y="%s" text-anchor="%s" fill="%s" font-size="%s" font-weight="%s">%s</text>\n'
            % (fixed(x), fixed(y), anchor, fill, size, weight, esc(content)))


def svg_line(x1, y1, x2, y2, stroke, dash=None, extra=""):
    return '<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"%s%s/>\n' % (
        fixed(x1), fixed(y1), fixed(x2), fixed(y2), stroke,
        ' stroke-dasharray="%s"' % dash if dash else "", extra)


def svg_open(width, height, label):
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
            'font-family="%s" font-size="12" role="img" aria-label="%s">\n'
            '<rect width="100%%" height="100%%" fill="#ffffff"/>\n' % (width, height, width, height, FONT, label))


def svg_plot_area(left, top, width, height):
    return '<rect x="%d" y="%d" width="%d" height="%d" fill="#fbfbfc" stroke="#d0d7de"/>\n' % (left, top, width, height)


def svg_time_axis(left, top, plot_w, plot_h, x_max, x_step, gap, size, label):
    """The vertical grid lines of a time axis from 0 to x_max, each with its label beneath."""
    out = []
    t = 0.0
    while t <= x_max + 1e-9:
        x = left + t / x_max * plot_w
        out.append(svg_line(x, top, x, top + plot_h, "#eef0f3"))
        out.append(svg_text(x, top + plot_h + gap, "middle", MUTED, size, "400", label(t)))
        t += x_step
    return "".join(out)


def svg_path(color, d):
    return '<path fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" d="%s"/>\n' % (color, d)


# ------------------------------------------------------------------------------------------------
# The soak (scripts/soak): summary.md and soak.svg from samples.csv, minutes.csv and soak.json

MB = 1024 * 1024
SOAK_WARM_UP_S = 60  # the first minute (JIT, pools filling, the heap settling) is in no verdict
WORKLOADS = ["login", "chat", "checkout", "report"]
OUTCOMES = ["ok", "rejected", "timed_out", "failed"]


def workload_label(w):
    return "/" + WORKLOADS[w] if w < 2 else WORKLOADS[w]


def trend(series, unit, points, absolute, relative):
    """Whether a series is flat: the least-squares line through its (minute, value) points, and
    whether its rise over the span exceeds the tolerance (an absolute floor, or a fraction of the
    mean, whichever is larger): the noise a healthy series shows."""
    n = len(points)
    mx = sum(p[0] for p in points) / n if n else 0.0
    my = sum(p[1] for p in points) / n if n else 0.0
    sxy = sum((p[0] - mx) * (p[1] - my) for p in points)
    sxx = sum((p[0] - mx) * (p[0] - mx) for p in points)
    slope = 0.0 if sxx == 0 else sxy / sxx
    span = 0.0 if n < 2 else points[-1][0] - points[0][0]
    t = {"series": series, "unit": unit, "points": n, "mean": my, "slope": slope,
         "rise": slope * span, "tolerance": max(absolute, relative * abs(my)),
         "first": points[0][1] if n else math.nan, "last": points[-1][1] if n else math.nan}
    return t


def trend_verdict(t):
    if t["points"] < 3:
        return "too few points to judge (%d)" % t["points"]
    fitted = "slope %s %s/min, rise %s %s over the run" % (
        general(t["slope"], 3, plus=True), t["unit"], general(t["rise"], 3, plus=True), t["unit"])
    word = "flat" if abs(t["rise"]) <= t["tolerance"] else ("growing" if t["rise"] > 0 else "falling")
    return "**%s** (%s; tolerance ±%s %s)" % (word, fitted, general(t["tolerance"], 3), t["unit"])


def read_soak(d):
    with open(os.path.join(d, "samples.csv")) as f:
        rows = list(csv.DictReader(f))
    names = [c[len("in_flight_"):] for c in rows[0].keys() if c.startswith("in_flight_")] if rows else []
    samples = [{"t": float(r["t_s"]), "heap": int(r["heap_after_full_gc_bytes"]),
                "threads": int(r["threads"]), "fds": int(r["open_fds"]),
                "in_flight": {n: int(r["in_flight_" + n]) for n in names}} for r in rows]
    with open(os.path.join(d, "minutes.csv")) as f:
        minutes = []
        for r in csv.DictReader(f):
            minutes.append({"index": int(r["minute"]), "end": float(r["end_s"]), "workloads": [
                {"calls": int(r[w + "_calls"]),
                 "p99": float(r[w + "_p99_ms"]) if r[w + "_p99_ms"] else math.nan,
                 **{o: int(r[w + "_" + o]) for o in OUTCOMES}} for w in WORKLOADS]})
    meta = read_json_file(os.path.join(d, "soak.json"), {})
    return names, samples, minutes, meta


def soak_trends(names, samples, minutes):
    def points(value):
        out = []
        for s in samples:
            v = value(s)
            if s["t"] >= SOAK_WARM_UP_S and not math.isnan(v) and v >= 0:
                out.append((s["t"] / 60, v))
        return out

    trends = [
        trend("heap after full GC", "MB", points(lambda s: math.nan if s["heap"] < 0 else s["heap"] / MB), 4, 0.10),
        trend("live threads", "threads", points(lambda s: s["threads"]), 2, 0.05),
        trend("open file descriptors", "fds", points(lambda s: s["fds"]), 4, 0.05),
    ]
    for name in names:
        trends.append(trend("slots in flight: " + name, "slots", points(lambda s, n=name: s["in_flight"][n]), 1, 0.25))
    for w in range(len(WORKLOADS)):
        p99 = [(m["end"] / 60, m["workloads"][w]["p99"]) for m in minutes
               if m["index"] > 1 and not math.isnan(m["workloads"][w]["p99"])]
        trends.append(trend(workload_label(w) + " p99 per minute", "ms", p99, 5, 0.25))
    return trends


def soak_ms(v):
    return "–" if math.isnan(v) else fixed(v) + " ms"


def soak_summary(names, samples, minutes, meta, trends):
    b = ["# Soak: the demo app and the checkout-vs-reports pools under mixed load\n\n"]
    b.append("Run %s on %s cores, %s, max heap %s MB. Machine load average (1, 5, 15 min) %s when the "
             "load started, %s when it ended: other processes share these cores, and their bursts "
             "show in the p99s.\n\n" % (meta.get("date", "?"), meta.get("cores", "?"), meta.get("jvm", "?"),
                                        meta.get("max_heap_mb", "?"), meta.get("load_before", "?"),
                                        meta.get("load_after", "?")))
    b.append(meta.get("setup", "?") + ". The server cap is 50 slots with an unbounded queue; the llm "
             "compartment 10 in flight, 20 waiting, 1 s wait; the database pools split a budget of 10 "
             "connections: checkout 6 (a queue of 40, 1 s wait), reports 4 (no queue).\n\n")
    b.append("Each sample forces a full collection and records the heap in use after it (from the "
             "collector's notification), live threads, open file descriptors (`/proc/self/fd`) and each "
             "compartment's slots in flight. The load generator runs in the same process, so threads and "
             "descriptors are the whole process's: the app, its clients, the pools and the generator. "
             "Verdicts leave out the first minute; a series is flat when the least-squares line's rise "
             "over the run is within its tolerance.\n\n")
    b.append("## Verdicts\n\n| series | mean | first → last | verdict |\n|---|---:|---:|---|\n")
    for t in trends:
        b.append("| %s | %s %s | %s → %s | %s |\n" % (t["series"], fixed(t["mean"]), t["unit"],
                                                     fixed(t["first"]), fixed(t["last"]), trend_verdict(t)))
    after = meta.get("after", {})
    b.append("\nAfter the load stopped and the calls in flight finished: slots in flight %s; %s threads, "
             "%s file descriptors, heap %s MB after a full collection.\n\n" % (
                 ", ".join("%s %s" % (k, v) for k, v in after.get("in_flight", {}).items()),
                 after.get("threads", "?"), after.get("fds", "?"),
                 fixed(after["heap_bytes"] / MB) if "heap_bytes" in after else "?"))
    b.append("## Per minute\n\n")
    b.append("Latencies count from when each call was due. chat: ok / the upstream's 500 relayed as 502 "
             "or another failure / 503 (llm compartment full) / 504; checkout and report: ok / rejected / "
             "failed. Heap, threads and fds: the minute's last sample; slots: the minute's peak per "
             "compartment (%s).\n\n" % ", ".join(names))
    b.append("| min | logins | login p99 | chats ok/fail/503/504 | chat p99 | checkouts ok/rej/fail | "
             "checkout p99 | reports ok/rej/fail | heap MB | threads | fds | peak slots |\n")
    b.append("|---:|---:|---:|---|---:|---|---:|---|---:|---:|---:|---|\n")
    for m in minutes:
        login, chat, checkout, report = m["workloads"]
        last = None
        peak = [0] * len(names)
        for s in samples:
            if m["end"] - 60 <= s["t"] < m["end"]:
                last = s
                peak = [max(p, s["in_flight"][n]) for p, n in zip(peak, names)]
        b.append("| %d | %d | %s | %d/%d/%d/%d | %s | %d/%d/%d | %s | %d/%d/%d | %s | %s | %s | %s |\n" % (
            m["index"], login["calls"], soak_ms(login["p99"]),
            chat["ok"], chat["failed"], chat["rejected"], chat["timed_out"], soak_ms(chat["p99"]),
            checkout["ok"], checkout["rejected"], checkout["failed"], soak_ms(checkout["p99"]),
            report["ok"], report["rejected"], report["failed"],
            "" if last is None else fixed(last["heap"] / MB), "" if last is None else last["threads"],
            "" if last is None else last["fds"], ", ".join(str(p) for p in peak)))
    b.append("\nChart: soak.svg. Raw figures: samples.csv (every %s), minutes.csv.\n" % meta.get("sample_every", "?"))
    return "".join(b)


def nice_step(peak):
    """1, 2 or 5 times a power of ten, giving four to ten grid lines up to peak."""
    if peak <= 0:
        return 1.0
    raw = peak / 5
    power = 10 ** math.floor(math.log10(raw))
    m = raw / power
    step = 1 if m <= 1 else 2 if m <= 2 else 5 if m <= 5 else 10
    return max(step * power, 1e-3)


def axis_number(v):
    return str(int(v)) if v == round(v) else general(v, 2)


def soak_svg(names, samples, minutes, meta):
    width, left, right, top, plot_h, gap = 900, 64, 150, 70, 120, 64
    plot_w = width - left - right
    x_max = max(1.0, meta.get("duration_s", samples[-1]["t"] if samples else 60) / 60)

    def series(label, value):
        return (label, [s["t"] / 60 for s in samples], [value(s) for s in samples])

    panels = [
        ("heap in use after each full GC (MB)", [series("heap", lambda s: math.nan if s["heap"] < 0 else s["heap"] / MB)]),
        ("live threads (whole process)", [series("threads", lambda s: s["threads"])]),
        ("open file descriptors (whole process)", [series("fds", lambda s: s["fds"])]),
        ("slots in flight per compartment", [series(n, lambda s, n=n: s["in_flight"][n]) for n in names]),
        ("p99 per minute, from when each call was due (ms)", [  # login, chat, checkout: reports take seconds
            (workload_label(w), [m["end"] / 60 for m in minutes], [m["workloads"][w]["p99"] for m in minutes])
            for w in range(3)]),
    ]
    height = top + len(panels) * (plot_h + gap) + 10
    h = [svg_open(width, height, "Heap after full GC, threads, file descriptors, slots in flight and p99 over the soak")]
    h.append(svg_text(left, 24, "start", INK, "15", "600", "Soak: does anything grow under long mixed load?"))
    setup = meta.get("setup", "") + "."
    cut = setup.rfind(" ", 0, 121)  # two lines at most: one would run past the right edge
    if len(setup) <= 120 or cut < 0:
        h.append(svg_text(left, 44, "start", MUTED, "12", "400", setup))
    else:
        h.append(svg_text(left, 42, "start", MUTED, "12", "400", setup[:cut]))
        h.append(svg_text(left, 57, "start", MUTED, "12", "400", setup[cut + 1:]))
    for i, (title, lines) in enumerate(panels):
        at = top + 20 + i * (plot_h + gap)
        peak = max([y for _, _, ys in lines for y in ys if not math.isnan(y)] + [0])
        y_step = nice_step(peak)
        y_max = max(y_step, math.ceil(peak * 1.1 / y_step) * y_step)
        h.append(svg_text(left, at - 10, "start", INK, "13", "600", title))
        h.append(svg_plot_area(left, at, plot_w, plot_h))
        v = 0.0
        while v <= y_max + 1e-9:
            y = at + plot_h - v / y_max * plot_h
            h.append(svg_line(left, y, left + plot_w, y, GRID))
            h.append(svg_text(left - 8, y + 4, "end", MUTED, "11", "400", axis_number(v)))
            v += y_step
        x_step = 0.5 if x_max <= 2 else 1 if x_max <= 12 else 5 if x_max <= 60 else 30
        h.append(svg_time_axis(left, at, plot_w, plot_h, x_max, x_step, 15, "11", lambda t: axis_number(t) + " min"))
        for k, (label, xs, ys) in enumerate(lines):
            color = COLORS[k % len(COLORS)]
            d = []
            for x, y in zip(xs, ys):
                if math.isnan(y):
                    continue
                px = left + min(x, x_max) / x_max * plot_w
                py = at + plot_h - min(y, y_max) / y_max * plot_h
                d.append(("M" if not d else " L") + fixed(px) + " " + fixed(py))
            h.append(svg_path(color, "".join(d)))
            ly = at + 14 + k * 16
            h.append(svg_line(left + plot_w + 10, ly - 4, left + plot_w + 28, ly - 4, color, extra=' stroke-width="3"'))
            h.append(svg_text(left + plot_w + 34, ly, "start", INK, "11", "400", label))
    h.append("</svg>\n")
    return "".join(h)


def soak(d):
    """Writes d/summary.md and d/soak.svg from the soak's files in d."""
    names, samples, minutes, meta = read_soak(d)
    trends = soak_trends(names, samples, minutes)
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write(soak_summary(names, samples, minutes, meta, trends))
    with open(os.path.join(d, "soak.svg"), "w") as f:
        f.write(soak_svg(names, samples, minutes, meta))
    print("report.py: wrote %s and %s" % (rel(os.path.join(d, "summary.md")), rel(os.path.join(d, "soak.svg"))), file=sys.stderr)


# ------------------------------------------------------------------------------------------------
# The experiment against a peer (scripts/peer): its BENCHMARKS.md section and chart, from peer.json

PEER_VARIANTS = [("bulkhead", "Bulkhead", "#2563eb"), ("resilience4j", "Resilience4j", "#ea580c")]


def peer_ms(v):
    if v is None:
        return "–"
    return fixed(v) + " ms" if v < 100 else "{:,}".format(int(Decimal(repr(float(v))).quantize(Decimal(1), rounding=ROUND_HALF_UP))) + " ms"


def peer_seconds(ms):
    return plain(ms / 1000) + " s"


def peer_duration(ms):
    """"30 s", "1 s", "20 ms", "1.5 s"."""
    return "%d ms" % ms if ms < 1000 else peer_seconds(ms)


def peer_rows():
    """(label, value of a variant's results, bold)."""
    return [
        ("login p50", lambda v: peer_ms(v["login"]["p50_ms"]), False),
        ("login p99", lambda v: peer_ms(v["login"]["p99_ms"]), True),
        ("login max", lambda v: peer_ms(v["login"]["max_ms"]), False),
        ("chats answered 200 / 503 / other", lambda v: "%d / %d / %d" % (v["chat"]["200"], v["chat"]["503"], v["chat"]["other"]), True),
        ("503 p50 / p99", lambda v: peer_ms(v["rejected"]["p50_ms"]) + " / " + peer_ms(v["rejected"]["p99_ms"]), False),
        ("server slots held by waiting chats, peak", lambda v: str(v["chats_waiting"]["peak"]), True),
        ("server slot-seconds held by waiting chats", lambda v: fixed(v["chats_waiting"]["slot_seconds"]), False),
        ("requests queued for a server slot, peak", lambda v: str(v["server_waiting"]["peak"]), False),
        ("upstream connections, most open at once", lambda v: str(v["upstream"]["max_open_connections"]), False),
        ("last answer (wall time)", lambda v: peer_ms(v["wall_ms"]), False),
    ]


def peer_points(v):
    """The sampled timeline: (ms since the load started, chats waiting, chats calling, server in
    flight, server waiting)."""
    s = v["series"]
    return list(zip(s["t_ms"], s["chats_waiting"], s["chats_calling"], s["server_in_flight"], s["server_waiting"]))


def peer_markdown(peer, svg_link):
    s, m = peer["setup"], peer["machine"]
    b, r = peer["bulkhead"], peer["resilience4j"]
    out = []
    out.append(
        "The slow-upstream experiment, both variants in one JVM on loopback: a fake upstream that answers "
        "after %s; the demo app, every route of which sits behind a server-wide cap of %d slots with an "
        "unbounded queue; %d `/chat` at once, then %d `/login` %s later. Only the guard on `/chat` "
        "differs. **Bulkhead** is the demo's bulkhead mode: compartment `llm`, %d in flight, at most %d "
        "waiting, %s wait, waiting without a thread. **Resilience4j** is Resilience4j %s's "
        "`SemaphoreBulkhead` (maxConcurrentCalls %d, maxWaitDuration %s, no bound on waiters) around the "
        "blocking upstream call, `executeCallable` on the Jetty thread. Each variant's client opens at "
        "most %d connections to the upstream.\n\n" % (
            peer_duration(s["delay_ms"]), s["server_limit"], s["chats"], s["logins"],
            peer_duration(s["logins_after_ms"]), s["chat_limit"], s["chat_queue_bulkhead"],
            peer_duration(s["chat_wait_ms"]), m["resilience4j"], s["chat_limit"],
            peer_duration(s["chat_wait_ms"]), s["chat_limit"]))
    out.append("| | Bulkhead (%d / %d / %s) | Resilience4j (%d, %s, unbounded) |\n|---|---:|---:|\n" % (
        s["chat_limit"], s["chat_queue_bulkhead"], peer_duration(s["chat_wait_ms"]), s["chat_limit"],
        peer_duration(s["chat_wait_ms"])))
    for label, value, key in peer_rows():
        if key:
            out.append("| **%s** | **%s** | **%s** |\n" % (label, value(b), value(r)))
        else:
            out.append("| %s | %s | %s |\n" % (label, value(b), value(r)))
    out.append("\n![Server slots held by waiting chats, and requests queued for a server slot, over time, "
               "for both variants](%s)\n\n" % svg_link)
    out.append(
        "A chat waiting for its guard's verdict has already passed the server cap, so it holds a server "
        "slot that a login could have used. For Bulkhead that is the `llm` compartment's waiting count; "
        "for Resilience4j, the chats that entered the `/chat` handler and were neither admitted nor "
        "rejected by the bulkhead yet (a counter around `executeCallable`). Both, and the server "
        "compartment's queue, were sampled every %s (%d and %d samples; the longest gap between two "
        "samples was %s), so a peak is the largest sampled value. " % (
            peer_duration(s["sample_every_ms"]), b["samples"], r["samples"],
            peer_ms(max(b["longest_gap_ms"], r["longest_gap_ms"]))))
    held = []
    for key, title, _ in PEER_VARIANTS:
        before = None
        for p in peer_points(peer[key]):
            if p[0] > s["logins_after_ms"]:
                break
            before = p
        held.append(None if before is None else (
            "%s run held %d of the %d server slots (%d chats calling the upstream, %d waiting for the "
            "guard) and %d requests were queued for one" % (
                title, before[3], s["server_limit"], before[2], before[1], before[4])))
    if None not in held:
        out.append("In the last sample before the logins were sent, the %s; the %s. " % tuple(held))
    whole = peer.get("run_end_ms", max(b["wall_ms"], r["wall_ms"]))
    if peer["chart_end_ms"] < whole:
        out.append("The chart shows the first %s; from then to the end of the run (%s) nothing waited in "
                   "either variant. " % (peer_seconds(peer["chart_end_ms"]), peer_seconds(whole)))
    out.append(
        "Latencies run from sending a request to the last byte of its answer, one connection per request. "
        "Both apps' Jetty thread pools were grown to %d threads before the load, as on a server that has "
        "been serving traffic: Resilience4j parks one thread per waiting chat, and a cold pool would "
        "create them during the burst. Each variant ran once, Bulkhead first, after a short warm-up run "
        "of both.\n\n" % s["jetty_threads"])
    load = lambda v: "unknown" if v < 0 else "%.2f" % v
    out.append(
        "Machine: %d processors, load average %s before and %s after; Java %s; started %s UTC, %s for both "
        "runs. Run it alone with `bulkhead-benchmarks/scripts/peer DIR [--delay 3s]` after building the "
        "benchmarks.\n" % (m["processors"], load(m["load_before"]), load(m["load_after"]), m["java"],
                           peer["date"].rstrip("Z"), peer_seconds(m["elapsed_ms"])))
    return "".join(out)


def peer_svg(peer):
    s = peer["setup"]
    width, left, right = 900, 64, 24
    plot_w = width - left - right
    top_1, plot_h_1 = 124, 200
    top_2 = top_1 + plot_h_1 + 84
    plot_h_2 = 150
    height = top_2 + plot_h_2 + 70
    x_max = peer["chart_end_ms"] / 1000
    h = [svg_open(width, height, "Server slots held by waiting chats, and requests queued for a server slot, over time")]
    h.append(svg_text(left, 24, "start", INK, "15", "600", "One slow upstream: what chats waiting for it hold"))
    h.append(svg_text(left, 44, "start", MUTED, "12", "400",
                      "%s upstream; %d /chat at once, %d /login %s later; server cap %d slots, unbounded "
                      "queue; sampled every %s." % (
                          peer_duration(s["delay_ms"]), s["chats"], s["logins"], peer_duration(s["logins_after_ms"]),
                          s["server_limit"], peer_duration(s["sample_every_ms"]))))
    at = 68
    for key, title, color in PEER_VARIANTS:  # the legend: each variant's line, name and two key figures
        v = peer[key]
        h.append(svg_line(left, at - 4, left + 22, at - 4, color, extra=' stroke-width="3"'))
        h.append(svg_text(left + 28, at, "start", INK, "12", "400", "%s: peak %d slots held by waiting chats, "
                          "login p99 %s" % (title, v["chats_waiting"]["peak"], peer_ms(v["login"]["p99_ms"]))))
        at += 18

    def panel(top, plot_h, y_max, column, title):
        h.append(svg_text(left, top - 10, "start", INK, "13", "600", title))
        h.append(svg_plot_area(left, top, plot_w, plot_h))
        y_step = 5 if y_max <= 20 else 10 if y_max <= 60 else 20 if y_max <= 120 else 50
        for v in range(0, y_max + 1, y_step):
            y = top + plot_h - v / y_max * plot_h
            h.append(svg_line(left, y, left + plot_w, y, GRID))
            h.append(svg_text(left - 8, y + 4, "end", MUTED, "12", "400", str(v)))
        x_step = 0.5 if x_max <= 5 else 1 if x_max <= 12 else 5 if x_max <= 40 else 10
        h.append(svg_time_axis(left, top, plot_w, plot_h, x_max, x_step, 16, "12", lambda t: plain(t) + " s"))
        login_x = left + min(s["logins_after_ms"] / 1000, x_max) / x_max * plot_w
        h.append(svg_line(login_x, top, login_x, top + plot_h, "#6e7781", "2 3"))
        h.append(svg_text(login_x + 4, top + plot_h - 6, "start", MUTED, "11", "400", "logins sent"))
        for key, _, color in PEER_VARIANTS:  # a step line: each sample's value holds until the next
            d = []
            for p in peer_points(peer[key]):
                if p[0] > x_max * 1000:
                    break
                x = left + p[0] / (x_max * 1000) * plot_w
                y = top + plot_h - min(p[column], y_max) / y_max * plot_h
                d.append(("M%s %s" if not d else " H%s V%s") % (fixed(x), fixed(y)))
            h.append(svg_path(color, "".join(d)))

    y1_max = s["server_limit"]  # on the scale of the whole server cap
    panel(top_1, plot_h_1, y1_max, 1, "server slots held by chats waiting for the chat guard")
    y = top_1 + plot_h_1 - s["chat_queue_bulkhead"] / y1_max * plot_h_1
    h.append(svg_line(left, y, left + plot_w, y, PEER_VARIANTS[0][2], "5 4", ' stroke-opacity=".55"'))
    h.append(svg_text(left + plot_w - 6, y - 5, "end", PEER_VARIANTS[0][2], "11", "400",
                      "Bulkhead's queue bound: %d" % s["chat_queue_bulkhead"]))
    peak = max(peer[key]["server_waiting"]["peak"] for key, _, _ in PEER_VARIANTS)
    panel(top_2, plot_h_2, max(10, (peak + 9) // 10 * 10), 4, "requests queued for a server slot (chats and logins)")
    h.append(svg_text(left + plot_w / 2, height - 14, "middle", MUTED, "12", "400", "seconds since the chats were sent"))
    h.append("</svg>\n")
    return "".join(h)


# ------------------------------------------------------------------------------------------------
# The two generated pages and their sections

EDGE_BELOW_HEADING = "Below the limit on `/` again: plain Jetty and `BulkheadHandler`, more rounds"


def benchmarks_sections(run_dir=None):
    """BENCHMARKS.md's generated sections: name -> lines, for those whose results exist."""
    sections = {}
    jmh_dir = newest(["run"], "jmh.json", run_dir)
    if jmh_dir:
        sections["jmh"] = jmh_sections(jmh_dir)
    fleet_dir = newest(["run", "fleet-cost"], "fleet-cost.json", run_dir)
    if fleet_dir:
        sections["fleet-cost"] = fleet_cost_section(
            read_json_file(os.path.join(fleet_dir, "fleet-cost.json")),
            read_json_file(os.path.join(fleet_dir, "fleet-cost-before.json")))
    peer_dir = newest(["run", "peer"], "peer.json", run_dir)
    if peer_dir:
        sections["peer"] = peer_section(peer_dir)
    headline_dir = newest(["headline"], "headline.json")
    if headline_dir:
        sections["headline"] = headline_section(os.path.join(headline_dir, "headline.json"))
    edge = []
    edge_dir = newest(["edge"], "edge-runs.jsonl")
    if edge_dir:
        edge_section(edge_dir, edge.append)
    below_dir = newest(["edge-below"], "edge-runs.jsonl")
    if below_dir:
        edge_section(below_dir, edge.append, recheck=EDGE_BELOW_HEADING)
    if edge:
        sections["edge"] = edge
    scale_dir = newest(["scale"], "scale-machine.json")
    if scale_dir:
        sections["scale"] = scale_section(scale_dir)
    return sections


def experiments_sections():
    """docs/experiments.md's generated sections: every before/after run, oldest first."""
    def started(d, machine):
        return read_json_file(os.path.join(d, machine), {}).get("date", os.path.basename(d))

    ba = []
    for d in sorted(runs_of("before-after-*"), key=lambda d: started(d, "machine.json")):
        ba += before_after_section(d)
    edge = []
    for d in sorted(runs_of("edge-*"), key=lambda d: started(d, "edge-machine.json")):
        m = read_json_file(os.path.join(d, "edge-machine.json"), {})
        if "bulkhead-before" in m.get("variants", ""):
            edge_section(d, edge.append, before_after=True)
    return {"admitted-path-before-after": ba, "edge-before-after": edge}


def splice(text, sections):
    """text with each <!-- report.py: NAME --> ... <!-- report.py: end NAME --> block replaced by its
    section; a section without a block in text is added at the end, with its markers."""
    for name, lines in sections.items():
        begin, end = "<!-- report.py: %s -->" % name, "<!-- report.py: end %s -->" % name
        body = begin + "\n" + "\n".join(lines).strip("\n") + "\n" + end
        if begin in text and end in text:
            text = text[:text.index(begin)] + body + text[text.index(end) + len(end):]
        else:
            text = text.rstrip("\n") + "\n\n" + body + "\n"
    return text


def write_into(path, sections):
    with open(path) as f:
        text = f.read()
    new = splice(text, sections)
    if new != text:
        with open(path, "w") as f:
            f.write(new)
    print("report.py: %s: %s regenerated%s" % (
        rel(path), ", ".join(sections) or "no section",
        "" if new != text else " (no change)"), file=sys.stderr)


# ------------------------------------------------------------------------------------------------
# Tables for one investigation (results/2026-12-01-edge-p99/)

def edge_rounds(dirs):
    """Per run, case, variant and round: p99 and the JIT compiler threads' CPU during the measured
    seconds, the figures the p99 gap below the limit turned on."""
    for d in dirs:
        m = read_json_file(os.path.join(d, "edge-machine.json"))
        print("## %s (case_warmup %s; load %s before, %s after)" % (
            d, m.get("case_warmup", 0), m["load_before"], m.get("load_after", "?")))
        print("| case | variant | round | answers/s | p50 ms | p99 ms | JIT CPU s | server CPU s | warm-up passes | load |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        with open(os.path.join(d, "edge-runs.jsonl")) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        rows.sort(key=lambda r: (r["case"], r["variant"], r["round"]))
        for r in rows:
            a = r["all"]
            print("| %s | %s | %s | %.0f | %.3f | %.3f | %s | %s | %s | %s |" % (
                r["case"], r["variant"], r["round"], a["per_s"], a["p50_ms"], a["p99_ms"],
                r["server_jit_cpu_s"], r["server_cpu_s"], r.get("case_warmup_passes", "-"), r["load"]))
        print()


def jit_summary(d):
    """Per measured case of a scripts/edge-jit-diagnosis run: the JIT compilations, GC pauses and
    safepoints inside the case's window, and the CPU of the server's threads other than Jetty's pool."""
    marks = {}
    for line in open(os.path.join(d, "marks")):
        k, v = line.split()
        marks[k] = float(v)
    comp = []
    server_out = os.path.join(d, "server.out")
    log = (open(server_out) if os.path.exists(server_out)
           else gzip.open(os.path.join(d, "print-compilation.log.gz"), "rt"))
    for line in log:
        m = re.match(r"\s*(\d+)\s+\d+\s+[%sbn! ]*\s(\d)\s+(\S+)", line)
        if m:
            comp.append((int(m.group(1)) / 1000, int(m.group(2)), m.group(3), "made not entrant" in line))
    pauses = []
    for line in open(os.path.join(d, "gc.log")):
        m = re.match(r"\[(\d+\.\d+)s\].*GC\(\d+\) Pause (\S+).* (\d+\.\d+)ms", line)
        if m:
            pauses.append((float(m.group(1)), m.group(2), float(m.group(3))))
    sp = []
    for line in open(os.path.join(d, "safepoint.log")):
        m = re.match(r'\[(\d+\.\d+)s\] Safepoint "(\w+)".*Total: (\d+) ns', line)
        if m:
            sp.append((float(m.group(1)), m.group(2), int(m.group(3)) / 1e6))
    for c in ("below", "below-5ms"):
        a, b = marks[c + "-start"], marks[c + "-end"]
        cw = [x for x in comp if a <= x[0] <= b]
        c2 = [x for x in cw if x[1] == 4 and not x[3]]
        pw = [x for x in pauses if a <= x[0] <= b]
        sw = [x for x in sp if a <= x[0] <= b]
        cpu = open(os.path.join(d, "threads-%s.cpu" % c)).read().split("\n")
        h = open(os.path.join(d, "h2load-%s.out" % c)).read()
        rps = re.search(r"finished in [\d.]+s, ([\d.]+) req/s", h).group(1)
        print("%-9s req/s %s | compiles %d (C2 %d, deopt %d) | GC pauses %d total %.1f ms max %.1f | "
              "safepoints %d total %.1f ms max %.1f" % (
                  c, rps, len([x for x in cw if not x[3]]), len(c2), len([x for x in cw if x[3]]),
                  len(pw), sum(x[2] for x in pw), max([x[2] for x in pw] or [0]),
                  len(sw), sum(x[2] for x in sw), max([x[2] for x in sw] or [0])))
        print("   C2 in window:", " ".join(sorted(set(x[2] for x in c2)))[:600])
        print("   thread cpu:", "; ".join(x.strip() for x in cpu if x.strip() and not x.startswith("edge-")))


def show(d):
    """The sections of one run directory, by the files it holds."""
    lines = []
    m = read_json_file(os.path.join(d, "edge-machine.json"))
    if os.path.exists(os.path.join(d, "scale-machine.json")):
        lines += scale_section(d)
    elif m is not None:
        edge_section(d, lines.append, before_after="bulkhead-before" in m.get("variants", ""))
    elif os.path.exists(os.path.join(d, "jmh.json")):
        lines += jmh_sections(d)
    elif glob.glob(os.path.join(d, "before-t*-r*.json")):
        lines += before_after_section(d)
    if os.path.exists(os.path.join(d, "fleet-cost.json")):
        lines += fleet_cost_section(read_json_file(os.path.join(d, "fleet-cost.json")))
    if os.path.exists(os.path.join(d, "peer.json")):
        lines += peer_section(d)
    if os.path.exists(os.path.join(d, "headline.json")):
        lines += headline_section(os.path.join(d, "headline.json"))
    if not lines:
        sys.exit("report.py: show: no result files report.py knows in " + d)
    print("\n".join(lines))


def main(argv):
    parser = argparse.ArgumentParser(prog="report.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("benchmarks", help="BENCHMARKS.md's generated sections")
    b.add_argument("--run", metavar="DIR", help="a scripts/run results directory, read first")
    b.add_argument("--into", metavar="FILE", default=os.path.join(ROOT, "BENCHMARKS.md"))
    b.add_argument("--print", action="store_true", help="print the sections instead of writing FILE")
    e = sub.add_parser("experiments", help="docs/experiments.md's generated sections")
    e.add_argument("--into", metavar="FILE", default=os.path.join(ROOT, "docs", "experiments.md"))
    e.add_argument("--print", action="store_true", help="print the sections instead of writing FILE")
    s = sub.add_parser("show", help="the sections of one run directory")
    s.add_argument("dir", metavar="DIR")
    q = sub.add_parser("peer", help="the peer experiment's chart")
    q.add_argument("dir", metavar="DIR")
    k = sub.add_parser("soak", help="a soak's summary.md and soak.svg")
    k.add_argument("dir", metavar="DIR")
    r = sub.add_parser("edge-rounds", help="per-round table of scripts/edge runs")
    r.add_argument("dirs", nargs="+", metavar="DIR")
    j = sub.add_parser("jit-summary", help="summary of a scripts/edge-jit-diagnosis run")
    j.add_argument("dir", metavar="DIR")
    args = parser.parse_args(argv)
    if args.command in ("benchmarks", "experiments"):
        sections = (benchmarks_sections(args.run and os.path.abspath(args.run))
                    if args.command == "benchmarks" else experiments_sections())
        if args.print:
            for name, lines in sections.items():
                print("<!-- report.py: %s -->\n%s\n<!-- report.py: end %s -->\n" % (
                    name, "\n".join(lines).strip("\n"), name))
        else:
            write_into(args.into, sections)
    elif args.command == "show":
        show(os.path.abspath(args.dir))
    elif args.command == "peer":
        peer_section(os.path.abspath(args.dir))
        print("report.py: wrote " + rel(os.path.join(os.path.abspath(args.dir), "peer-experiment.svg")), file=sys.stderr)
    elif args.command == "soak":
        soak(os.path.abspath(args.dir))
    elif args.command == "edge-rounds":
        edge_rounds(args.dirs)
    else:
        jit_summary(args.dir)


if __name__ == "__main__":
    main(sys.argv[1:])
