#!/usr/bin/env bash
# bench-busyhost.sh: full link checks of LINK beside a busy neighbour, alternating with none, and
# each check's data judged by both lateness rules side by side (docs/design.md, "Host stalls:
# judged on their own"): today's whole check (share of releases in stalls <= 2 %, host stalls'
# late-load share <= 20 % at the 95 % lower bound, RTT lines without the probes in a stall) and
# the old lateness line alone (the largest lateness less host freezes at most 5 ms). Neighbours: mem (scripts/memchurn: allocate and touch GIB GiB per pass, returned to
# the kernel after each), cpu (a shell busy loop pinned to CPU 1), none.
#
#   scripts/bench-busyhost.sh [N] [LINK] [NEIGHBOURS]   # defaults: 5 rate=10mbit,rtt=36ms,queue=2bdp "none mem"
#
# Needs root, a built bin/pltlab (make build) and python3. Prints one line per check and a
# summary per neighbour; the JSON of every check is kept in $OUT (default a temporary directory).
# BINS="OLD NEW" alternates two pltlab binaries within each round (side by side in one run);
# the summary is then per binary and neighbour. SHIELDS="off 0" alternates checks without and
# with --shield-cpu 0 (pltlab's process alone on CPU 0, docs/design.md "A shielded CPU"); tags
# then end in +shield0.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5}
LINK=${2:-rate=10mbit,rtt=36ms,queue=2bdp}
NEIGHBOURS=${3:-none mem}
GIB=${GIB:-3}
OUT=${OUT:-$(mktemp -d)}
BINS=${BINS:-bin/pltlab}
SHIELDS=${SHIELDS:-off}
for b in $BINS; do [ -x "$b" ] || { echo "bench-busyhost: $b is not an executable pltlab (make build)" >&2; exit 2; }; done
go build -o "$OUT/memchurn" ./scripts/memchurn
hog=""
stop() { [ -n "$hog" ] && kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null || true; hog=""; }
trap stop EXIT
for i in $(seq 1 "$N"); do
	for nb in $NEIGHBOURS; do
	for bin in $BINS; do
	for sh in $SHIELDS; do
		tag=$nb; [ "$BINS" = bin/pltlab ] || tag=$nb@$(basename "$bin")
		args=(); [ "$sh" = off ] || { tag=$tag+shield$sh; args=(--shield-cpu "$sh"); }
		case $nb in
		mem) "$OUT/memchurn" -gib "$GIB" & hog=$! ;;
		cpu) taskset -c 1 sh -c 'while :; do :; done' & hog=$! ;;
		none) ;;
		*) echo "bench-busyhost: unknown neighbour $nb (mem, cpu, none)" >&2; exit 2 ;;
		esac
		sleep 1
		"$bin" "${args[@]}" link check --link "$LINK" --json >"$OUT/$tag-$i.json" 2>/dev/null || true
		stop
		python3 - "$OUT/$tag-$i.json" "$tag" "$i" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = d.get("host_stalls") or {}
old = h.get("longest_own_ms", 0) <= 5.0
fails = [l["name"] for l in d["lines"] if not l["pass"]]
print(f'{sys.argv[2]:12} {sys.argv[3]:>2}: new rule {"PASS" if d["pass"] else "FAIL"}, old lateness line {"PASS" if old else "FAIL"}; '
      f'busy {d.get("host_busy_pct",0):.0f} %, steal {d.get("host_steal_pct",0):.1f} %; stalls {h.get("stalls",0)} '
      f'({h.get("releases",0)} of {h.get("releases_total",0)} releases), longest {h.get("longest_ms",0):.2f} ms '
      f'({h.get("longest_own_ms",0):.2f} less freezes), seen by the host {h.get("seen_by_host",0)}, watchers\' longest stop {h.get("floor_ms",0):.2f} ms'
      + (f' (ratio {h.get("longest_ms",0)/h["floor_ms"]:.2f})' if h.get("floor_ms") else '')
      + (f'; failed: {", ".join(fails)}' if fails else ''))
PY
	done
	done
	done
done
tags=""
for nb in $NEIGHBOURS; do for bin in $BINS; do for sh in $SHIELDS; do
	t=$nb; [ "$BINS" = bin/pltlab ] || t=$nb@$(basename "$bin")
	[ "$sh" = off ] || t=$t+shield$sh
	tags="$tags $t"
done; done; done
python3 - "$OUT" $tags <<'PY'
import json, sys, glob, os
for nb in sys.argv[2:]:
    new = old = n = 0
    for f in sorted(glob.glob(os.path.join(glob.escape(sys.argv[1]), glob.escape(nb) + "-*.json"))):
        d = json.load(open(f)); h = d.get("host_stalls") or {}
        n += 1; new += d["pass"]
        old += h.get("longest_own_ms", 0) <= 5.0
    print(f"{nb}: {n} checks, passed {new}; the old lateness line (largest lateness less freezes <= 5 ms) would have passed {old}")
PY
echo "checks kept in $OUT"
