#!/usr/bin/env bash
# Partitioned counts on a GPU machine that has nvcc but no Go, in one call:
#   1. builds libtrigrid_cuda.so from this tree;
#   2. runs the Go tests of device orientation through the real library
#      (pipeline: TestPartitionedDevice*; kernels/gpu: OrientOnDevice);
#   3. conformance: `count --device gpu --partitions 3` (hash, --verify)
#      and `--partitions 2 --scheme range` (--verify) on every dataset of
#      MANIFEST.tsv against its published count; rmat 22 and 23 through
#      --partitions 4 (hash, range) and a cap of a quarter of the CSR
#      (--partitions 0) against the whole-graph count (with VERIFY_RMAT=1
#      also rmat 22 --partitions 4 --verify, which takes minutes, last,
#      bounded by VERIFY_TIMEOUT seconds);
#   4. `trigrid bench e2e --device gpu` (fresh processes, medians) of rmat
#      23 whole, --partitions 4 and capped at CSR/4, and --partitions 4 of
#      an earlier build (BEFORE) when there is one.
# Prepare on a machine with Go (DEV defaults to .dev/part):
#   scripts/gpu-partitioned.sh --prepare [BEFORE_COMMIT]
# Run (from the repository root on the GPU machine, DEV carried):
#   bash $DEV/src/scripts/gpu-partitioned.sh
# Everything goes under $OUT; results.txt is the summary. Knobs: RUNS
# (bench runs, default 5), SCALES (default "22 23"), BENCH_SCALE (23),
# BENCH_CAP=0 leaves out the capped run's timing.
set -uo pipefail

. "$(dirname "$0")/lib/devcheck.sh"
if [ "${1:-}" = "--prepare" ]; then
	devcheck_prepare "${DEV:-$(dirname "$0")/../.dev/part}" "${2:-}"
	exit 0
fi

devcheck_setup gpu-partitioned
RUNS=${RUNS:-5}
SCALES=${SCALES:-"22 23"}
BENCH_SCALE=${BENCH_SCALE:-23}

(cd "$SRC/pipeline" && timeout 120 "$TMP/bin/pipeline.test" -test.v -test.run 'TestPartitionedDevice' >"$OUT/tests.log" 2>&1)
echo "pipeline TestPartitionedDevice* (real library) rc=$?" | tee -a "$RES"
(cd "$SRC/kernels/gpu" && timeout 60 "$TMP/bin/gpu.test" -test.v -test.run 'OrientOnDevice|TestDevicePreprocess|TestDeviceOrientIDs|TestDevicePrepareIDs' >>"$OUT/tests.log" 2>&1)
echo "kernels/gpu OrientOnDevice, DevicePreprocess, DeviceOrientIDs, DevicePrepareIDs rc=$?" | tee -a "$RES"
grep -E "^(--- FAIL|FAIL)|_test.go" "$OUT/tests.log" | head -20 | tee -a "$RES"

DATA=$DEV/data
if [ -f "$DATA/MANIFEST.tsv" ]; then
	while IFS=$'\t' read -r name file _ _ _ want _; do
		case "$name" in '#'* | '') continue ;; esac
		f=$DATA/$file
		[ -f "$f" ] || f=$f.gz
		[ -f "$f" ] || continue
		check "gpu -P 3 hash --verify $name" "$(count --partitions 3 --verify "$f" | triangles)" "$want"
		check "gpu -P 2 range --verify $name" "$(count --partitions 2 --scheme range --verify "$f" | triangles)" "$want"
	done <"$DATA/MANIFEST.tsv"
fi
echo "datasets done at $(elapsed) s" | tee -a "$RES"

for s in $SCALES; do
	rmat_graph "$s"
	echo "$csr" >"$TMP/csr$s"
	check "rmat $s -P 4 hash" "$(count --partitions 4 "$f" | triangles)" "$want"
	check "rmat $s -P 4 range" "$(count --partitions 4 --scheme range "$f" | triangles)" "$want"
	check "rmat $s cap CSR/4" "$(count --partitions 0 --device-mem-limit $((csr / 4)) "$f" | triangles)" "$want"
done
echo "rmat checks done at $(elapsed) s" | tee -a "$RES"

f=$TMP/r$BENCH_SCALE.bin
if [ -f "$f" ]; then
	cap=$(($(cat "$TMP/csr$BENCH_SCALE") / 4))
	bench() { # name binary runs count-flags...
		local name=$1 bin=$2 runs=$3
		shift 3
		echo "== $name: bench e2e --runs $runs rmat $BENCH_SCALE -- $*" | tee -a "$RES"
		timeout 200 "$bin" bench e2e --runs "$runs" --device gpu --json "$f" -- "$@" >"$TMP/bench.json" 2>>"$OUT/bench.err"
		echo "rc=$?" >>"$RES"
		cat "$TMP/bench.json" >>"$RES"
		# One more run for the phases bench e2e does not list (partition).
		"$bin" count --device gpu --json --progress none --log-level warn "$@" "$f" 2>>"$OUT/bench.err" |
			tr -d '\n' | grep -o '"seconds": *{[^}]*}' >>"$RES"
	}
	bench whole "$BIN" "$RUNS"
	bench "partitions 4" "$BIN" "$RUNS" --partitions 4
	[ -x "$TMP/bin/trigrid-before" ] && bench "partitions 4, before" "$TMP/bin/trigrid-before" 3 --partitions 4
	[ "${BENCH_CAP:-1}" = 1 ] && bench "cap CSR/4" "$BIN" 3 --partitions 0 --device-mem-limit "$cap"
fi
# --verify recounts the whole graph with the reference kernel: minutes on
# rmat 22, so only when asked, last and bounded by VERIFY_TIMEOUT seconds.
if [ "${VERIFY_RMAT:-0}" = 1 ] && [ -f "$TMP/r22.bin" ]; then
	want=$(count "$TMP/r22.bin" | triangles)
	got=$(timeout "${VERIFY_TIMEOUT:-600}" "$BIN" count --device gpu --json --progress none --log-level warn --partitions 4 --verify "$TMP/r22.bin" 2>>"$OUT/count.err" | triangles)
	check "rmat 22 -P 4 --verify (at $(elapsed) s)" "$got" "$want"
fi
echo "done at $(elapsed) s, fail=$fail" | tee -a "$RES"
tail -5 "$OUT/count.err" >>"$RES" 2>/dev/null
exit $fail
