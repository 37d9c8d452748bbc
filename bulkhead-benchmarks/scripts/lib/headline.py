#!/usr/bin/env python3
"""The headline of the slow-upstream experiment, side by side: login p99 in bulkhead mode of the demo's
`app` against the article's own Node app, same upstream, same client, fresh and warm.

Run it through bulkhead-benchmarks/scripts/headline (which builds the jar and takes the bench lock); see the
comment there for what is measured and how.
"""
import argparse
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time

import headline_node

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))  # the repository
TICKS = os.sysconf("SC_CLK_TCK")
OUR_APP = "bulkhead-demo app"
WARM_APP = "bulkhead-demo app --warm-up"  # results made before the app warmed up by default
COLD_APP = "bulkhead-demo app --no-warm-up"
NODE_APP = "article's Node app"
AOT_APP = "bulkhead-demo app, JDK 25 AOT cache"
FLOOR_APP = "floor: canned answers from one C thread"
OURS = (OUR_APP, WARM_APP, COLD_APP, AOT_APP)
WARMED = re.compile(r"warmed up: (\d+) bursts \((\d+) requests\) .* in ([0-9.]+)(ms|s|µs)\b")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, what, seconds=180):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("headline: the %s exited with %s before it listened on %d"
                             % (what, proc.returncode, port))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.02)
    raise SystemExit("headline: the %s did not listen on %d within %d s" % (what, port, seconds))


def cpu_ms(pid):
    """User + system CPU of every thread of process `pid` so far, in milliseconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # After the command's closing parenthesis: state is field 3, utime 14 and stime 15 (1-based).
    return (int(fields[11]) + int(fields[12])) * 1000.0 / TICKS


def threads(pid):
    return len(os.listdir("/proc/%d/task" % pid))


def thread_cpu_ms(pid):
    """CPU ms so far per group of threads of `pid`, a group being a thread name without its digits
    ("C2 CompilerThread0" and "...1" are one group): where the app's CPU goes."""
    groups = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except OSError:
            continue  # the thread ended between the listing and the read
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        group = re.sub(r"[0-9]+", "#", name)
        groups[group] = groups.get(group, 0.0) + (int(fields[11]) + int(fields[12])) * 1000.0 / TICKS
    return groups


