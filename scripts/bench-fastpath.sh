#!/bin/sh
# bench-fastpath.sh [RUNS] [SECONDS]: the emulator's fast path (A) and plain path (B,
# PLTLAB_EMU_OFFLOAD=off) side by side in one run per link, paired A B A B so that a change in
# the machine's load hits both paths alike, one iperf3 stream each (scripts/iperf-link.sh).
# With OLD=PATH (another pltlab binary, e.g. one built from an earlier commit) its fast path
# runs as a third arm of every pair (A B C A B C), labelled "old".
# Prints per run: goodput_mbps retransmits pltlab_cpu_s cpu_s_per_gbit fwd_cpu_s_per_gbit load1
# path steady_mbps (after the first 2 s: slow start left out), then per link and path the
# medians of goodput, steady goodput, CPU-s per Gbit of the pltlab process and
# of its forwarder threads, and the load range; last the wall time. Needs root, iperf3, python3
# and bin/pltlab (make build). `bench-fastpath.sh 3 10` takes about 4 minutes.
set -eu
RUNS=${1:-3} T=${2:-10}
OLD=${OLD:-}
PORT=$((30000 + $$ % 20000))
DIR=$(mktemp -d)
START=$(date +%s)
iperf3 -s -p "$PORT" -D --pidfile "$DIR/iperf3.pid"
trap 'kill "$(cat "$DIR/iperf3.pid")" 2>/dev/null; rm -rf "$DIR"' EXIT
sleep 0.5
echo "# $(date -u +%FT%TZ) $(bin/pltlab --version 2>/dev/null || true); columns: goodput_mbps retransmits pltlab_cpu_s cpu_s_per_gbit fwd_cpu_s_per_gbit load1 path steady_mbps"
for LINK in rate=1gbit,rtt=50ms rate=10gbit,rtt=1ms rate=1gbit,rtt=0ms; do
	echo "== $LINK ($(uptime | sed 's/.*load/load/'))"
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		sh scripts/iperf-link.sh "$LINK" "$T" "$PORT" "$DIR/runs"
		PLTLAB_EMU_OFFLOAD=off sh scripts/iperf-link.sh "$LINK" "$T" "$PORT" "$DIR/runs"
		if [ -n "$OLD" ]; then
			PLTLAB=$OLD LABEL=old sh scripts/iperf-link.sh "$LINK" "$T" "$PORT" "$DIR/runs"
		fi
		i=$((i + 1))
	done
	cat "$DIR/runs"
	python3 - "$DIR/runs" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault(f[6], []).append(f)
for path, rs in rows.items():
    med = lambda i: statistics.median(float(r[i]) for r in rs)
    fwd = [float(r[4]) for r in rs if r[4] != "-"]
    loads = [float(r[5]) for r in rs]
    st = [float(r[7]) for r in rs if len(r) > 7 and r[7] != "-"]
    steady = "%.1f" % statistics.median(st) if st else "-"
    print("median %-7s goodput %7.1f Mbit/s  steady %s Mbit/s  pltlab %.3f CPU-s/Gbit  forwarders %s CPU-s/Gbit  load %.1f-%.1f  (%d runs)" % (
        path, med(0), steady, med(3), "%.3f" % statistics.median(fwd) if fwd else "-", min(loads), max(loads), len(rs)))
PY
	rm -f "$DIR/runs"
done
echo "# wall $(( $(date +%s) - START )) s"
