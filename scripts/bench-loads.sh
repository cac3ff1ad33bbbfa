#!/usr/bin/env bash
# bench-loads.sh: page loads through LINK beside a busy neighbour, two pltlab binaries
# alternating within each round (side by side in one run), counting the loads the emulator was
# late in at their first attempt: the benchmark of docs/design.md, "What stalls the emulator
# beside a memory churn" (the collector paused during loads, internal/gcpause, against the
# binary before it). Each round runs, per binary, 'pltlab [--shield-cpu S] run --page PAGE
# --link LINK --protocols h1,h2,h3 --runs R' (3R measured loads and their warm-ups).
#
#   BINS="OLD NEW" scripts/bench-loads.sh [N] [LINK] [NEIGHBOUR]
#   # defaults: 2 rounds, carlucci2015,loss=2%, mem; PAGE=carlucci2015 R=8 SHIELD=0 GIB=3
#
# Build the old binary from its commit, e.g.
#   git worktree add /tmp/old 1c9c190 && (cd /tmp/old && go build -tags=nomsgpack -o /tmp/pltlab-old ./cmd/pltlab)
# Neighbours: mem (scripts/memchurn -gib GIB), cpu (a shell busy loop on CPU 1), none. Needs root
# and python3; every run's records stay in $OUT (default a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2}
LINK=${2:-carlucci2015,loss=2%}
NB=${3:-mem}
PAGE=${PAGE:-carlucci2015}
R=${R:-8}
SHIELD=${SHIELD:-0}
GIB=${GIB:-3}
OUT=${OUT:-$(mktemp -d)}
BINS=${BINS:?give BINS=\"OLD NEW\": two pltlab binaries}
for b in $BINS; do [ -x "$b" ] || { echo "bench-loads: $b is not an executable pltlab" >&2; exit 2; }; done
case $NB in mem | cpu | none) ;; *) echo "bench-loads: unknown neighbour $NB (mem, cpu, none)" >&2; exit 2 ;; esac
go build -o "$OUT/memchurn" ./scripts/memchurn
hog=""
stop() { [ -n "$hog" ] && kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null || true; hog=""; }
trap stop EXIT
args=(); [ "$SHIELD" = off ] || args=(--shield-cpu "$SHIELD")
for i in $(seq 1 "$N"); do
	for bin in $BINS; do
		tag=$(basename "$bin")-$i
		case $NB in
		mem) "$OUT/memchurn" -gib "$GIB" & hog=$! ;;
		cpu) taskset -c 1 sh -c 'while :; do :; done' & hog=$! ;;
		none) ;;
		esac
		sleep 1
		"$bin" "${args[@]}" run --page "$PAGE" --link "$LINK" --protocols h1,h2,h3 --runs "$R" \
			--name "$tag" --out "$OUT/$tag.jsonl" --force >/dev/null 2>"$OUT/$tag.log" || true
		stop
		python3 - "$OUT/$tag.jsonl" "$tag" <<'PY'
import json, sys
loads = late = 0
worst = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("kind") not in (None, "", "load") or r.get("warmup"):
        continue
    loads += 1
    first = (r.get("earlier_attempts") or [None])[0]
    if first and "late" in json.dumps(first):
        late += 1
        worst.append(first.get("late_ms") or 0)
print(f"{sys.argv[2]:24} {loads} loads, {late} late at the first attempt"
      + (f" ({', '.join(f'{w:.2f}' for w in sorted(worst))} ms)" if worst else ""))
PY
	done
done
echo "records in $OUT"
