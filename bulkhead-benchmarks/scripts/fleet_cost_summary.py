# Summarises fleet-cost-rounds' output: python3 fleet_cost_summary.py DIR LABEL,LABEL,...
# Each label's throughput (its three JVMs summed) as a share of the same round's `local`, a label
# ending in -call of `local-call`; the median and each round's share, and p50/p99 over its JVMs.
# A label whose FleetCost measured local and fleet in one JVM (an older build) counts its fleet rows.
import json,glob,sys,statistics,re
def pct(x): return '%.1f'%x if x>=1 else '%.2g'%x
d=sys.argv[1]
subs=sys.argv[2].split(',')
rows={}
for f in glob.glob(d+'/round*-jvm*.json'):
    m=re.search(r'round(\d+)-(.+)-jvm(\d)\.json',f)
    r,s,j=int(m[1]),m[2],int(m[3])
    try: o=json.load(open(f))
    except Exception as e: print('bad',f,e); continue
    found={x['subject'] for x in o['results']}
    for x in o['results']:
        if len(found)>1 and x['subject']!='fleet':
            continue # a FleetCost that measured both subjects in one JVM: its fleet rows only
        k=(s,x['threads'],r)
        rows.setdefault(k,{'ops':0,'p50':[],'p99':[]})
        rows[k]['ops']+=x['ops_per_s']; rows[k]['p50'].append(x['p50_us']); rows[k]['p99'].append(x['p99_us'])
rounds=sorted({k[2] for k in rows})
for t in (1,4):
    print('threads',t)
    for s in subs:
        if not any((s,t,r) in rows for r in rounds):
            continue
        shares=[rows[(s,t,r)]['ops']/rows[('local-call' if s.endswith('-call') else 'local',t,r)]['ops']*100 for r in rounds if (s,t,r) in rows]
        ops=[rows[(s,t,r)]['ops'] for r in rounds if (s,t,r) in rows]
        p50=[v for r in rounds if (s,t,r) in rows for v in rows[(s,t,r)]['p50']]; p99=[v for r in rounds if (s,t,r) in rows for v in rows[(s,t,r)]['p99']]
        print(f"  {s:24s} ops/s median {statistics.median(ops):>12,.0f}  share median {pct(statistics.median(shares)):>6s}% per round {[pct(x) for x in shares]}  p50 {min(p50)}-{max(p50)} p99 {min(p99)}-{max(p99)}")
