#!/usr/bin/env bash
# Row streaming under device-memory caps (`count --device gpu --partitions
# 0 --device-mem-limit CAP --row-stream auto|on|off`), checked and timed
# on a GPU machine that has nvcc but no Go, in one call:
#   1. builds libtrigrid_cuda.so from this tree;
#   2. the kernels/gpu tests of streaming and of capped counting through
#      the real library, and compute-sanitizer memcheck of a streamed run;
#   3. the datasets of MANIFEST.tsv at caps of 1/20, 1/4 and 1/2 of their
#      CSR with --row-stream on, and whole (in chunks of rows) at 1/20 and
#      1/4, against their published counts;
#   4. rmat SCALES: the uncapped count, then at caps of CSR/4 and CSR/20
#      with streaming off and on (auto at the end), alternating, RUNS
#      each: triangles checked, and the count phase, kernel time, partition
#      time, total and device figures of every run in the table.
# Prepare on a machine with Go (DEV defaults to .dev/rowstream):
#   scripts/gpu-rowstream.sh --prepare
# Run (from the repository root on the GPU machine, DEV carried):
#   bash $DEV/src/scripts/gpu-rowstream.sh
# Everything goes under $OUT; results.txt is the summary. Knobs: RUNS
# (default 3), SCALES (default "23"), DIVS (caps as CSR/DIV, default "4
# 20"), MODES (default "off on"), EXTRA (more count flags), SKIP_TESTS=1,
# SKIP_DATASETS=1; CASES (lines "LABEL|FLAGS", FLAGS may say CSR for the
# graph's CSR bytes, e.g. "P4 /3 on|--partitions 4 --device-mem-limit
# CSR/3 --row-stream on") times those flags instead of the mode table.
set -uo pipefail

. "$(dirname "$0")/lib/devcheck.sh"
if [ "${1:-}" = "--prepare" ]; then
	devcheck_prepare "${DEV:-$(dirname "$0")/../.dev/rowstream}" "${2:-}"
	exit 0
fi

devcheck_setup gpu-rowstream
RUNS=${RUNS:-3}
SCALES=${SCALES:-"23"}
DIVS=${DIVS:-"4 20"}
MODES=${MODES:-"off on"}
EXTRA=${EXTRA:-}

if [ -z "${SKIP_TESTS:-}" ]; then
	gotest kernels/gpu gpu.test 'RowStreaming|CountUnderMemoryCaps|BlockBytes|CountAhead|Chunk|BadOffset|FailedPreprocess|PrepareIDs' 150
	memcheck kernels/gpu gpu.test 'TestRowStreamingUnderMemoryCaps|TestRowStreamingRefusesMalformed|TestCountInChunks'
	echo "tests done at $(elapsed) s" | tee -a "$RES"
fi

streamed() { # name file want csr
	for d in 20 4 2; do
		check "$1 CSR/$d --row-stream on" "$(count --partitions 0 --device-mem-limit $(($4 / d)) --row-stream on "$2" | triangles)" "$3"
	done
	for d in 20 4; do # the whole graph under the cap
		check "$1 CSR/$d whole" "$(count --device-mem-limit $(($4 / d)) "$2" | triangles)" "$3"
	done
}
if [ -z "${SKIP_DATASETS:-}" ]; then
	each_dataset streamed
	echo "datasets done at $(elapsed) s" | tee -a "$RES"
fi

row() { # label json
	local j=$2
	printf '%-34s P=%s tri=%s count=%s kernel=%s part=%s total=%s stall/calls=%s copiedGB=%s uploads=%s streamed=%s ranges=%s idle=%s\n' "$1" \
		"$(echo "$j" | grep -o '"p": *[0-9]*' | head -1 | grep -o '[0-9]*$')" "$(echo "$j" | triangles)" \
		"$(echo "$j" | grep -o '"count": *[0-9.e-]*' | head -1 | grep -o '[0-9.e-]*$')" \
		"$(echo "$j" | grep -o '"kernel": *[0-9.e-]*' | head -1 | grep -o '[0-9.e-]*$')" \
		"$(echo "$j" | grep -o '"partition": *[0-9.e-]*' | head -1 | grep -o '[0-9.e-]*$')" \
		"$(echo "$j" | grep -o '"total": *[0-9.e-]*' | head -1 | grep -o '[0-9.e-]*$')" \
		"$(echo "$j" | grep -o '"stall_seconds": *[0-9.e-]*' | head -1 | grep -o '[0-9.e-]*$')/$(echo "$j" | grep -o '"call_seconds": *[0-9.e-]*' | head -1 | grep -o '[0-9.e-]*$')" \
		"$(echo "$j" | grep -o '"copied_bytes": *[0-9]*' | head -1 | grep -o '[0-9]*$' | awk '{printf "%.2f", $1/1e9}')" \
		"$(echo "$j" | field uploads)" "$(echo "$j" | field streamed_subtasks)" "$(echo "$j" | field stream_ranges)" \
		"$(echo "$j" | grep -o '"idle_share": *[0-9.e-]*' | head -1 | grep -o '[0-9.e-]*$')" | tee -a "$RES"
}

for s in $SCALES; do
	rmat_graph "$s"
	for r in $(seq "$RUNS"); do row "rmat $s uncapped" "$(count "$f")"; done
	if [ -n "${CASES:-}" ]; then
		for r in $(seq "$RUNS"); do
			while IFS='|' read -r label flags; do
				[ -n "$label" ] || continue
				for d in 20 4 3 2; do flags=${flags//CSR\/$d/$((csr / d))}; done
				flags=${flags//CSR/$csr}
				j=$(count $flags "$f")
				row "rmat $s $label" "$j"
				check "rmat $s $label" "$(echo "$j" | triangles)" "$want"
			done <<<"$CASES"
		done
		continue
	fi
	for d in $DIVS; do
		for r in $(seq "$RUNS"); do
			for m in $MODES; do
				j=$(count --partitions 0 --device-mem-limit $((csr / d)) --row-stream "$m" $EXTRA "$f")
				row "rmat $s CSR/$d $m" "$j"
				check "rmat $s CSR/$d $m" "$(echo "$j" | triangles)" "$want"
			done
		done
		echo "rmat $s CSR/$d done at $(elapsed) s" | tee -a "$RES"
	done
done
echo "all done at $(elapsed) s, fail=$fail" | tee -a "$RES"
