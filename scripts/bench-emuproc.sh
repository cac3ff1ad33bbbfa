#!/usr/bin/env bash
# bench-emuproc.sh: where the emulator's forwarders run, side by side in one run (docs/design.md,
# "What still stalls the emulator"): flow runs through carlucci2015 with the forwarders in the
# link's emulator process ("own", every thread real-time, the default) and in pltlab's process
# ("shared", PLTLAB_EMU_PROCESS=shared), alternating within each round, beside a neighbour:
# compile (a `go build -a` loop at nice 19), mem (scripts/memchurn, GIB GiB per pass) or none.
#
#   scripts/bench-emuproc.sh [N] [NEIGHBOUR]   # defaults: 3 compile
#
# Needs root, a built bin/pltlab (make build) and python3. Each run is four mixes of 10 s
# (h1:cubic, h2:cubic, h3, h3+h2:cubic), one attempt more for a run the emulator was late in
# (the one retry rule). Prints one line per run and a summary per mode: flow lines, lines
# redone for lateness, lines still invalid, attempts over the 5 ms bound, the largest lateness
# of any attempt. The JSON Lines are kept in $OUT (default a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-3}
NB=${2:-compile}
GIB=${GIB:-3}
OUT=${OUT:-$(mktemp -d)}
[ -x bin/pltlab ] || { echo "bench-emuproc: bin/pltlab is missing (make build)" >&2; exit 2; }
case $NB in compile | mem | none) ;; *) echo "bench-emuproc: unknown neighbour $NB (compile, mem, none)" >&2; exit 2 ;; esac
[ "$NB" = mem ] && go build -o "$OUT/memchurn" ./scripts/memchurn
hog=""
stop() { [ -n "$hog" ] && kill -- -"$hog" 2>/dev/null; wait "$hog" 2>/dev/null || true; hog=""; }
trap stop EXIT
for i in $(seq 1 "$N"); do
	modes="own shared"; [ $((i % 2)) = 0 ] && modes="shared own"
	for mode in $modes; do
		case $NB in
		compile) setsid bash -c 'while :; do nice -n 19 go build -a -o /dev/null ./cmd/pltlab >/dev/null 2>&1; done' & hog=$! ;;
		mem) setsid "$OUT/memchurn" -gib "$GIB" & hog=$! ;;
		none) ;;
		esac
		sleep 2
		PLTLAB_EMU_PROCESS=$mode bin/pltlab flows --link carlucci2015 --mix h1:cubic --mix h2:cubic --mix h3 --mix h3,h2:cubic \
			--duration 10s --runs 1 --no-link-check --out "$OUT/$mode-$i.jsonl" --force >/dev/null 2>&1 || true
		stop
		python3 - "$OUT/$mode-$i.jsonl" "$mode" "$i" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
flows = [d for d in lines if d.get("kind") == "flow"]
def late(e):
    return max((e or {}).get(k, {}).get("timing_err_max_ms", 0) for k in ("down", "up"))
att = [late(d.get("emulator")) for d in flows] + [a.get("late_ms", 0) for d in flows for a in d.get("earlier_attempts") or []]
proc = {(d.get("emulator") or {}).get("process", "?") for d in flows}
print(f'{sys.argv[2]:6} {sys.argv[3]:>2}: process {",".join(sorted(proc))}; {len(flows)} flow lines, '
      f'{sum(1 for d in flows if d.get("earlier_attempts"))} redone, {sum(1 for d in flows if not d.get("valid"))} invalid; '
      f'attempts over 5 ms {sum(1 for a in att if a > 5)}, largest lateness {max(att, default=0):.2f} ms')
PY
	done
done | tee "$OUT/summary.txt"
echo "JSON Lines in $OUT"
python3 - "$OUT" <<'PY'
import json, sys, glob, os
for mode in ("own", "shared"):
    flows, att = [], []
    for f in sorted(glob.glob(os.path.join(sys.argv[1], mode + "-*.jsonl"))):
        for l in open(f):
            d = json.loads(l)
            if d.get("kind") != "flow":
                continue
            flows.append(d)
            e = d.get("emulator") or {}
            att.append(max(e.get(k, {}).get("timing_err_max_ms", 0) for k in ("down", "up")))
            att += [a.get("late_ms", 0) for a in d.get("earlier_attempts") or []]
    print(f'{mode:6} all: {len(flows)} flow lines, {sum(1 for d in flows if d.get("earlier_attempts"))} redone, '
          f'{sum(1 for d in flows if not d.get("valid"))} invalid; attempts {len(att)}, over 5 ms {sum(1 for a in att if a > 5)}, '
          f'largest lateness {max(att, default=0):.2f} ms')
PY
