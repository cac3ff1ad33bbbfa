#!/usr/bin/env bash
# The measurements of docs/emulators.md through one shaper (as root):
#   scripts/emulators.sh emu OUTDIR                     pltlab's userspace emulator, on the host
#   go run ./internal/vmtest/vmrun -work OUTDIR -- \
#     sh $PWD/scripts/emulators.sh netem /run/vmtest    tc netem, in a qemu guest
# For each link: `pltlab link check --quick --json` (idle RTT, TCP goodput, RTT under load,
# loss and burst lengths, AQM standing queue); for each AQM the same offered load, one 10 s
# iperf3 TCP flow (cubic) downloading through rate=3mbit,rtt=50ms,aqm=A with pings every 0.2 s,
# and the queue's counters: pltlab shell --counters (the emulator's drops and queueing delay)
# and tc -s (the kernel qdiscs' drops and CoDel's/PIE's own delay figures).
set -u
shaper=$1 out=$2
P=${PLTLAB:-$(cd "$(dirname "$0")/.." && pwd)/bin/pltlab}
mkdir -p "$out"
echo "emulators: shaper=$shaper, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)" | tee "$out/env.txt"
i=0
for l in carlucci2015 "rate=10mbit,rtt=40ms,loss=2%" "rate=3mbit,rtt=50ms,loss=2%,burst=4" "rate=3mbit,rtt=50ms,jitter=5ms" \
	"rate=3mbit,rtt=50ms,delayvar=10ms" "rate=3mbit,rtt=50ms,aqm=codel" "rate=3mbit,rtt=50ms,aqm=fq_codel" "rate=3mbit,rtt=50ms,aqm=pie"; do
	i=$((i + 1))
	echo "$l,shaper=$shaper" >"$out/check-$i.spec"
	"$P" link check --link "$l,shaper=$shaper" --quick --json >"$out/check-$i.json" 2>"$out/check-$i.err"
	echo "emulators: $l,shaper=$shaper: link check exit $?"
done
iperf3 -s -D -I "$out/iperf3.pid"
sleep 1
for a in codel fq_codel pie; do
	"$P" shell --link "rate=3mbit,rtt=50ms,aqm=$a,shaper=$shaper" --counters "$out/counters-$a.json" -- sh -c \
		"ping -q -i 0.2 -c 50 \$PLTLAB_HOST_ADDR >$out/ping-$a.txt & iperf3 -c \$PLTLAB_HOST_ADDR -R -t 10 -J >$out/iperf-$a.json; wait
		 { tc -s qdisc show; nsenter --net=/proc/1/ns/net tc -s qdisc show; } >$out/tc-$a.txt 2>&1"
	echo "emulators: aqm=$a,shaper=$shaper: exit $?"
done
kill "$(cat "$out/iperf3.pid")"
echo "emulators: done, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/env.txt"
