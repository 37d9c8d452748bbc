#!/usr/bin/env python3
"""The load of the slow-upstream experiment at scale, sent by h2load: an event-driven client whose own
cost does not dominate what it measures (the demo's `load` spends a platform thread and a blocking
socket per request, which at 13,000 requests on two cores was most of the login p99).

    scale-load.py --target URL --chats N --logins M [--logins-after 1] --out FILE
                  [--started-file F] [--workdir DIR] [--threads 1]

Two h2load processes over HTTP/1.1 (--h1), each with one connection per request (-c N -n N): the
chats at t=0 and the logins --logins-after seconds later, as the experiment sends them. Each
h2load writes a row per request (--log-file: start, status, microseconds to the end of the
response); its time to connect is not in that row, so the summary's connect times (h2load's own
stdout) are reported beside it: a SYN dropped by a full accept queue would show there as a second.

Writes FILE (JSON) with the fields ScaleProcess' load writes (login p50/p99/max, chat 200/503/other,
503 p50/p99, wall time), plus the client's own limits: each h2load's CPU (user + system, from
wait4), its peak threads (sampled from /proc) and its connect times. Writes --started-file once the
chats' h2load runs, so the caller can look at the app at a known moment.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time


def percentile(sorted_values, q):
    if not sorted_values:
        return None
    rank = max(1, -(-len(sorted_values) * q // 1))  # nearest rank
    return sorted_values[int(min(rank, len(sorted_values))) - 1]


def read_log(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split("\t")
                if len(parts) >= 3:
                    rows.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return rows


def connect_times(stdout):
    """h2load's 'time for connect: min max mean sd' line, in ms."""
    for line in stdout.splitlines():
        if line.startswith("time for connect:"):
            values = re.findall(r"([0-9.]+)(us|ms|s)\b", line)
            scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
            out = [float(v) * scale[u] for v, u in values]
            if len(out) >= 3:
                return {"min_ms": out[0], "max_ms": out[1], "mean_ms": out[2]}
    return None


def threads_of(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--target", required=True)
    a.add_argument("--chats", type=int, required=True)
    a.add_argument("--logins", type=int, required=True)
    a.add_argument("--logins-after", type=float, default=1.0)
    a.add_argument("--out", required=True)
    a.add_argument("--started-file")
    a.add_argument("--workdir", default=None)
    a.add_argument("--threads", type=int, default=1)
    o = a.parse_args()
    work = o.workdir or os.path.dirname(os.path.abspath(o.out))
    base = os.path.splitext(os.path.basename(o.out))[0]

    def h2load(path, n, name):
        log = os.path.join(work, "%s-%s.tsv" % (base, name))
        if os.path.exists(log):
            os.remove(log)
        # -c n -n n: one connection per request, all opened at once; -m 1: one request at a time on
        # it; --h1: HTTP/1.1 as the experiment's clients speak it
        cmd = ["h2load", "--h1", "-t", str(o.threads), "-c", str(n), "-n", str(n), "-m", "1",
               "--log-file", log, o.target.rstrip("/") + path]
        launched = time.time()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return {"proc": p, "log": log, "name": name, "peak_threads": 0, "started": launched}

    runs = []

    def stop(signum, frame):
        # the caller ends the load early (a probe run): its requests must leave the app with it
        for r in runs:
            if r["proc"].poll() is None:
                r["proc"].kill()
        sys.exit(143)

    signal.signal(signal.SIGTERM, stop)
    t0 = time.time()
    if o.chats > 0:
        runs.append(h2load("/chat", o.chats, "chats"))
    if o.started_file:
        with open(o.started_file, "w") as f:
            f.write("started")
    if o.logins > 0:
        if o.chats > 0:
            time.sleep(max(0.0, t0 + o.logins_after - time.time()))
        runs.append(h2load("/login", o.logins, "logins"))
    # Sample the threads while they run, then reap each with its own rusage. Reading stdout in a
    # thread of our own is not needed: h2load writes its summary only at the end, well under a pipe.
    pending = list(runs)
    while pending:
        for r in list(pending):
            r["peak_threads"] = max(r["peak_threads"], threads_of(r["proc"].pid))
            pid, status, ru = os.wait4(r["proc"].pid, os.WNOHANG)
            if pid:
                r["ended"] = time.time()
                r["cpu_s"] = ru.ru_utime + ru.ru_stime
                r["max_rss_kb"] = ru.ru_maxrss
                r["exit"] = os.waitstatus_to_exitcode(status)
                r["stdout"] = r["proc"].stdout.read()
                r["proc"].returncode = r["exit"]
                pending.remove(r)
        time.sleep(0.05)
    wall_ms = (max(r["ended"] for r in runs) - t0) * 1000.0

    doc = {"client": "h2load", "chats": o.chats, "logins": o.logins, "wall_ms": wall_ms,
           "client_cpu_s_during_run": sum(r["cpu_s"] for r in runs)}
    for r in runs:
        name = r["name"]
        doc["%s_client_cpu_s" % name] = r["cpu_s"]
        doc["%s_client_threads" % name] = r["peak_threads"]
        doc["%s_client_rss_kb" % name] = r["max_rss_kb"]
        doc["%s_client_wall_ms" % name] = (r["ended"] - r["started"]) * 1000.0
        c = connect_times(r["stdout"])
        if c:
            doc["%s_connect_max_ms" % name] = c["max_ms"]
            doc["%s_connect_mean_ms" % name] = c["mean_ms"]
        if r["exit"] != 0:
            doc["%s_client_exit" % name] = r["exit"]
            sys.stderr.write(r["stdout"])
    doc["peak_threads"] = sum(r["peak_threads"] for r in runs)
    ms = lambda v: None if v is None else v / 1000.0

    logins = read_log(os.path.join(work, "%s-logins.tsv" % base)) if o.logins else []
    lat = sorted(d for _, s, d in logins if s == 200)
    doc["login_p50_ms"] = ms(percentile(lat, 0.50))
    doc["login_p99_ms"] = ms(percentile(lat, 0.99))
    doc["login_max_ms"] = ms(lat[-1] if lat else None)
    # a login h2load never got an answer for has no row: count it failed
    doc["login_failures"] = o.logins - len(lat)
    # The same logins counted from the moment their h2load was started: with its connect (a SYN the
    # kernel dropped would be a second here) and the client's own serial work on one thread.
    launched = next((r["started"] for r in runs if r["name"] == "logins"), None)
    if launched is not None:
        whole = sorted(st + d - launched * 1e6 for st, s, d in logins if s == 200)
        doc["login_from_start_p50_ms"] = ms(percentile(whole, 0.50))
        doc["login_from_start_p99_ms"] = ms(percentile(whole, 0.99))
        doc["login_from_start_max_ms"] = ms(whole[-1] if whole else None)

    chats = read_log(os.path.join(work, "%s-chats.tsv" % base)) if o.chats else []
    doc["chat_ok"] = sum(1 for _, s, _ in chats if s == 200)
    rejected = sorted(d for _, s, d in chats if s == 503)
    doc["chat_rejected"] = len(rejected)
    doc["chat_other"] = o.chats - doc["chat_ok"] - len(rejected)
    doc["rejected_p50_ms"] = ms(percentile(rejected, 0.50))
    doc["rejected_p99_ms"] = ms(percentile(rejected, 0.99))
    with open(o.out, "w") as f:
        json.dump(doc, f, indent=2)


if __name__ == "__main__":
    main()
