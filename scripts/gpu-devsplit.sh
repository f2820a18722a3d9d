#!/usr/bin/env bash
# The device split of a partitioned count (`count --device gpu
# --partitions N`, N <= 4 on one GPU: the blocks built on the device and
# counted there without an upload), checked and timed on a GPU machine
# that has nvcc but no Go, in one call:
#   1. builds libtrigrid_cuda.so from this tree;
#   2. the Go tests of the device split through the real library
#      (kernels/gpu TestDeviceSplit: blocks equal to the host's split, hash
#      and range, P = 1..4; pipeline TestPartitionedDeviceSplit*), and
#      compute-sanitizer memcheck of the split on a small graph;
#   3. conformance: every dataset of MANIFEST.tsv through --partitions 3
#      hash --verify (the device's blocks against the host's split),
#      --partitions 2 range --verify and --partitions 4 against its
#      published count; rmat 22 and 23 through --partitions 2, 3, 4 by
#      both schemes and a cap of a quarter of the CSR (--partitions 0, the
#      host's split) against the whole-graph count; rmat 18 --partitions 4
#      --verify by both schemes;
#   4. `trigrid bench e2e --device gpu` (fresh processes, medians) of rmat
#      23 whole, --partitions 4 hash and range, and --partitions 4 of an
#      earlier build (BEFORE) when there is one.
# Prepare on a machine with Go (DEV defaults to .dev/devsplit):
#   scripts/gpu-devsplit.sh --prepare [BEFORE_COMMIT]
# Run (from the repository root on the GPU machine, DEV carried):
#   bash $DEV/src/scripts/gpu-devsplit.sh
# Everything goes under $OUT; results.txt is the summary. Knobs: RUNS
# (bench runs, default 5), SCALES (default "22 23"), SKIP_BENCH=1.
set -uo pipefail

. "$(dirname "$0")/lib/devcheck.sh"
if [ "${1:-}" = "--prepare" ]; then
	devcheck_prepare "${DEV:-$(dirname "$0")/../.dev/devsplit}" "${2:-}"
	exit 0
fi

devcheck_setup gpu-devsplit
RUNS=${RUNS:-5}
SCALES=${SCALES:-"22 23"}

(cd "$SRC/kernels/gpu" && timeout 120 "$TMP/bin/gpu.test" -test.v -test.run 'TestDeviceSplit|TestSplitOnDevice' >"$OUT/tests.log" 2>&1)
echo "kernels/gpu TestDeviceSplit (real library) rc=$?" | tee -a "$RES"
(cd "$SRC/pipeline" && timeout 120 "$TMP/bin/pipeline.test" -test.v -test.run 'TestPartitionedDeviceSplit|TestPartitionedDevice' >>"$OUT/tests.log" 2>&1)
echo "pipeline TestPartitionedDevice* (real library) rc=$?" | tee -a "$RES"
grep -E "^(--- FAIL|FAIL)|_test.go" "$OUT/tests.log" | head -20 | tee -a "$RES"
if command -v compute-sanitizer >/dev/null; then
	(cd "$SRC/pipeline" && timeout 180 compute-sanitizer --tool memcheck --error-exitcode 9 "$TMP/bin/pipeline.test" \
		-test.run 'TestPartitionedDeviceSplit$/messy.bin/(hash-4|range-3)/verify=false' >"$OUT/memcheck.log" 2>&1)
	echo "compute-sanitizer memcheck pipeline TestPartitionedDeviceSplit/messy.bin hash P=4, range P=3 rc=$? $(grep -c 'Invalid' "$OUT/memcheck.log") invalid accesses" | tee -a "$RES"
	grep -E "ERROR SUMMARY" "$OUT/memcheck.log" | tail -1 | tee -a "$RES"
fi
echo "tests done at $(elapsed) s" | tee -a "$RES"

DATA=$DEV/data
if [ -f "$DATA/MANIFEST.tsv" ]; then
	while IFS=$'\t' read -r name file _ _ _ want _; do
		case "$name" in '#'* | '') continue ;; esac
		f=$DATA/$file
		[ -f "$f" ] || f=$f.gz
		[ -f "$f" ] || continue
		check "gpu -P 3 hash --verify $name" "$(count --partitions 3 --verify "$f" | triangles)" "$want"
		check "gpu -P 2 range --verify $name" "$(count --partitions 2 --scheme range --verify "$f" | triangles)" "$want"
		check "gpu -P 4 hash $name" "$(count --partitions 4 "$f" | triangles)" "$want"
	done <"$DATA/MANIFEST.tsv"
fi
echo "datasets done at $(elapsed) s" | tee -a "$RES"

f=$TMP/r18.bin
"$BIN" gen rmat --scale 18 --edge-factor 16 --seed 1 -q -o "$f"
want=$(count "$f" | triangles)
check "rmat 18 -P 4 hash --verify" "$(count --partitions 4 --verify "$f" | triangles)" "$want"
check "rmat 18 -P 4 range --verify" "$(count --partitions 4 --scheme range --verify "$f" | triangles)" "$want"
for s in $SCALES; do
	rmat_graph "$s"
	echo "$csr" >"$TMP/csr$s"
	for p in 2 3 4; do
		for sc in hash range; do
			out=$(count --partitions $p --scheme $sc "$f")
			check "rmat $s -P $p $sc (uploads $(echo "$out" | field uploads))" "$(echo "$out" | triangles)" "$want"
		done
	done
	check "rmat $s cap CSR/4" "$(count --partitions 0 --device-mem-limit $((csr / 4)) "$f" | triangles)" "$want"
done
echo "rmat checks done at $(elapsed) s" | tee -a "$RES"

f=$TMP/r23.bin
if [ -f "$f" ] && [ "${SKIP_BENCH:-0}" != 1 ]; then
	bench() { # name binary runs count-flags...
		local name=$1 bin=$2 runs=$3
		shift 3
		echo "== $name: bench e2e --runs $runs rmat 23 -- $*" | tee -a "$RES"
		timeout 200 "$bin" bench e2e --runs "$runs" --device gpu --json "$f" -- "$@" >"$TMP/bench.json" 2>>"$OUT/bench.err"
		echo "rc=$?" >>"$RES"
		cat "$TMP/bench.json" >>"$RES"
		# One more run for the phases bench e2e does not list (partition).
		"$bin" count --device gpu --json --progress none --log-level warn "$@" "$f" 2>>"$OUT/bench.err" |
			tr -d '\n' | grep -o '"seconds": *{[^}]*}' >>"$RES"
		echo >>"$RES"
	}
	bench whole "$BIN" "$RUNS"
	bench "partitions 4 hash" "$BIN" "$RUNS" --partitions 4
	bench "partitions 4 range" "$BIN" "$RUNS" --partitions 4 --scheme range
	[ -x "$TMP/bin/trigrid-before" ] && bench "partitions 4 hash, before" "$TMP/bin/trigrid-before" 3 --partitions 4
fi
echo "done at $(elapsed) s, fail=$fail" | tee -a "$RES"
tail -5 "$OUT/count.err" >>"$RES" 2>/dev/null
exit $fail
