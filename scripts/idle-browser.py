#!/usr/bin/env python3
"""idle-browser.py: what wakes an idle headless Chromium started with pltlab's flags.

Usage: scripts/idle-browser.py [--seconds 20] [--settle 5] [--extra FLAG]... CHROMIUM

It starts CHROMIUM with browser.DefaultFlags (read from browser/options.go, so the figures are
of the flags pltlab uses), --no-sandbox as root, a fresh profile and about:blank, lets it settle,
then for --seconds counts per thread (grouped by process type and thread name) the wake-ups
(voluntary context switches, /proc/PID/task/TID/status) and the CPU time, and prints one JSON
line: cpu_pct of one core, wakeups_per_s, and the threads that woke most. --extra adds a flag
(for a before/after: BENCHMARKS.md, "Idle browsers").
"""
import json, os, re, shutil, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))


def default_flags():
    src = open(os.path.join(HERE, '..', 'browser', 'options.go')).read()
    block = src[src.index('var DefaultFlags = []string{'):]
    block = block[:block.index('\n}')]
    return re.findall(r'"(--[^"]+)"', block)


def tree(root):
    kids = {}
    for d in os.listdir('/proc'):
        if d.isdigit():
            try:
                s = open('/proc/%s/stat' % d).read()
                kids.setdefault(int(s[s.rindex(')') + 2:].split()[1]), []).append(int(d))
            except (OSError, ValueError):
                pass
    out, todo = [], [root]
    while todo:
        p = todo.pop(); out.append(p); todo.extend(kids.get(p, []))
    return out


def ptype(pid):
    try:
        cmd = open('/proc/%d/cmdline' % pid).read().replace('\0', ' ').split()  # Chromium rewrites its argv into one string
    except OSError:
        return '?'
    for a in cmd:
        if a.startswith('--type='):
            t = a[7:]
            for b in cmd:
                if b.startswith('--utility-sub-type='):
                    t += ':' + b.split('.')[-1]
            return t
    return 'browser'


def sample(root):
    out = {}
    tck = os.sysconf('SC_CLK_TCK')
    for pid in tree(root):
        t = ptype(pid)
        try:
            tids = os.listdir('/proc/%d/task' % pid)
        except OSError:
            continue
        for tid in tids:
            try:
                st = open('/proc/%d/task/%s/stat' % (pid, tid)).read()
                f = st[st.rindex(')') + 2:].split()
                name = st[st.index('(') + 1:st.rindex(')')]
                vol = 0
                for line in open('/proc/%d/task/%s/status' % (pid, tid)):
                    if line.startswith('voluntary_ctxt_switches'):
                        vol = int(line.split()[1])
            except (OSError, ValueError):
                continue
            out[(pid, tid)] = (t, name, vol, (int(f[11]) + int(f[12])) / tck)
    return out


def main():
    a = sys.argv[1:]
    secs, settle, extra = 20.0, 5.0, []
    while len(a) > 1 and a[0].startswith('--'):
        if a[0] == '--seconds':
            secs = float(a[1])
        elif a[0] == '--settle':
            settle = float(a[1])
        elif a[0] == '--extra':
            extra.append(a[1])
        else:
            print('idle-browser.py: bad argument %r: accepted --seconds S, --settle S, --extra FLAG, then CHROMIUM' % a[0], file=sys.stderr)
            return 2
        a = a[2:]
    if len(a) != 1:
        print('idle-browser.py: accepted one CHROMIUM executable', file=sys.stderr)
        return 2
    prof = tempfile.mkdtemp(prefix='pltlab-idle-')
    flags = default_flags() + extra + ['--user-data-dir=' + prof, '--remote-debugging-port=0']
    if os.getuid() == 0:
        flags.append('--no-sandbox')
    p = subprocess.Popen([a[0]] + flags + ['about:blank'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(settle)
        s0, t0 = sample(p.pid), time.monotonic()
        time.sleep(secs)
        s1, dt = sample(p.pid), time.monotonic() - t0
    finally:
        p.terminate(); p.wait(); shutil.rmtree(prof, ignore_errors=True)
    by = {}
    cpu = wake = 0.0
    for k, (t, name, vol, c) in s1.items():
        v0, c0 = (s0[k][2], s0[k][3]) if k in s0 else (0, 0.0)
        dw, dc = vol - v0, c - c0
        wake += dw; cpu += dc
        g = by.setdefault(t + '/' + name, [0, 0.0])
        g[0] += dw; g[1] += dc
    top = sorted(by.items(), key=lambda kv: -kv[1][0])[:10]
    print(json.dumps({'extra': extra, 'seconds': round(dt, 1), 'cpu_pct': round(100 * cpu / dt, 2), 'wakeups_per_s': round(wake / dt, 1),
                      'processes': len({k[0] for k in s1}), 'threads': len(s1),
                      'top': [{'thread': n, 'wakeups_per_s': round(w / dt, 1), 'cpu_pct': round(100 * c / dt, 2)} for n, (w, c) in top]}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