def minus(after, before):
    """Per-group CPU spent between two thread_cpu_ms readings; threads that ended are lost."""
    out = {}
    for k, v in after.items():
        d = v - before.get(k, 0.0)
        if d > 0:
            out[k] = round(d, 1)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def run_client(cmd, env=None, timeout=120):
    """Runs a load client to its end; returns (stdout, wall ms, its own user+system CPU ms)."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = proc.communicate(timeout=timeout)
    wall = (time.monotonic() - started) * 1000.0
    # communicate() has reaped the child, so its CPU is now in RUSAGE_CHILDREN (see ChildCpu).
    if proc.returncode != 0:
        raise SystemExit("headline: client %s failed (%d): %s" % (cmd[:3], proc.returncode,
                                                                  err.decode()[-2000:]))
    return out.decode(), wall


class ChildCpu:
    """CPU of reaped children (the load clients), as a delta around each client run."""

    def __init__(self):
        self.last = self.now()

    @staticmethod
    def now():
        import resource
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (r.ru_utime + r.ru_stime) * 1000.0

    def delta(self):
        now = self.now()
        d, self.last = now - self.last, now
        return d


def machine():
    def cmd(*c):
        try:
            return subprocess.run(c, capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""
    cpu = ""
    for line in cmd("lscpu").splitlines():
        if line.startswith("Model name:"):
            cpu = line.split(":", 1)[1].strip()
    return {
        "cores": os.cpu_count(),
        "nproc": int(cmd("nproc") or 0),
        "cpu": cpu,
        "java": java_version("java"),
        "node": cmd("node", "--version"),
        "kernel": platform.release(),
    }


def java_version(java):
    """The first line `java -version` prints, or "" if it prints none."""
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()
    return out[0] if out else ""


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


class App:
    """One app under test: how to start it, and its label."""

    def __init__(self, label, start, jar=None, flags=None, app_args=(), java="java"):
        self.label = label
        self.start = start  # (port, upstream_port, log) -> Popen
        self.jar, self.flags, self.app_args = jar, flags, list(app_args)  # a Java app's
        self.java = java


def java_app(label, jar, flags, app_args=(), java="java"):
    def start(port, upstream_port, log):
        cmd = [java] + flags + ["-jar", jar, "app", "--mode", "bulkhead", "--port", str(port),
                                  "--upstream", "http://127.0.0.1:%d" % upstream_port] + list(app_args)
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    return App(label, start, jar, flags, app_args, java)


def node_app(label, script):
    def start(port, upstream_port, log):
        env = dict(os.environ, MODE="bulkhead")
        return subprocess.Popen(["node", script], stdout=log, stderr=subprocess.STDOUT, env=env)
    return App(label, start)


def floor_app(label, work):
    """The floor (lib/headline_floor.c), compiled with gcc into `work`: no app, canned answers."""
    binary = os.path.join(work, "headline-floor")
    subprocess.run(["gcc", "-O2", "-o", binary, os.path.join(HERE, "headline_floor.c")], check=True)

    def start(port, upstream_port, log):
        return subprocess.Popen([binary, str(port)], stdout=log, stderr=subprocess.STDOUT)
    return App(label, start)


def make_archives(apps, work, app_port, upstream_port, demo_client, settle_ms):
    """Gives our app's variants in `apps` an AppCDS archive of the classes it loads: one training run
    each (start it with -XX:ArchiveClassesAtExit, one round of the demo's load, stop it, which writes
    the archive), then -XX:SharedArchiveFile on its flags. The measured runs that follow load those
    classes from the archive, already parsed and verified. The JDK 25 variant gets an AOT cache
    instead, made the same way (-XX:AOTCacheOutput, then -XX:AOTCache): the classes loaded and
    linked, and the method profiles of the training run. Returns what each training took."""
    took = {}
    # Only our app's variants: a --java-app (another build, other flags) is compared as it is given.
    for i, app in enumerate(a for a in apps if a.label in OURS):
        aot = app.label == AOT_APP
        archive = os.path.abspath(os.path.join(work, "app-%d.%s" % (i, "aot" if aot else "jsa")))
        if os.path.exists(archive):
            os.remove(archive)
        record = ("-XX:AOTCacheOutput=" if aot else "-XX:ArchiveClassesAtExit=") + archive
        trained = java_app(app.label, app.jar, app.flags + [record], app.app_args, app.java)
        t0 = time.monotonic()
        with open(os.path.join(work, "cds-training-%d.log" % i), "w") as log:
            proc = trained.start(app_port, upstream_port, log)
            try:
                wait_listening(app_port, proc, app.label + " (CDS training)")
                time.sleep(settle_ms / 1000.0)
                run_client(demo_client())
            finally:
                stop(proc, 180)  # it writes the archive as it exits: slow on a busy machine
        if not os.path.exists(archive):
            raise SystemExit("headline: the CDS training run of %s wrote no archive; see %s"
                             % (app.label, log.name))
        app.flags = app.flags + [("-XX:AOTCache=" if aot else "-XX:SharedArchiveFile=") + archive]
        rebuilt = java_app(app.label, app.jar, app.flags, app.app_args, app.java)
        app.start = rebuilt.start
        took[app.label] = {"ms": round((time.monotonic() - t0) * 1000.0),
                           "archive_bytes": os.path.getsize(archive)}
        print("CDS archive of %s: %d MB in %.1f s" % (app.label, took[app.label]["archive_bytes"] >> 20,
                                                       took[app.label]["ms"] / 1000.0), flush=True)
    return took


def warm_up_line(log_path):
    """What our app printed about its warm-up before it listened, parsed; None if it printed none."""
    with open(log_path, errors="replace") as f:
        for line in f:
            m = WARMED.search(line)
            if m:
                unit = {"s": 1000.0, "ms": 1.0, "µs": 0.001}[m.group(4)]
                return {"line": line.strip(), "rounds": int(m.group(1)),
                        "requests": int(m.group(2)), "ms": round(float(m.group(3)) * unit, 1)}
    return None


def stop(proc, seconds=20):
    """Terminates `proc`, and kills it if it has not ended `seconds` later."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def summarize(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, help="directory for headline.json")
    ap.add_argument("--work", help="directory for the Node files and the logs (default: --out)")
    ap.add_argument("--jar", required=True, help="the demo jar (app and load)")
    ap.add_argument("--runs", type=int, default=5, help="app processes per app and client")
    ap.add_argument("--rounds", type=int, default=4,
                    help="load rounds per app process: the first is fresh, the others warm")
    ap.add_argument("--delay-ms", type=int, default=3000, help="the upstream's delay")
    ap.add_argument("--settle-ms", type=int, default=1000,
                    help="pause after an app listens and between rounds")
    ap.add_argument("--clients", default="demo,node",
                    help="load clients: demo (the demo's load, a fresh JVM per round), demo-warmed"
                         " (the same, warmed up in its own process before its burst: load --warm-up"
                         " N, see --client-warm-up), node (the article's load.ts)")
    ap.add_argument("--client-warm-up", type=int, default=3, metavar="ROUNDS",
                    help="the demo-warmed client's `load --warm-up ROUNDS` (default 3)")
    ap.add_argument("--app-flags", default="",
                    help="JVM flags of our app (space-separated); default: none beyond the jar's")
    ap.add_argument("--java-app", nargs=3, action="append", metavar=("LABEL", "JAR", "FLAGS"),
                    default=[], help="another Java app to compare (e.g. the jar before a change)")
    ap.add_argument("--java-app-clients", default="demo",
                    help="the clients the --java-app apps are measured with (default: demo)")
    ap.add_argument("--client-flags", default="", help="JVM flags of the demo's load client")
    ap.add_argument("--no-node", action="store_true",
                    help="leave the article's Node app out (while profiling our own)")
    ap.add_argument("--warm-up", type=int, metavar="ROUNDS",
                    help="start our app with `app --warm-up ROUNDS` (default: the app's own default,"
                         " a readiness warm-up of 3 bursts before it listens)")
    ap.add_argument("--cold", action=argparse.BooleanOptionalAction, default=False,
                    help="also measure our app started with `app --no-warm-up`, with every client")
    ap.add_argument("--cds", action=argparse.BooleanOptionalAction, default=False,
                    help="give each Java app an AppCDS archive of its classes, made once before the"
                         " measured runs by a training run (start, one round of the demo's load,"
                         " stop, with -XX:ArchiveClassesAtExit), as a deployment would at build time")
    ap.add_argument("--aot-java", metavar="JAVA",
                    help="also measure our app run by this java (JDK 25 or later) from an AOT cache"
                         " made by the same training run as the CDS archives (needs --cds)")
    ap.add_argument("--floor", action="store_true",
                    help="also measure the floor: a C server that answers the experiment with canned"
                         " bytes (lib/headline_floor.c, built with gcc), with every client, to show how"
                         " much of the p99 is the client's own")
    ap.add_argument("--note", default="", help="a note stored with the results")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    work = args.work or args.out
    os.makedirs(work, exist_ok=True)
    article = headline_node.find_article(ROOT)
    if article is None:
        raise SystemExit("headline: the article with the Node app (shared/seeds/000_*.txt next to"
                         " the repository) is not on this machine; nothing to compare against")
    app_port, upstream_port = free_port(), free_port()
    node_dir = os.path.join(work, "node")
    node = headline_node.extract(article, node_dir, app_port, upstream_port)

    ours_args = [] if args.warm_up is None else ["--warm-up", str(args.warm_up)]
    apps = [java_app(OUR_APP, args.jar, args.app_flags.split(), ours_args)]
    if args.cold:
        apps.append(java_app(COLD_APP, args.jar, args.app_flags.split(), ["--no-warm-up"]))
    if args.aot_java:
        if not args.cds:
            raise SystemExit("headline: --aot-java needs --cds (the AOT cache is made by its training run)")
        apps.append(java_app(AOT_APP, args.jar, args.app_flags.split(), ours_args,
                             java=args.aot_java))
    for label, jar, flags in args.java_app:
        apps.append(java_app(label, jar, flags.split()))
    if not args.no_node:
        apps.append(node_app(NODE_APP, node["app"]))
    if args.floor:
        apps.append(floor_app(FLOOR_APP, work))

    clients = {
        "demo": lambda: ["java"] + args.client_flags.split() + [
            "-jar", args.jar, "load", "--target", "http://127.0.0.1:%d" % app_port, "--json"],
        "demo-warmed": lambda: ["java"] + args.client_flags.split() + [
            "-jar", args.jar, "load", "--target", "http://127.0.0.1:%d" % app_port, "--json",
            "--warm-up", str(args.client_warm_up)],
        "node": lambda: ["node", node["load"]],
    }
    chosen = [c for c in args.clients.split(",") if c]

    result = {
        "machine": machine(),
        "loadavg_before": loadavg(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": {"runs": args.runs, "rounds": args.rounds, "delay_ms": args.delay_ms,
                   "settle_ms": args.settle_ms, "app_flags": args.app_flags,
                   "client_flags": args.client_flags, "clients": chosen,
                   "client_warm_up": args.client_warm_up, "note": args.note,
                   "java_apps": [[l, os.path.basename(j), f] for l, j, f in args.java_app],
                   "warm_up": args.warm_up, "default_warm_up": True, "cold": args.cold,
                   "cds": args.cds, "floor": args.floor,
                   "aot_java": (java_version(args.aot_java) or args.aot_java) if args.aot_java else None},
        "rounds": [],
    }
    upstream_log = open(os.path.join(work, "upstream.log"), "w")
    upstream = subprocess.Popen(["node", node["upstream"]], stdout=upstream_log,
                                stderr=subprocess.STDOUT,
                                env=dict(os.environ, DELAY_MS=str(args.delay_ms)))
    child_cpu = ChildCpu()
    try:
        wait_listening(upstream_port, upstream, "Node upstream")
        if args.cds:
            result["cds_training"] = make_archives(apps, work, app_port, upstream_port,
                                                   clients["demo"], args.settle_ms)
        for client in chosen:
            for run in range(args.runs):
                # Alternate which app goes first, so neither always follows the other's leftovers.
                extra_ok = client in args.java_app_clients.split(",")
                here = [a for a in apps if extra_ok or a.label in OURS + (NODE_APP, FLOOR_APP)]
                order = here if run % 2 == 0 else list(reversed(here))
                for app in order:
                    log = open(os.path.join(work, "app-%s-%s-%d.log"
                                            % (re.sub(r"[^A-Za-z0-9]+", "-", app.label).strip("-"),
                                               client, run)), "w")
                    t0 = time.monotonic()
                    proc = app.start(app_port, upstream_port, log)
                    try:
                        wait_listening(app_port, proc, app.label)
                        listen_ms = (time.monotonic() - t0) * 1000.0
                        warm_up = warm_up_line(log.name)
                        time.sleep(args.settle_ms / 1000.0)
                        for rnd in range(args.rounds):
                            app_cpu0 = cpu_ms(proc.pid)
                            per_thread0 = thread_cpu_ms(proc.pid)
                            child_cpu.delta()
                            la = loadavg()
                            out, wall = run_client(clients[client]())
                            client_cpu = child_cpu.delta()
                            app_cpu = cpu_ms(proc.pid) - app_cpu0
                            per_thread = minus(thread_cpu_ms(proc.pid), per_thread0)
                            rec = {"app": app.label, "client": client, "run": run, "round": rnd,
                                   "phase": "fresh" if rnd == 0 else "warm",
                                   "client_cpu_ms": round(client_cpu, 1),
                                   "client_wall_ms": round(wall, 1),
                                   "app_cpu_ms": round(app_cpu, 1),
                                   "app_threads": threads(proc.pid),
                                   "app_thread_cpu_ms": per_thread,
                                   "listen_ms": round(listen_ms, 1), "loadavg": la}
                            if rnd == 0 and warm_up:
                                rec["warm_up"] = warm_up
                            if client in ("demo", "demo-warmed"):
                                doc = json.loads(out)
                                rec.update({"login_p50_ms": doc["login"]["p50_ms"],
                                            "login_p99_ms": doc["login"]["p99_ms"],
                                            "login_max_ms": doc["login"]["max_ms"],
                                            "chat_200": doc["chat"]["200"],
                                            "chat_503": doc["chat"]["503"],
                                            "chat_other": doc["chat"]["other"],
                                            "rejected_p99_ms": doc["rejected"]["p99_ms"]})
                            else:
                                for line in out.splitlines():
                                    if line.startswith("login p99 ms:"):
                                        rec["login_p99_ms"] = float(line.split(":")[1])
                                    elif line.startswith("chat 200:"):
                                        parts = line.replace(":", "").split()
                                        rec["chat_200"] = int(parts[2])
                                        rec["chat_503"] = int(parts[4])
                            result["rounds"].append(rec)
                            print("%-22s %-4s run %d round %d: login p99 %6s ms  chats 200/503 %s/%s"
                                  "  client cpu %5.0f ms  app cpu %5.0f ms"
                                  % (app.label, client, run, rnd, rec.get("login_p99_ms"),
                                     rec.get("chat_200"), rec.get("chat_503"), client_cpu, app_cpu),
                                  flush=True)
                            time.sleep(args.settle_ms / 1000.0)
                    finally:
                        stop(proc)
                        log.close()
    finally:
        stop(upstream)
        upstream_log.close()
    result["loadavg_after"] = loadavg()
    result["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    summary = []
    for client in chosen:
        for app in apps:
            for phase in ["fresh", "warm"]:
                rs = [r for r in result["rounds"]
                      if r["app"] == app.label and r["client"] == client and r["phase"] == phase]
                if not rs:
                    continue
                summary.append({
                    "app": app.label, "client": client, "phase": phase,
                    "login_p99_ms": summarize([r.get("login_p99_ms") for r in rs]),
                    "login_p50_ms": summarize([r.get("login_p50_ms") for r in rs]),
                    "client_cpu_ms": summarize([r["client_cpu_ms"] for r in rs]),
                    "app_cpu_ms": summarize([r["app_cpu_ms"] for r in rs]),
                    "app_threads": summarize([r["app_threads"] for r in rs]),
                    "chat_200": summarize([r.get("chat_200") for r in rs]),
                    "chat_503": summarize([r.get("chat_503") for r in rs]),
                })
    result["summary"] = summary
    with open(os.path.join(args.out, "headline.json"), "w") as f:
        json.dump(result, f, indent=1)
    table = markdown_table(result, [a.label for a in apps], chosen)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(table)
    print()
    print(table, end="")


def markdown_table(result, labels, clients):
    """client × fresh/warm × app: login p99 median and every run's value, the ratio to the Node
    app's median, the client's CPU, the load; then what our app's warm-up cost at start-up."""
    rounds = result["rounds"]
    lines = ["# login p99, client × fresh/warm × app", "",
             "Load average (1, 5, 15 min) %s before, %s after; %s cores; %s to %s. %s" % (
                 result["loadavg_before"], result["loadavg_after"], result["machine"]["nproc"],
                 result["started"], result["finished"], result["config"]["note"]), "",
             "| client | phase | app | login p99 median ms | ÷ Node | every run, ms | client CPU ms"
             " (median) | app CPU ms (median) | 1-min load at the rounds |",
             "|---|---|---|---:|---:|---|---:|---:|---|"]
    for client in clients:
        for phase in ["fresh", "warm"]:
            node = [r.get("login_p99_ms") for r in rounds if (r["app"], r["client"], r["phase"])
                    == (NODE_APP, client, phase) and r.get("login_p99_ms") is not None]
            for label in labels:
                rs = [r for r in rounds
                      if (r["app"], r["client"], r["phase"]) == (label, client, phase)]
                p99 = [r.get("login_p99_ms") for r in rs if r.get("login_p99_ms") is not None]
                if not p99:
                    continue
                med = statistics.median(p99)
                ratio = ("%.2f×" % (med / statistics.median(node))) if node else "–"
                loads = [float(r["loadavg"].split()[0]) for r in rs]
                lines.append("| %s | %s (n=%d) | %s | %.1f | %s | %s | %.0f | %.0f | %.1f–%.1f |" % (
                    client, phase, len(p99), label, med, ratio,
                    ", ".join("%g" % v for v in p99),
                    statistics.median(r["client_cpu_ms"] for r in rs),
                    statistics.median(r["app_cpu_ms"] for r in rs), min(loads), max(loads)))
    lines += ["", "Start-up: time from the process's start to its port accepting (warm-up included),"
              " and what the app printed about its warm-up.", "",
              "| app | client | run | time to listen ms | warm-up |", "|---|---|---:|---:|---|"]
    for r in rounds:
        if r["round"] == 0:
            w = r.get("warm_up")
            lines.append("| %s | %s | %d | %.0f | %s |" % (
                r["app"], r["client"], r["run"], r["listen_ms"],
                ("%d bursts, %d requests, %.0f ms" % (w["rounds"], w["requests"], w["ms"]))
                if w else "none"))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
