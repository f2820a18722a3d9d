#!/usr/bin/env bash
# Where the count in row ranges spends its time, on a GPU machine with
# nvcc but no Go, in one call:
#   1. builds libtrigrid_cuda.so, with PROFILE=1 a second one with
#      TG_RANGES_PROFILE (ranges.cu then prints, per range, the entries,
#      the kernel's own time and the pairs and items of each way of
#      intersecting), and with a BEFORE_COMMIT's kernels/cuda in the
#      payload its library (same C ABI);
#   2. the ranges' kernels/gpu tests through the library and under
#      compute-sanitizer memcheck (SKIP_TESTS=1: not);
#   3. rmat SCALE at CSR/DIVS in ranges (`count --row-ranges on`), RUNS
#      each through the build before (trigrid-before and its library,
#      when the payload has them) and this one
#      at each ranges_dense of DENSE (default "0 512 2048"), in
#      alternation: count phase, kernels, wall; every count checked
#      against the uncapped one;
#      and through each library of VARIANTS ("name=D1,D2 ...": ranges.cu
#      rebuilt with -DD1 -DD2: a build-time choice tried beside);
#   4. with PROFILE=1 one run each through the profiling library (its
#      lines and the Go side's debug lines); with NCU=1 and ncu there, the
#      count kernel's speed of light, warp states, memory workload and
#      occupancy of NCU_LAUNCHES launches at the first of DIVS.
# Prepare on a machine with Go:
#   DEV=.dev/rangeprof scripts/gpu-ranges.sh --prepare [BEFORE_COMMIT]
# Run (from the repository root on the GPU machine, DEV carried):
#   bash $DEV/src/scripts/gpu-rangeprof.sh
# Knobs: SCALE (default 23), DIVS (default "4 20"), RUNS (default 3),
# DENSE, VARIANTS, PROFILE, NCU, NCU_LAUNCHES (default 2), SKIP_TESTS.
# Everything goes under $OUT; the summary is also printed.
set -uo pipefail

. "$(dirname "$0")/lib/devcheck.sh"
devcheck_setup gpu-rangeprof
SCALE=${SCALE:-23}
DIVS=${DIVS:-"4 20"}
RUNS=${RUNS:-3}
DENSE=${DENSE:-"0 512 2048"}
before_lib_start
# build_lib DIR DEFS: this tree's kernels/cuda built in $TMP/DIR with
# -D of each of the comma-separated DEFS (ranges.cu rebuilt, the other
# objects kept); the log in $OUT/build-DIR.log.
build_lib() {
	rm -rf "$TMP/$1" && cp -a "$SRC/kernels/cuda" "$TMP/$1" && touch "$TMP/$1/ranges.cu"
	make -C "$TMP/$1" -j8 NVCCFLAGS="-O3 -std=c++17 -arch sm_90 -lineinfo -Xcompiler -fPIC $(echo ",$2" | sed 's/,/ -D/g')" \
		libtrigrid_cuda.so >"$OUT/build-$1.log" 2>&1
}
PROF=$TMP/prof/libtrigrid_cuda.so
if [ -n "${PROFILE:-}" ]; then
	build_lib prof TG_RANGES_PROFILE || { tail -20 "$OUT/build-prof.log"; exit 1; }
fi
VARLIBS=()
for v in ${VARIANTS:-}; do
	name=${v%%=*}
	if build_lib "var-$name" "${v#*=}"; then
		VARLIBS+=("$name")
	else
		tail -5 "$OUT/build-var-$name.log"
		echo "variant $name did not build" | tee -a "$RES"
	fi
done
if [ -z "${SKIP_TESTS:-}" ]; then
	gotest kernels/gpu gpu.test 'CountInRanges|RangesRefuse|OrientInPieces|CountUnderMemoryCaps'
	gotest pipeline pipeline.test 'TestCountFileLargerThanDevice|TestCountFileCompactsWhileDeviceStarts'
	memcheck kernels/gpu gpu.test 'TestCountInRanges|TestRangesRefuse'
	echo "tests done at $(elapsed) s" | tee -a "$RES"
fi
before_lib_wait

timed() { # label lib args...: one run's count phase, kernels and wall time (of TBIN, default BIN)
	local label=$1 lib=$2 t0 t1 j sec
	shift 2
	t0=$(date +%s.%N)
	j=$(TRIGRID_CUDA_LIB=$lib "${TBIN:-$BIN}" count --device gpu --json --progress none --log-level warn "$@" 2>>"$OUT/count.err")
	t1=$(date +%s.%N)
	sec=$(echo "$j" | tr -d '\n' | grep -o '"seconds": *{[^}]*}')
	printf '%-22s tri=%s clean=%s order=%s count=%s kernel=%s total=%s ranges=%s wall=%.3f\n' "$label" "$(echo "$j" | triangles)" \
		"$(echo "$sec" | num clean)" "$(echo "$sec" | num order)" "$(echo "$sec" | num count)" "$(echo "$sec" | num kernel)" "$(echo "$sec" | num total)" \
		"$(echo "$j" | num row_ranges)" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" | tee -a "$RES"
	TRI=$(echo "$j" | triangles)
}

rmat_graph "$SCALE"
for d in $DIVS; do
	for r in $(seq "$RUNS"); do
		if [ -n "$BEFORE_LIB" ]; then
			TBIN=$TMP/bin/trigrid-before timed "CSR/$d before" "$BEFORE_LIB" --row-ranges on --device-mem-limit $((csr / d)) "$f"
			check "rmat $SCALE CSR/$d before" "$TRI" "$want" >/dev/null
		fi
		for w in $DENSE; do
			timed "CSR/$d dense=$w" "$LIB" --row-ranges on --kernel-setting ranges_dense="$w" --device-mem-limit $((csr / d)) "$f"
			check "rmat $SCALE CSR/$d ranges_dense=$w" "$TRI" "$want"
		done
		for name in "${VARLIBS[@]}"; do
			timed "CSR/$d $name" "$TMP/var-$name/libtrigrid_cuda.so" --row-ranges on --device-mem-limit $((csr / d)) "$f"
			check "rmat $SCALE CSR/$d variant $name" "$TRI" "$want"
		done
	done
	if [ -n "${PROFILE:-}" ]; then
		j=$(TRIGRID_CUDA_LIB=$PROF "$BIN" count --device gpu --json --progress none --log-level debug --row-ranges on \
			--device-mem-limit $((csr / d)) "$f" 2>"$OUT/prof-csr$d.log")
		check "rmat $SCALE CSR/$d ranges (profiling library)" "$(echo "$j" | triangles)" "$want"
		grep -E "ranges-profile|counted in row ranges" "$OUT/prof-csr$d.log" | sed "s/^/CSR\/$d /" | tee -a "$RES"
	fi
done
d=${DIVS%% *}
NCU_BIN=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "${NCU:-}" ] && [ -n "$NCU_BIN" ]; then
	timeout 300 "$NCU_BIN" --kernel-name regex:ranges_count --launch-count "${NCU_LAUNCHES:-2}" \
		--section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy \
		--section LaunchStats \
		"$BIN" count --device gpu --progress none --row-ranges on --device-mem-limit $((csr / d)) "$f" \
		>"$OUT/ncu.txt" 2>&1
	grep -vE "^==PROF==|^ *$|----" "$OUT/ncu.txt" | head -150
fi
echo "all done at $(elapsed) s, fail=$fail" | tee -a "$RES"
