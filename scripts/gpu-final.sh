#!/usr/bin/env bash
# The release check of a tree on a GPU machine that has nvcc but no Go, in
# one call: the conformance and device tests of scripts/gpu-check.sh
# (SKIP_BENCH=1), then exactness and whole-process timings of the device
# paths on rmat graphs generated there:
#   - rmat 22 and 23 whole, --per-vertex, --partitions 4 (hash and range)
#     and a cap of a quarter of the CSR (--partitions 0) against the CPU
#     count of rmat 22 and the whole-graph GPU count of rmat 23;
#   - `trigrid bench e2e --device gpu` (fresh processes, medians of RUNS)
#     of rmat 22 binary and text, rmat 23 whole and --partitions 4.
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
for s in 22 23; do "$BIN" gen rmat --scale $s --edge-factor 16 --seed 1 --progress none -o "$T/r$s.bin" >/dev/null 2>&1; done
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
"$BIN" count --device gpu --progress none --log-level error --per-vertex "$T/v22.tsv" "$T/r22.bin" >/dev/null
check "r22 gpu per-vertex sum/3" "$want22" "$(awk -F'\t' 'NR > 1 { s += $3 } END { printf "%d", s / 3 }' "$T/v22.tsv")"
head -2 "$T/v22.tsv" | tee -a "$RES"
echo "== bench e2e --device gpu --runs $RUNS" | tee -a "$RES"
timeout 200 "$BIN" bench e2e --device gpu --runs "$RUNS" "$T/r22.bin" "$T/r22.txt" 2>&1 | tee -a "$RES"
timeout 120 "$BIN" bench e2e --device gpu --runs 3 "$T/r23.bin" 2>&1 | tee -a "$RES"
timeout 120 "$BIN" bench e2e --device gpu --runs 3 "$T/r23.bin" -- --partitions 4 2>&1 | tee -a "$RES"
date -u | tee -a "$RES"
