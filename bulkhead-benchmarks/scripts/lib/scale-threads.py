#!/usr/bin/env python3
"""CPU seconds (user + system) of a running JVM by thread group, from /proc/PID/task: one JSON object.

    scale-threads.py PID

Groups: jit (C1/C2 compiler threads), gc (GC workers, G1 refinement and service, the VM thread),
jetty (the app's Jetty pool: acceptor, selector, handlers), upstream (the upstream client's executor,
selector and deadline timer), other; plus the process's total and its live threads. A thread that
has ended is in the total only, so the groups may add up to less.
"""
import json
import os
import sys

GROUPS = [("jit", ("C1 CompilerThre", "C2 CompilerThre")),
          ("gc", ("GC Thread", "G1 ", "VM Thread")),
          ("jetty", ("app-bulkhead-", "app-shared-")),
          ("upstream", ("upstream-", "HttpClient-", "app-shared-client-"))]


def main():
    pid = int(sys.argv[1])
    tick = os.sysconf("SC_CLK_TCK")
    out = {g: 0.0 for g, _ in GROUPS}
    out["other"] = 0.0
    threads = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                name = f.read().strip()
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        threads += 1
        cpu = (int(fields[11]) + int(fields[12])) / tick
        group = next((g for g, prefixes in GROUPS if name.startswith(prefixes)), "other")
        out[group] += cpu
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    out["total"] = (int(fields[11]) + int(fields[12])) / tick
    out["threads"] = threads
    print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in out.items()}))


if __name__ == "__main__":
    main()
