#!/usr/bin/env python3
"""footprint.py: the peak memory and the CPU time of a command and every process it starts.

Usage: scripts/footprint.py [--every 0.3] [--jsonl FILE] -- COMMAND [ARG...]

Every --every seconds it sums the proportional set size (Pss, /proc/PID/smaps_rollup) over
the command's process tree (its descendants by parent PID), and counts the tree's Chromium
processes. At the end it prints one JSON line: peak_pss_mib, the number of Chromium processes at
that moment and at most, cpu_s (user + system of the whole tree, from wait4's rusage, which
counts every reaped descendant), wall_s and the command's exit status; --jsonl also writes
every sample. The figures behind experiment.FootprintMiB (BENCHMARKS.md, "Footprint") were
taken with it. Linux only; run as the user who runs the command (root for pltlab's links).
"""
import json, os, subprocess, sys, time


def tree(root):
    kids = {}
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % d) as f:
                s = f.read()
            ppid = int(s[s.rindex(')') + 2:].split()[1])
            kids.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError):
            pass
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def pss_kib(pid):
    try:
        with open('/proc/%d/smaps_rollup' % pid) as f:
            for line in f:
                if line.startswith('Pss:'):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def comm(pid):
    try:
        with open('/proc/%d/comm' % pid) as f:
            return f.read().strip()
    except OSError:
        return ''


def main():
    args = sys.argv[1:]
    every, jsonl = 0.3, None
    while args and args[0] != '--':
        if args[0] == '--every' and len(args) > 1:
            every = float(args[1]); args = args[2:]
        elif args[0] == '--jsonl' and len(args) > 1:
            jsonl = open(args[1], 'w'); args = args[2:]
        else:
            print('footprint.py: bad argument %r: accepted --every SECONDS, --jsonl FILE, then -- COMMAND' % args[0], file=sys.stderr)
            return 2
    if len(args) < 2:
        print('footprint.py: no command: accepted -- COMMAND [ARG...]', file=sys.stderr)
        return 2
    t0 = time.monotonic()
    p = subprocess.Popen(args[1:])
    peak, at_peak, most = 0, 0, 0
    while p.poll() is None:
        pids = tree(p.pid)
        kib = sum(pss_kib(x) for x in pids)
        chrome = sum(1 for x in pids if comm(x).startswith('chrom'))
        most = max(most, chrome)
        if kib > peak:
            peak, at_peak = kib, chrome
        if jsonl:
            jsonl.write(json.dumps({'t_s': round(time.monotonic() - t0, 2), 'pss_mib': round(kib / 1024, 1), 'chromium_procs': chrome}) + '\n')
        time.sleep(every)
    # p.poll reaped it; the rusage of the reaped tree is in RUSAGE_CHILDREN.
    import resource
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({'peak_pss_mib': round(peak / 1024, 1), 'chromium_procs_at_peak': at_peak, 'chromium_procs_max': most,
                      'cpu_s': round(ru.ru_utime + ru.ru_stime, 1), 'wall_s': round(time.monotonic() - t0, 1), 'exit': p.returncode}))
    return p.returncode


if __name__ == '__main__':
    sys.exit(main())
