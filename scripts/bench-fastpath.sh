#!/bin/sh
# bench-fastpath.sh [RUNS] [SECONDS]: the emulator's fast path (A) and plain path (B,
# PLTLAB_EMU_OFFLOAD=off) side by side in one run per link, paired A B A B so that a change in
# the machine's load hits both paths alike, one iperf3 stream each (scripts/iperf-link.sh).
# Prints per run: goodput_mbps retransmits pltlab_cpu_s cpu_s_per_gbit load1 path. Needs root,
# iperf3, python3 and bin/pltlab (make build).
set -eu
RUNS=${1:-3} T=${2:-10}
PORT=$((30000 + $$ % 20000))
DIR=$(mktemp -d)
iperf3 -s -p "$PORT" -D --pidfile "$DIR/iperf3.pid"
trap 'kill "$(cat "$DIR/iperf3.pid")" 2>/dev/null; rm -rf "$DIR"' EXIT
sleep 0.5
for LINK in rate=1gbit,rtt=50ms rate=10gbit,rtt=1ms rate=1gbit,rtt=0ms; do
	echo "== $LINK ($(uptime | sed 's/.*load/load/'))"
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		sh scripts/iperf-link.sh "$LINK" "$T" "$PORT" "$DIR/runs"
		PLTLAB_EMU_OFFLOAD=off sh scripts/iperf-link.sh "$LINK" "$T" "$PORT" "$DIR/runs"
		i=$((i + 1))
	done
	cat "$DIR/runs"
	rm -f "$DIR/runs"
done
