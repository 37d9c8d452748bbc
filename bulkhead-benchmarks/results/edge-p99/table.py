"""python3 table.py DIR...: per run, case, variant and round, p99 and the JIT compiler threads' CPU
during the measured seconds, the figures the p99 gap below the limit turned on."""
import json
import sys

for d in sys.argv[1:]:
    m = json.load(open(d + "/edge-machine.json"))
    print("## %s (case_warmup %s; load %s before, %s after)" % (
        d, m.get("case_warmup", 0), m["load_before"], m.get("load_after", "?")))
    print("| case | variant | round | answers/s | p50 ms | p99 ms | JIT CPU s | server CPU s | warm-up passes | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = [json.loads(l) for l in open(d + "/edge-runs.jsonl")]
    rows.sort(key=lambda r: (r["case"], r["variant"], r["round"]))
    for r in rows:
        a = r["all"]
        print("| %s | %s | %s | %.0f | %.3f | %.3f | %s | %s | %s | %s |" % (
            r["case"], r["variant"], r["round"], a["per_s"], a["p50_ms"], a["p99_ms"],
            r["server_jit_cpu_s"], r["server_cpu_s"], r.get("case_warmup_passes", "-"), r["load"]))
    print()
