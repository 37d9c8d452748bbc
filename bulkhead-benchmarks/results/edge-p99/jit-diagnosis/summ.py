import gzip, os, re, sys
# summ.py DIR: per measured case of a diag.sh run, the JIT compilations, GC pauses and safepoints
# inside the case's window, and the CPU of the server's threads other than Jetty's pool.
d = sys.argv[1]
marks = {}
for l in open(os.path.join(d, 'marks')):
    k, v = l.split(); marks[k] = float(v)
def windows():
    for c in ('below', 'below-5ms'):
        yield c, marks[c + '-start'], marks[c + '-end']
comp = []
out = os.path.join(d, 'server.out')
for l in (open(out) if os.path.exists(out) else gzip.open(os.path.join(d, 'print-compilation.log.gz'), 'rt')):
    m = re.match(r'\s*(\d+)\s+\d+\s+[%sbn! ]*\s(\d)\s+(\S+)', l)
    if m: comp.append((int(m.group(1)) / 1000, int(m.group(2)), m.group(3), 'made not entrant' in l))
pauses = []
for l in open(os.path.join(d, 'gc.log')):
    m = re.match(r'\[(\d+\.\d+)s\].*GC\(\d+\) Pause (\S+).* (\d+\.\d+)ms', l)
    if m: pauses.append((float(m.group(1)), m.group(2), float(m.group(3))))
sp = []
for l in open(os.path.join(d, 'safepoint.log')):
    m = re.match(r'\[(\d+\.\d+)s\] Safepoint "(\w+)".*Total: (\d+) ns', l)
    if m: sp.append((float(m.group(1)), m.group(2), int(m.group(3)) / 1e6))
for c, a, b in windows():
    cw = [x for x in comp if a <= x[0] <= b]
    c2 = [x for x in cw if x[1] == 4 and not x[3]]
    pw = [x for x in pauses if a <= x[0] <= b]
    sw = [x for x in sp if a <= x[0] <= b]
    cpu = open(os.path.join(d, 'threads-%s.cpu' % c)).read().split('\n')
    h = open(os.path.join(d, 'h2load-%s.out' % c)).read()
    rps = re.search(r'finished in [\d.]+s, ([\d.]+) req/s', h).group(1)
    print('%-9s req/s %s | compiles %d (C2 %d, deopt %d) | GC pauses %d total %.1f ms max %.1f | safepoints %d total %.1f ms max %.1f' % (
        c, rps, len([x for x in cw if not x[3]]), len(c2), len([x for x in cw if x[3]]), len(pw), sum(x[2] for x in pw), max([x[2] for x in pw] or [0]),
        len(sw), sum(x[2] for x in sw), max([x[2] for x in sw] or [0])))
    print('   C2 in window:', ' '.join(sorted(set(x[2] for x in c2)))[:600])
    print('   thread cpu:', '; '.join(x.strip() for x in cpu if x.strip() and not x.startswith('edge-')))
