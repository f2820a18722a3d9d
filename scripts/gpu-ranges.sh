#!/usr/bin/env bash
# The whole graph counted in row ranges with its columns in host memory
# (kernels/gpu CountInRanges, tg_ranges_*), checked and timed on a GPU
# machine with nvcc but no Go, in one call:
#   1. builds libtrigrid_cuda.so from this tree;
#   2. the kernels/gpu tests of the ranges and the pieces and the
#      pipeline's capped tests through the real library, and
#      compute-sanitizer memcheck of the ranges' tests;
#   3. the datasets of MANIFEST.tsv at caps of 1/20 and 1/4 of their CSR
#      (`count --device-mem-limit CAP`, in ranges and as chosen, and in
#      ranges with --verify at 1/4) against their published counts;
#   4. rmat SCALES uncapped and at CSR/DIVS: the whole graph in ranges
#      (`count --row-ranges on --device-mem-limit CAP`), in blocks
#      (`--partitions 0`) and as chosen (`--row-ranges auto`) in
#      alternation, RUNS each, the phases of every run and the whole
#      process's wall time, then one run in ranges with its debug lines;
#      with a BEFORE_COMMIT's trigrid-before in the payload, its runs
#      uncapped, in ranges and as chosen in the same alternation, through
#      a library built from its own kernels/cuda (its ABI).
# Prepare on a machine with Go (DEV defaults to .dev/ranges):
#   scripts/gpu-ranges.sh --prepare [BEFORE_COMMIT]
# Run (from the repository root on the GPU machine, DEV carried):
#   bash $DEV/src/scripts/gpu-ranges.sh
# Knobs: RUNS (default 3), SCALES (default "23"; empty: none), DIVS (default "4 20"),
# SKIP_TESTS=1, SKIP_DATASETS=1, SKIP_BLOCKS=1 (no `--partitions 0` runs). Everything goes under $OUT; results.txt
# is the summary.
set -uo pipefail

. "$(dirname "$0")/lib/devcheck.sh"
if [ "${1:-}" = "--prepare" ]; then
	devcheck_prepare "${DEV:-$(dirname "$0")/../.dev/ranges}" "${2:-}"
	exit 0
fi

devcheck_setup gpu-ranges
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null), defrag $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null)" | tee -a "$RES"
RUNS=${RUNS:-3}
SCALES=${SCALES-"23"}
DIVS=${DIVS:-"4 20"}
before_lib_start

if [ -z "${SKIP_TESTS:-}" ]; then
	gotest kernels/gpu gpu.test 'CountInRanges|RangesRefuse|OrientInPieces|OrientMarked|PiecesMayTake|OrientOnDevice|CountUnderMemoryCaps'
	gotest pipeline pipeline.test 'TestPartitionedDeviceTooSmall|TestCountFileLargerThanDevice|TestCountFileCompactsWhileDeviceStarts'
	memcheck kernels/gpu gpu.test 'TestCountInRanges|TestRangesRefuse|TestOrientInPieces|TestOrientMarkedInPieces'
	echo "tests done at $(elapsed) s" | tee -a "$RES"
fi

capped() { # name file want csr
	for d in 20 4; do
		check "$1 CSR/$d ranges" "$(count --row-ranges on --device-mem-limit $(($4 / d)) "$2" | triangles)" "$3"
		check "$1 CSR/$d auto" "$(count --device-mem-limit $(($4 / d)) "$2" | triangles)" "$3"
	done
	check "$1 CSR/4 ranges --verify" "$(count --row-ranges on --verify --device-mem-limit $(($4 / 4)) "$2" | triangles)" "$3"
}
if [ -z "${SKIP_DATASETS:-}" ]; then
	each_dataset capped
	echo "datasets done at $(elapsed) s" | tee -a "$RES"
fi

before_lib_wait

timed() { # label args...: one run's phases and wall time (of TBIN, default BIN, through TLIB, default LIB)
	local label=$1 t0 t1 j
	shift
	t0=$(date +%s.%N)
	j=$(TRIGRID_CUDA_LIB=${TLIB:-$LIB} "${TBIN:-$BIN}" count --device gpu --json --progress none --log-level warn "$@" 2>>"$OUT/count.err")
	t1=$(date +%s.%N)
	local sec
	sec=$(echo "$j" | tr -d '\n' | grep -o '"seconds": *{[^}]*}')
	printf '%-24s tri=%s wait=%s clean=%s order=%s partition=%s count=%s kernel=%s total=%s ranges=%s mapped=%s wall=%.3f\n' "$label" \
		"$(echo "$j" | triangles)" "$(echo "$sec" | num device_wait)" "$(echo "$sec" | num clean)" "$(echo "$sec" | num order)" \
		"$(echo "$sec" | num partition)" "$(echo "$sec" | num count)" "$(echo "$sec" | num kernel)" "$(echo "$sec" | num total)" \
		"$(echo "$j" | num row_ranges)" "$(echo "$j" | num mapped_bytes)" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" | tee -a "$RES"
	TRI=$(echo "$j" | triangles)
}

for s in $SCALES; do
	rmat_graph "$s"
	for r in $(seq "$RUNS"); do
		timed "rmat $s uncapped" "$f"
		if [ -n "$BEFORE_LIB" ]; then
			TBIN=$TMP/bin/trigrid-before TLIB=$BEFORE_LIB timed "rmat $s before uncapped" "$f"
		fi
	done
	for d in $DIVS; do
		for r in $(seq "$RUNS"); do
			if [ -z "${SKIP_BLOCKS:-}" ]; then
				timed "rmat $s CSR/$d blocks" --partitions 0 --device-mem-limit $((csr / d)) "$f"
				check "rmat $s CSR/$d blocks" "$TRI" "$want"
			fi
			timed "rmat $s CSR/$d ranges" --row-ranges on --device-mem-limit $((csr / d)) "$f"
			check "rmat $s CSR/$d ranges" "$TRI" "$want"
			timed "rmat $s CSR/$d auto" --device-mem-limit $((csr / d)) "$f"
			check "rmat $s CSR/$d auto" "$TRI" "$want"
			if [ -n "$BEFORE_LIB" ]; then
				TBIN=$TMP/bin/trigrid-before TLIB=$BEFORE_LIB timed "rmat $s CSR/$d before ranges" --row-ranges on --device-mem-limit $((csr / d)) "$f"
				check "rmat $s CSR/$d before ranges" "$TRI" "$want"
				TBIN=$TMP/bin/trigrid-before TLIB=$BEFORE_LIB timed "rmat $s CSR/$d before auto" --device-mem-limit $((csr / d)) "$f"
				check "rmat $s CSR/$d before auto" "$TRI" "$want"
			fi
		done
		"$BIN" count --device gpu --json --progress none --log-level debug --row-ranges on --device-mem-limit $((csr / d)) "$f" \
			>"$OUT/debug-r$s-csr$d.json" 2>"$OUT/debug-r$s-csr$d.log"
		grep -E "ranges|pieces|counter created|device selected" "$OUT/debug-r$s-csr$d.log" | tee -a "$RES"
	done
	echo "rmat $s done at $(elapsed) s" | tee -a "$RES"
done
echo "all done at $(elapsed) s, fail=$fail" | tee -a "$RES"
