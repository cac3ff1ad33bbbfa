#!/bin/sh
# iperf-link.sh LINK SECONDS PORT OUT [-R]: one iperf3 stream through `pltlab shell --link LINK`
# for SECONDS, against an iperf3 server already listening on the host at PORT; the client in the
# link's namespace sends (its TCP buffers are raised to 32 MiB there), or with -R the host does
# (capped by the host's net.core.wmem_max: 4 MiB here, 671 Mbit/s at 50 ms). Appends to OUT:
#   goodput_mbps retransmits pltlab_cpu_s cpu_s_per_gbit fwd_cpu_s_per_gbit load1 path steady_mbps
# goodput_mbps is the whole stream's at the receiver (slow start included, as iperf3 prints it);
# steady_mbps the rate of the client's own interval reports after the first 2 s (slow start left
# out, as iperf3's --omit 2 would; the bytes the client wrote when it sends, received with -R;
# "-" for a stream of 2 s or less). At rate=1gbit,rtt=50ms slow start alone
# takes about 10 RTTs (0.5 s), a few per cent of a 10 s average.
# pltlab_cpu_s is the pltlab process's own user + system time (its forwarder threads, the
# kernel work they do, the Go runtime), read from /proc/PID/stat when the stream ends;
# fwd_cpu_s_per_gbit is that of its forwarder threads alone (threads named pltlab-emu; "-" for
# a binary that does not name them); path is $LABEL, else "plain" when PLTLAB_EMU_OFFLOAD=off,
# else "offload". PLTLAB names the binary (default bin/pltlab).
set -eu
LINK=$1 T=$2 PORT=$3 OUT=$4 REV=${5:-}
PLTLAB=${PLTLAB:-bin/pltlab}
J=$(mktemp)
trap 'rm -f "$J" "$J.cpu" "$J.fwd"' EXIT
# Inside the link, the shell's parent is pltlab itself (ip netns exec execs the command). The
# link stays up 1 s after the stream, so the server sees its end; a server that still tears the
# previous test down answers "busy": retry.
for try in 1 2 3 4 5; do
	"$PLTLAB" shell --link "$LINK" -- sh -c "iperf3 -c \$PLTLAB_HOST_ADDR -p $PORT $REV -t $T -J > $J; awk '{print \$14 + \$15}' /proc/\$PPID/stat > $J.cpu; awk '\$2 == \"(pltlab-emu)\" {s += \$14 + \$15; n++} END {print n ? s : -1}' /proc/\$PPID/task/*/stat > $J.fwd; sleep 1" || true
	grep -q '"error":.*busy' "$J" || break
	sleep 1
done
grep -q sum_received "$J" || { echo "iperf3 failed: $(grep error "$J")" >&2; exit 1; }
python3 - "$J" "$J.cpu" "$J.fwd" "$OUT" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
e = d["end"]
mbps = e["sum_received"]["bits_per_second"] / 1e6
retx = e["sum_sent"].get("retransmits", 0)
tck = os.sysconf("SC_CLK_TCK")
cpu = float(open(sys.argv[2]).read()) / tck
fwd = float(open(sys.argv[3]).read())
secs = e["sum_received"]["seconds"]
gbit = mbps / 1e3 * secs
fwdg = "%.3f" % (fwd / tck / gbit) if fwd >= 0 and gbit else "-"
late = [i["sum"] for i in d.get("intervals", []) if i["sum"]["start"] >= 2 - 1e-6]
lsecs = sum(i["seconds"] for i in late)
steady = "%.1f" % (sum(i["bytes"] for i in late) * 8 / lsecs / 1e6) if lsecs > 0 else "-"
path = os.environ.get("LABEL") or ("plain" if os.environ.get("PLTLAB_EMU_OFFLOAD") == "off" else "offload")
with open(sys.argv[4], "a") as f:
    f.write("%.1f %d %.2f %.3f %s %.2f %s %s\n" % (mbps, retx, cpu, cpu / gbit if gbit else 0, fwdg, os.getloadavg()[0], path, steady))
PY
