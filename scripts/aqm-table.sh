#!/usr/bin/env bash
# Summarizes the AQM runs of scripts/emulators.sh: one line per OUTDIR and queue with the
# median and range over its runs of the goodput (iperf3, Mbit/s), the packets through the
# bottleneck, the AQM's drops (the emulator's counters, or with shaper=netem the kernel qdisc's
# "dropped" on the host end; a TUN device's default qdisc is not the AQM), the emulator's median queueing delay, the ping RTT under load (mean) and the
# congestion control iperf3 reports for the sender.
#   scripts/aqm-table.sh OUTDIR...
set -eu
stats() { # median [min..max] of the numbers on stdin
	sort -g | awk '{v[NR]=$1} END {if (NR==0) {print "-"; exit}; m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%g [%g..%g]", m, v[1], v[NR]}'
}
printf '| run | queue | runs | cc | goodput Mbit/s | packets | AQM drops | queue delay p50 ms | ping mean ms |\n|---|---|---|---|---|---|---|---|---|\n'
for d in "$@"; do
	for a in $(ls "$d" | sed -n 's/^iperf-\(.*\)-[0-9]*\.json$/\1/p' | sort -u); do
		g= p= dr= qd= pm= cc= n=0
		for f in "$d"/iperf-"$a"-[0-9]*.json; do
			r=${f##*-}; r=${r%.json}
			jq -e .end.sum_received.bits_per_second "$f" >/dev/null 2>&1 || continue
			n=$((n + 1))
			g="$g $(jq '.end.sum_received.bits_per_second/1e6' "$f")"
			cc=$(jq -r .end.sender_tcp_congestion "$f")
			c="$d/counters-$a-$r.json"
			q=${a%-htb}
			kd= kp=
			grep -q 'shaper=netem' "$d/env.txt" 2>/dev/null && kd=$(awk -v q="$q" '$1=="qdisc" && $2==q && $5 ~ /^pltlab/ && $5 != "pltlab0" {f=1; next} f && /dropped/ {sub(/.*dropped /,""); sub(/,.*/,""); print; exit}' "$d/tc-$a-$r.txt" 2>/dev/null || true)
			[ -n "$kd" ] && kp=$(awk -v q="$q" '$1=="qdisc" && $2==q && $5 ~ /^pltlab/ && $5 != "pltlab0" {f=1; next} f && /Sent/ {print $4; exit}' "$d/tc-$a-$r.txt" 2>/dev/null || true)
			if [ -n "$kd" ]; then
				dr="$dr $kd" p="$p $kp"
			else
				dr="$dr $(jq .down.drops_aqm "$c")" p="$p $(jq .down.packets_out "$c")"
				qd="$qd $(jq .down.queue_delay_p50_ms "$c")"
			fi
			pm="$pm $(awk -F/ '/^rtt|^round-trip/ {print $5}' "$d/ping-$a-$r.txt")"
		done
		printf '| %s | %s | %d | %s | %s | %s | %s | %s | %s |\n' "$(basename "$d")" "$a" "$n" "$cc" \
			"$(echo $g | tr ' ' '\n' | stats)" "$(echo $p | tr ' ' '\n' | stats)" "$(echo $dr | tr ' ' '\n' | stats)" \
			"$(echo $qd | tr ' ' '\n' | grep . | stats || echo -)" "$(echo $pm | tr ' ' '\n' | grep . | stats || echo -)"
	done
done
