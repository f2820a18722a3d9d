#!/usr/bin/env bash
# Whole-process timings of several trigrid builds on the same rmat graphs,
# in one call on a GPU machine:
#   SCALES="22 26 27" scripts/gpu-e2e-ab.sh BIN...
# Builds kernels/cuda/libtrigrid_cuda.so, generates each rmat graph (edge
# factor 16, seed 1) with the first BIN under ${TMPDIR:-/tmp} (TMPDIR=/dev/shm
# keeps them in memory), counts it once with each build (`count --json`:
# the phases, and whether the input was staged) and times it with `bench
# e2e --runs RUNS --device gpu --json` (median of fresh processes), the
# builds one after the other. Every count must equal the published one
# (docs/performance.md) for the scales that have one. Everything goes to
# $OUT/results.txt; exits 1 on a wrong count.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BIN..." >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/gpu-e2e-ab}
RUNS=${RUNS:-3}
SCALES=${SCALES:-"26 27"}
TMP=${TMPDIR:-/tmp}/gpu-e2e-ab
mkdir -p "$OUT" "$TMP"
RES=$OUT/results.txt
LIB=$ROOT/kernels/cuda/libtrigrid_cuda.so
START=$(date +%s)
elapsed() { echo $(($(date +%s) - START)); }
date -u >"$RES"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>"$RES" 2>&1
make -C kernels/cuda -j16 all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "build ok at $(elapsed) s" | tee -a "$RES"
known() {
	case $1 in
	22) echo 2109057696 ;; 24) echo 10286549506 ;; 25) echo 22528457603 ;;
	26) echo 49160836370 ;; 27) echo 106880097173 ;;
	esac
}
fail=0
for s in $SCALES; do
	f=$TMP/r$s.bin
	[ -f "$f" ] || "$1" gen rmat --scale "$s" --edge-factor 16 --seed 1 -q -o "$f"
	echo "rmat $s generated at $(elapsed) s" | tee -a "$RES"
	for b in "$@"; do
		n=$(basename "$b")
		"$b" count --device gpu --cuda-lib "$LIB" --json --progress none "$f" >"$TMP/count.json" 2>&1
		got=$(grep -o '"triangles": *[0-9]*' "$TMP/count.json" | head -1 | grep -o '[0-9]*$')
		want=$(known "$s")
		if [ -z "$got" ] || { [ -n "$want" ] && [ "$got" != "$want" ]; }; then
			echo "FAIL $n rmat $s: got '$got' want '$want'" | tee -a "$RES"
			fail=1
		fi
		echo "$n rmat $s count: $got $(grep -oE '"(staged|read|device_wait|stage_wait|order|count|total)": *[^,}]*' "$TMP/count.json" | tr '\n' ' ')" | tee -a "$RES"
		"$b" bench e2e --runs "$RUNS" --device gpu --cuda-lib "$LIB" --json "$f" >"$TMP/e2e.json" 2>&1
		echo "$n rmat $s bench e2e rc=$? at $(elapsed) s: $(grep -oE '"(triangles|read_s|order_s|count_s|kernel_s|device_wait_s|whole_process_s|whole_process_min_s|whole_process_max_s|host_peak_bytes)": *[^,}]*' "$TMP/e2e.json" | tr '\n' ' ')" | tee -a "$RES"
	done
	rm -f "$f"
done
echo "done at $(elapsed) s, counts $([ $fail = 0 ] && echo ok || echo WRONG)" | tee -a "$RES"
exit $fail
