#!/usr/bin/env bash
# Times the GPU kernels of two builds side by side on one GPU, so that a
# change can be shown to cost no speed:
#   scripts/gpu-ab.sh OLD_BIN OLD_LIB NEW_BIN NEW_LIB GRAPH...
# Each build runs `trigrid bench kernels --json --runs RUNS` on all graphs,
# ROUNDS times, the builds alternating; every count is checked against the
# CPU count by bench itself. Prints, per graph and kernel, the median over
# rounds of each build's median kernel ms and their ratio (new / old), and
# fails when any run miscounted. Rows go to $OUT/ab-*.json.
set -uo pipefail
if [ $# -lt 5 ]; then
	echo "usage: $0 OLD_BIN OLD_LIB NEW_BIN NEW_LIB GRAPH..." >&2
	exit 2
fi
OLD_BIN=$1 OLD_LIB=$2 NEW_BIN=$3 NEW_LIB=$4
shift 4
OUT=${OUT:-/tmp/gpu-ab}
RUNS=${RUNS:-5}
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"
for r in $(seq "$ROUNDS"); do
	"$OLD_BIN" bench kernels --json --runs "$RUNS" --cuda-lib "$OLD_LIB" "$@" >"$OUT/ab-old-$r.json" || echo "old round $r: exit $?"
	"$NEW_BIN" bench kernels --json --runs "$RUNS" --cuda-lib "$NEW_LIB" "$@" >"$OUT/ab-new-$r.json" || echo "new round $r: exit $?"
done
python3 - "$OUT" "$ROUNDS" <<'PY'
import glob, json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rows(side):
    res, bad = {}, 0
    for f in sorted(glob.glob(f"{out}/ab-{side}-*.json")):
        text = open(f).read().strip()
        data = json.loads(text) if text.startswith("[") else [json.loads(l) for l in text.splitlines() if l.strip()]
        for r in data:
            if not r.get("ok"):
                bad += 1
            res.setdefault((r["graph"], r["kernel"]), []).append(r["median_ms"])
    return res, bad
old, bo = rows("old")
new, bn = rows("new")
print(f"{'graph':<22} {'kernel':<8} {'old ms':>10} {'new ms':>10} {'new/old':>8}")
for key in sorted(new):
    o = statistics.median(old.get(key, [float("nan")]))
    n = statistics.median(new[key])
    print(f"{key[0]:<22} {key[1]:<8} {o:>10.3f} {n:>10.3f} {n / o:>8.3f}")
print(f"miscounted or failed rows: old {bo}, new {bn}")
sys.exit(1 if bn else 0)
PY
