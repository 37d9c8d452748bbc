"""Profiles our app in the headline experiment: where a login's time goes, fresh and warm.

Starts the Node upstream (the article's, as headline.py does) and our app as it starts by default
(warm-up before it listens, the small-machine flags), then runs the article's load.ts against it
--rounds times. Each round is recorded by a JFR recording of its own, started with jcmd just before
the round and dumped just after it, with the execution sampler at 1 ms (JFR's `profile` settings
otherwise): round 0 is the fresh burst, the others warm. For each recording it writes the views of
`jfr view` (JDK 21 or later reads a JDK 17 recording) that answer the issue's questions: CPU by
thread, hot methods, allocation by class and by site, GC pauses, safepoints, JIT compilations. Also
the per-thread CPU of each round from /proc, and the client's CPU.

  python3 bulkhead-benchmarks/scripts/lib/headline_profile.py --jar bulkhead-demo/target/bulkhead-demo.jar \
      --out bulkhead-benchmarks/results/<date>-headline-profile --app-flags="..." [--rounds 6]
"""
import argparse
import json
import os
import subprocess
import time

import headline
import headline_node

VIEWS = ["thread-cpu-load", "hot-methods", "allocation-by-class", "allocation-by-site",
         "gc-pauses", "safepoints", "compiler-statistics", "longest-compilations", "cpu-load"]


def jfr_tool():
    """A `jfr` that has `view` (JDK 21 or later), the newest under /usr/lib/jvm."""
    for candidate in sorted(os.listdir("/usr/lib/jvm"), reverse=True):
        path = os.path.join("/usr/lib/jvm", candidate, "bin", "jfr")
        if os.path.exists(path):
            usage = subprocess.run([path, "help"], capture_output=True, text=True)
            if "jfr view" in usage.stdout + usage.stderr:
                return path
    raise SystemExit("headline_profile: no `jfr` with `view` (JDK 21 or later) under /usr/lib/jvm")


def jcmd(pid, *args):
    subprocess.run(["jcmd", str(pid)] + list(args), check=True, capture_output=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jar", required=True)
    ap.add_argument("--out", required=True, help="the views, rounds.json and the app's log")
    ap.add_argument("--work", default=os.path.join(headline.ROOT, "bulkhead-benchmarks", "target",
                                                   "headline-profile"),
                    help="the Node files (never committed) and the recordings")
    ap.add_argument("--app-flags", default="")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--delay-ms", type=int, default=3000)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    jfr = jfr_tool()
    app_port, upstream_port = headline.free_port(), headline.free_port()
    node = headline_node.extract(headline_node.find_article(headline.ROOT),
                                 os.path.join(args.work, "node"), app_port, upstream_port)
    upstream = subprocess.Popen(["node", node["upstream"]], stdout=subprocess.DEVNULL,
                                stderr=subprocess.STDOUT, env=dict(os.environ, DELAY_MS=str(args.delay_ms)))
    rounds = []
    try:
        headline.wait_listening(upstream_port, upstream, "Node upstream")
        app = headline.java_app(headline.OUR_APP, args.jar, args.app_flags.split())
        with open(os.path.join(args.out, "app.log"), "w") as log:
            proc = app.start(app_port, upstream_port, log)
            try:
                headline.wait_listening(app_port, proc, "our app")
                time.sleep(1)
                child = headline.ChildCpu()
                for rnd in range(args.rounds):
                    name = "round-%d-%s" % (rnd, "fresh" if rnd == 0 else "warm")
                    path = os.path.abspath(os.path.join(args.work, name + ".jfr"))
                    # The execution sampler at 1 ms: a burst is tens of milliseconds.
                    jcmd(proc.pid, "JFR.start", "name=" + name, "settings=profile",
                         "jdk.ExecutionSample#period=1ms")
                    time.sleep(0.5)
                    before = headline.thread_cpu_ms(proc.pid)
                    load_before = headline.loadavg()
                    child.delta()
                    out, wall = headline.run_client(["node", node["load"]])
                    client_cpu = child.delta()
                    per_thread = headline.minus(headline.thread_cpu_ms(proc.pid), before)
                    jcmd(proc.pid, "JFR.stop", "name=" + name, "filename=" + path)
                    p99 = [float(l.split(":")[1]) for l in out.splitlines() if l.startswith("login p99 ms:")]
                    rounds.append({"round": rnd, "login_p99_ms": p99[0] if p99 else None,
                                   "client_cpu_ms": round(client_cpu, 1), "app_thread_cpu_ms": per_thread,
                                   "loadavg": load_before})
                    print("%s: login p99 %s ms, client CPU %.0f ms, load %s"
                          % (name, rounds[-1]["login_p99_ms"], client_cpu, load_before), flush=True)
                    with open(os.path.join(args.out, name + ".txt"), "w") as f:
                        for view in VIEWS:
                            r = subprocess.run([jfr, "view", "--width", "160", view, path],
                                               capture_output=True, text=True)
                            f.write("== jfr view %s\n%s%s\n" % (view, r.stdout, r.stderr))
                    time.sleep(1)
            finally:
                headline.stop(proc)
    finally:
        headline.stop(upstream)
    with open(os.path.join(args.out, "rounds.json"), "w") as f:
        json.dump({"app_flags": args.app_flags, "rounds": rounds}, f, indent=1)


if __name__ == "__main__":
    main()
