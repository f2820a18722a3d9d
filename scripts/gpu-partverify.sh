#!/usr/bin/env bash
# The partitioned device path from the input's own ids (tg_prep_ids_out)
# under the checks too slow for gpu-partitioned.sh's timing run, in one
# call on a GPU machine that has nvcc but no Go:
#   1. builds libtrigrid_cuda.so from this tree;
#   2. compute-sanitizer memcheck of `count --device gpu --partitions 2
#      --verify` on CA-GrQc with its ids as they are (dense compaction)
#      and spread over 64 bits (sparse compaction), against MANIFEST.tsv;
#   3. `count --device gpu --partitions 4 --verify` (hash and range) of
#      rmat SCALES (default "20 22"; `gen rmat --edge-factor 16 --seed 1`)
#      against the whole-graph count, each bounded by VERIFY_TIMEOUT
#      seconds (--verify recounts every subtask on the host).
# Prepare with `scripts/gpu-partitioned.sh --prepare` (the same payload);
# run from the repository root on the GPU machine, DEV carried:
#   bash $DEV/src/scripts/gpu-partverify.sh
# Everything goes under $OUT; results.txt is the summary.
set -uo pipefail

START=$(date +%s)
elapsed() { echo $(($(date +%s) - START)); }
SRC=$(cd "$(dirname "$0")/.." && pwd)
DEV=$(dirname "$SRC")
OUT=${OUT:-/tmp/gpu-partverify}
mkdir -p "$OUT"
SCALES=${SCALES:-"20 22"}
VERIFY_TIMEOUT=${VERIFY_TIMEOUT:-300}
TMP=${TMPDIR:-/tmp}/gpu-partverify
mkdir -p "$TMP/bin"
RES=$OUT/results.txt
LIB=$SRC/kernels/cuda/libtrigrid_cuda.so
export TRIGRID_CUDA_LIB=$LIB

gunzip -c "$DEV/bin/trigrid.gz" >"$TMP/bin/trigrid"
chmod +x "$TMP/bin/trigrid"
BIN=$TMP/bin/trigrid

date -u >"$RES"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>"$RES" 2>&1
if ! make -C "$SRC/kernels/cuda" -j16 libtrigrid_cuda.so >"$OUT/build.log" 2>&1; then
	tail -40 "$OUT/build.log"
	exit 1
fi
echo "build ok at $(elapsed) s" | tee -a "$RES"

triangles() { grep -o '"triangles": *[0-9]*' | head -1 | grep -o '[0-9]*$'; }
fail=0
check() { # name got want
	if [ -n "$2" ] && [ "$2" = "$3" ]; then
		echo "ok   $1 $2" | tee -a "$RES"
	else
		echo "FAIL $1 got '$2' want '$3'" | tee -a "$RES"
		fail=1
	fi
}
count() { "$BIN" count --device gpu --json --progress none --log-level warn "$@" 2>>"$OUT/count.err"; }

DATA=$DEV/data
want=$(awk -F'\t' '$1 == "ca-GrQc" {print $6}' "$DATA/MANIFEST.tsv")
gunzip -c "$DATA/CA-GrQc.txt.gz" >"$TMP/grqc.txt"
awk '/^#/ {next} {printf "%.0f %.0f\n", $1 * 1000003 + 1099511627776, $2 * 1000003 + 1099511627776}' "$TMP/grqc.txt" >"$TMP/grqc-sparse.txt"
for f in grqc.txt grqc-sparse.txt; do
	timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN" count --device gpu --json --progress none \
		--partitions 2 --verify "$TMP/$f" >"$OUT/sanitizer-$f.log" 2>&1
	rc=$?
	echo "compute-sanitizer memcheck -P 2 --verify $f rc=$rc: $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer-$f.log")" | tee -a "$RES"
	[ $rc = 0 ] || fail=1
	check "-P 2 --verify $f (memcheck)" "$(triangles <"$OUT/sanitizer-$f.log")" "$want"
done

for s in $SCALES; do
	f=$TMP/r$s.bin
	"$BIN" gen rmat --scale "$s" --edge-factor 16 --seed 1 -q -o "$f"
	whole=$(count "$f" | triangles)
	for sc in hash range; do
		got=$(timeout "$VERIFY_TIMEOUT" "$BIN" count --device gpu --json --progress none --log-level warn --partitions 4 --scheme $sc --verify "$f" 2>>"$OUT/count.err" | triangles)
		check "rmat $s -P 4 $sc --verify (done at $(elapsed) s)" "$got" "$whole"
	done
done
echo "done at $(elapsed) s, fail=$fail" | tee -a "$RES"
tail -n 5 "$OUT/count.err" >>"$RES" 2>/dev/null
exit $fail
