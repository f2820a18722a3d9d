#!/usr/bin/env bash
# Where a partitioned count's time goes on a GPU machine, in one call:
# builds the library, generates rmat 22 and 23, times the whole process of
# rmat 23 whole and with --partitions 4 and rmat 22 with --per-vertex
# (`trigrid bench e2e`, fresh processes, medians of RUNS), and, when nsys
# is there, profiles one --partitions 4 run (CUDA API, kernel and copy
# summaries). BIN: the trigrid binary (gzipped is fine). Results in $OUT.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/gpu-profile}
mkdir -p "$OUT"
BIN=${BIN:?BIN: the trigrid binary}
[ -f "$BIN.gz" ] && gunzip -f "$BIN.gz"
chmod +x "$BIN"
RUNS=${RUNS:-5}
RES=$OUT/results.txt
make -C kernels/cuda -j16 all >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
export TRIGRID_CUDA_LIB=$ROOT/kernels/cuda/libtrigrid_cuda.so
T=${TMPDIR:-/dev/shm}
for s in 22 23; do "$BIN" gen rmat --scale $s --edge-factor 16 --seed 1 --progress none -o "$T/r$s.bin" >/dev/null 2>&1; done
{
	timeout 150 "$BIN" bench e2e --device gpu --runs "$RUNS" "$T/r23.bin"
	timeout 150 "$BIN" bench e2e --device gpu --runs "$RUNS" "$T/r23.bin" -- --partitions 4
	timeout 100 "$BIN" bench e2e --device gpu --runs 3 "$T/r22.bin" -- --per-vertex "$T/v22.tsv"
	timeout 100 "$BIN" bench e2e --device gpu --runs 3 "$T/r22.bin"
} 2>&1 | tee "$RES"
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
	echo "== nsys ($NSYS)" | tee -a "$RES"
	timeout 120 "$NSYS" profile -o "$OUT/p4" --force-overwrite true -t cuda,osrt --stats=false \
		"$BIN" count --device gpu --progress none --partitions 4 "$T/r23.bin" >"$OUT/nsys.log" 2>&1
	timeout 120 "$NSYS" stats -r cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum "$OUT/p4.nsys-rep" 2>&1 | head -120 | tee -a "$RES"
	rm -f "$OUT"/p4.sqlite
else
	echo "no nsys" | tee -a "$RES"
fi
