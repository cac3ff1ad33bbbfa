#!/usr/bin/env bash
# The measurements of docs/emulators.md through one shaper (as root):
#   scripts/emulators.sh emu OUTDIR                     pltlab's userspace emulator, on the host
#   go run ./internal/vmtest/vmrun -work OUTDIR -- \
#     sh $PWD/scripts/emulators.sh netem /run/vmtest    tc netem, in a qemu guest
# For each link: `pltlab link check --quick --json` (idle RTT, TCP goodput, RTT under load,
# loss and burst lengths, jitter, AQM standing queue); for each AQM the same offered load,
# AQM_RUNS (default 3) runs of one 10 s iperf3 TCP flow, cubic on both ends (-C cubic: the
# host's default is bbr), downloading through rate=3mbit,rtt=50ms,aqm=A with pings every 0.2 s,
# and the queue's counters: pltlab shell --counters (the emulator's drops and queueing delay)
# and tc -s (the kernel qdiscs' drops).
# Environment: CHECKS=0 skips the link checks; AQMS lists the queues (default codel fq_codel
# pie, and cake with netem); with netem, AQMS may name A-htb (codel-htb, fq_codel-htb,
# pie-htb): the host end's tbf is replaced by an htb class at the rate with the AQM as its leaf,
# so the AQM is dequeued when the packet is sent, not when the tbf peeks at it.
set -u
shaper=$1 out=$2
P=${PLTLAB:-$(cd "$(dirname "$0")/.." && pwd)/bin/pltlab}
mkdir -p "$out"
echo "emulators: shaper=$shaper, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r), cc $(sysctl -n net.ipv4.tcp_congestion_control)" | tee "$out/env.txt"
if [ "${CHECKS:-1}" != 0 ]; then
	i=0
	for l in carlucci2015 "rate=10mbit,rtt=40ms,loss=2%" "rate=3mbit,rtt=50ms,loss=2%,burst=4" "rate=3mbit,rtt=50ms,jitter=5ms" \
		"rate=3mbit,rtt=50ms,delayvar=10ms" "rate=3mbit,rtt=50ms,aqm=codel" "rate=3mbit,rtt=50ms,aqm=fq_codel" "rate=3mbit,rtt=50ms,aqm=pie"; do
		i=$((i + 1))
		echo "$l,shaper=$shaper" >"$out/check-$i.spec"
		"$P" link check --link "$l,shaper=$shaper" --quick --json >"$out/check-$i.json" 2>"$out/check-$i.err"
		echo "emulators: $l,shaper=$shaper: link check exit $?"
	done
fi
default="codel fq_codel pie"
[ "$shaper" = netem ] && default="$default cake"
# One iperf3 server per run (-1), each on its own port from IPERF_PORT (default 5271, not
# iperf3's 5201): a server whose last client's link was torn down with data in flight answers
# the next client "busy" for minutes.
port=${IPERF_PORT:-5271}
for a in ${AQMS:-$default}; do
	q=${a%-htb}
	swap=:
	if [ "$q" != "$a" ]; then # the host end (down direction): htb in place of the tbf
		swap="H=\$(nsenter --net=/proc/1/ns/net tc qdisc show | awk '/^qdisc netem/ && \$5 ~ /^pltlab/ && \$5 != \"pltlab0\" {print \$5; exit}')
		nsenter --net=/proc/1/ns/net sh -c \"modprobe sch_htb && tc qdisc del dev \$H parent 1:1 &&
			tc qdisc add dev \$H parent 1:1 handle 10: htb default 1 &&
			tc class add dev \$H parent 10: classid 10:1 htb rate 3000000bit ceil 3000000bit burst 3000 cburst 3000 &&
			tc qdisc add dev \$H parent 10:1 handle 20: $q limit 1000\" || exit 9"
	fi
	for r in $(seq 1 "${AQM_RUNS:-3}"); do
		port=$((port + 1))
		iperf3 -s -1 -D -p "$port" -I "$out/iperf3-$port.pid"
		sleep 1
		"$P" shell --link "rate=3mbit,rtt=50ms,aqm=$q,shaper=$shaper" --counters "$out/counters-$a-$r.json" -- sh -c \
			"$swap
			 ping -q -i 0.2 -c 50 \$PLTLAB_HOST_ADDR >$out/ping-$a-$r.txt & iperf3 -c \$PLTLAB_HOST_ADDR -p $port -R -C cubic -t 10 -J >$out/iperf-$a-$r.json; wait
			 { tc -s qdisc show; nsenter --net=/proc/1/ns/net tc -s qdisc show; } >$out/tc-$a-$r.txt 2>&1"
		echo "emulators: aqm=$a,shaper=$shaper run $r: exit $?"
	done
done
# A one-off server whose client's link was torn down waits on forever (and would keep any lock
# this script runs under): end those still running.
for f in "$out"/iperf3-*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; rm -f "$f"; done
echo "emulators: done, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/env.txt"
