#!/usr/bin/env bash
# The release check of a tree on a GPU machine that has nvcc but no Go, in
# one call: the conformance and device tests of scripts/gpu-check.sh
# (SKIP_BENCH=1), then exactness and whole-process timings of the device
# paths on rmat graphs generated there:
#   - rmat 22 and 23 whole, --per-vertex, --partitions 4 (hash and range,
#     split on the device) and a cap of a quarter of the CSR (--partitions
#     0) against the CPU count of rmat 22 and the whole-graph GPU count of
#     rmat 23; rmat 20 --partitions 4 --verify (the device's blocks against
#     the host's split, every subtask against the reference kernel);
#   - rmat 24 and 25 whole and --partitions 4 against their known counts
#     (and whether rmat 25's input went to the device while it was read);
#   - last, every cap from CSR/64 to twice the CSR on rmat 23 and 24
#     (scripts/gpu-outofcore.sh, SWEEP_S seconds a graph; SWEEP= skips it);
#   - `trigrid bench e2e --device gpu` (fresh processes, medians of RUNS)
#     of rmat 22 binary and text and --per-vertex, rmat 23 whole,
#     --partitions 4 and under a cap of a quarter of its CSR.
# Prepare on a machine with Go: scripts/gpu-check.sh --prepare, then
# gzip -9 .dev/bin/* .dev/data/*.txt (the call carries at most 64 MiB);
# carry .dev/bin and .dev/data. Results under $OUT (results.txt).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/gpu-final}
mkdir -p "$OUT"
RUNS=${RUNS:-5}
for f in .dev/bin/*.gz .dev/data/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x .dev/bin/*
SKIP_BENCH=1 MAX_SCALE=${MAX_SCALE:-20} bash scripts/gpu-check.sh
RES=$OUT/results.txt
BIN=$ROOT/.dev/bin/trigrid
export TRIGRID_CUDA_LIB=$ROOT/kernels/cuda/libtrigrid_cuda.so
T=${TMPDIR:-/dev/shm}
for s in 20 22 23 24 25; do "$BIN" gen rmat --scale $s --edge-factor 16 --seed 1 --progress none -o "$T/r$s.bin" >/dev/null 2>&1; done
"$BIN" convert --progress none "$T/r22.bin" "$T/r22.txt" >/dev/null 2>&1
tri() { "$BIN" count --json --progress none --log-level error "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["triangles"])'; }
check() { # name want got
	if [ "$2" = "$3" ]; then echo "ok   $1 $3"; else echo "FAIL $1 got $3 want $2"; fi | tee -a "$RES"
}
want22=$(tri --device cpu "$T/r22.bin")
want23=$(tri --device gpu "$T/r23.bin")
echo "rmat 22 cpu $want22, rmat 23 gpu whole $want23" | tee -a "$RES"
check "r22 gpu whole" "$want22" "$(tri --device gpu "$T/r22.bin")"
check "r22 gpu text" "$want22" "$(tri --device gpu "$T/r22.txt")"
for s in 22 23; do
	w=want$s
	csr=$(( $(stat -c %s "$T/r$s.bin") / 4 ))
	check "r$s gpu -P 4 hash" "${!w}" "$(tri --device gpu --partitions 4 "$T/r$s.bin")"
	check "r$s gpu -P 4 range" "${!w}" "$(tri --device gpu --partitions 4 --scheme range "$T/r$s.bin")"
	check "r$s gpu cap ~CSR/4" "${!w}" "$(tri --device gpu --partitions 0 --device-mem-limit $((csr / 4)) "$T/r$s.bin")"
done
for scheme in hash range; do
	check "r20 gpu -P 4 $scheme --verify" "$(tri --device cpu "$T/r20.bin")" "$(tri --device gpu --partitions 4 --scheme $scheme --verify "$T/r20.bin")"
done
# Counts of rmat 24 and 25 (gen rmat --scale S --edge-factor 16 --seed 1)
# taken on the CPU (docs/performance.md).
check "r24 gpu whole" 10286549506 "$(tri --device gpu "$T/r24.bin")"
check "r24 gpu -P 4 hash" 10286549506 "$(tri --device gpu --partitions 4 "$T/r24.bin")"
check "r25 gpu whole" 22528457603 "$(tri --device gpu "$T/r25.bin")"
"$BIN" count --device gpu --json --progress none --log-level error "$T/r25.bin" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("r25 input staged while read:", bool(r.get("input", {}).get("staged")))' | tee -a "$RES"
check "r25 gpu -P 4 hash" 22528457603 "$(tri --device gpu --partitions 4 "$T/r25.bin")"
rm -f "$T/r25.bin"
"$BIN" count --device gpu --progress none --log-level error --per-vertex "$T/v22.tsv" "$T/r22.bin" >/dev/null
check "r22 gpu per-vertex sum/3" "$want22" "$(awk -F'\t' 'NR > 1 { s += $3 } END { printf "%d", s / 3 }' "$T/v22.tsv")"
head -2 "$T/v22.tsv" | tee -a "$RES"
echo "== bench e2e --device gpu --runs $RUNS" | tee -a "$RES"
timeout 200 "$BIN" bench e2e --device gpu --runs "$RUNS" "$T/r22.bin" "$T/r22.txt" 2>&1 | tee -a "$RES"
timeout 120 "$BIN" bench e2e --device gpu --runs 5 "$T/r23.bin" 2>&1 | tee -a "$RES"
timeout 120 "$BIN" bench e2e --device gpu --runs 5 "$T/r23.bin" -- --partitions 4 2>&1 | tee -a "$RES"
# A quarter of rmat 23's CSR (8 bytes a vertex and 4 an edge: 554,227,840).
timeout 120 "$BIN" bench e2e --device gpu --runs 3 "$T/r23.bin" -- --partitions 0 --device-mem-limit 138556960 2>&1 | tee -a "$RES"
timeout 120 "$BIN" bench e2e --device gpu --runs 3 "$T/r22.bin" -- --per-vertex "$T/v22.tsv" 2>&1 | tee -a "$RES"
if [ -n "${SWEEP-23 24}" ]; then
	echo "== caps from CSR/64 to 2 x CSR (scripts/gpu-outofcore.sh)" | tee -a "$RES"
	for s in ${SWEEP-23 24}; do
		# rmat 24's smallest cap (P in the forties, ~10^5 subtasks) runs last,
		# bounded with the rest by the timeout.
		divs="64 20 4 1 0.5"
		[ "$s" -ge 24 ] && divs="20 4 1 0.5 64"
		DIVS=$divs timeout "${SWEEP_S:-150}" bash scripts/gpu-outofcore.sh "$BIN" "$TRIGRID_CUDA_LIB" "$T/r$s.bin" 2>&1 | tee -a "$RES"
		echo "sweep r$s exit ${PIPESTATUS[0]}" | tee -a "$RES"
	done
fi
date -u | tee -a "$RES"
