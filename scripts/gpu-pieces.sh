#!/usr/bin/env bash
# The device's preprocessing in pieces (kernels/gpu orientInPieces: pairs
# that do not fit the device whole are sorted, merged and oriented a piece
# at a time), checked and timed on a GPU machine with nvcc but no Go, in
# one call:
#   1. builds libtrigrid_cuda.so from this tree (and, with a BEFORE payload,
#      the before tree's library beside it);
#   2. the kernels/gpu tests of the pieces and the pipeline's capped tests
#      through the real library, and compute-sanitizer memcheck of the
#      pieces' test;
#   3. the datasets of MANIFEST.tsv at caps of 1/20 and 1/4 of their CSR
#      (`--partitions 0`, and the whole graph) and at 1/4 with --verify
#      (the device's forward graph against the host's), against their
#      published counts;
#   4. rmat SCALES at CSR/4 and CSR/20 (`count --partitions 0
#      --device-mem-limit CAP`): before and after in alternation, RUNS each,
#      the phases of every run and the whole process's wall time.
# Prepare on a machine with Go (DEV defaults to .dev/pieces):
#   scripts/gpu-pieces.sh --prepare [BEFORE_COMMIT]
# Run (from the repository root on the GPU machine, DEV carried):
#   bash $DEV/src/scripts/gpu-pieces.sh
# Knobs: RUNS (default 3), SCALES (default "23"), DIVS (default "4 20"),
# SKIP_TESTS=1, SKIP_DATASETS=1. Everything goes under $OUT; results.txt
# is the summary.
set -uo pipefail

. "$(dirname "$0")/lib/devcheck.sh"
if [ "${1:-}" = "--prepare" ]; then
	devcheck_prepare "${DEV:-$(dirname "$0")/../.dev/pieces}" "${2:-}"
	exit 0
fi

devcheck_setup gpu-pieces
RUNS=${RUNS:-3}
SCALES=${SCALES:-"23"}
DIVS=${DIVS:-"4 20"}
before_lib_start

if [ -z "${SKIP_TESTS:-}" ]; then
	gotest kernels/gpu gpu.test 'OrientInPieces|OrientOnDevice|CutRanges|Preprocess|CountUnderMemoryCaps' 150
	gotest pipeline pipeline.test 'TestPartitionedDeviceTooSmall|TestCountFileLargerThanDevice'
	memcheck kernels/gpu gpu.test 'TestOrientInPieces'
	echo "tests done at $(elapsed) s" | tee -a "$RES"
fi

capped() { # name file want csr
	for d in 20 4; do
		check "$1 CSR/$d P0" "$(count --partitions 0 --device-mem-limit $(($4 / d)) "$2" | triangles)" "$3"
		check "$1 CSR/$d whole" "$(count --device-mem-limit $(($4 / d)) "$2" | triangles)" "$3"
	done
	check "$1 CSR/4 P0 --verify" "$(count --partitions 0 --verify --device-mem-limit $(($4 / 4)) "$2" | triangles)" "$3"
}
if [ -z "${SKIP_DATASETS:-}" ]; then
	each_dataset capped
	echo "datasets done at $(elapsed) s" | tee -a "$RES"
fi

timed() { # label bin lib args...: one run's phases and wall time
	local label=$1 bin=$2 lib=$3 t0 t1 j
	shift 3
	t0=$(date +%s.%N)
	j=$(TRIGRID_CUDA_LIB=$lib "$bin" count --device gpu --json --progress none --log-level warn "$@" 2>>"$OUT/count.err")
	t1=$(date +%s.%N)
	local sec
	sec=$(echo "$j" | tr -d '\n' | grep -o '"seconds": *{[^}]*}')
	printf '%-26s tri=%s read=%s clean=%s order=%s partition=%s count=%s total=%s wall=%.3f\n' "$label" \
		"$(echo "$j" | triangles)" "$(echo "$sec" | num read)" "$(echo "$sec" | num clean)" "$(echo "$sec" | num order)" \
		"$(echo "$sec" | num partition)" "$(echo "$sec" | num count)" "$(echo "$sec" | num total)" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" | tee -a "$RES"
	TRI=$(echo "$j" | triangles)
}

before_lib_wait
for s in $SCALES; do
	rmat_graph "$s"
	for r in $(seq "$RUNS"); do timed "rmat $s uncapped" "$BIN" "$LIB" "$f"; done
	for d in $DIVS; do
		for r in $(seq "$RUNS"); do
			if [ -n "$BEFORE_LIB" ]; then
				timed "rmat $s CSR/$d before" "$TMP/bin/trigrid-before" "$BEFORE_LIB" --partitions 0 --device-mem-limit $((csr / d)) "$f"
				check "rmat $s CSR/$d before" "$TRI" "$want"
			fi
			timed "rmat $s CSR/$d after" "$BIN" "$LIB" --partitions 0 --device-mem-limit $((csr / d)) "$f"
			check "rmat $s CSR/$d after" "$TRI" "$want"
		done
	done
	echo "rmat $s done at $(elapsed) s" | tee -a "$RES"
done
echo "all done at $(elapsed) s, fail=$fail" | tee -a "$RES"
