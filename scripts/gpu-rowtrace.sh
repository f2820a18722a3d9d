#!/usr/bin/env bash
# Where tg_count_rows' time goes, on a GPU machine with nvcc but no Go:
# builds libtrigrid_cuda.so with -DTG_ROWS_TRACE (a measuring build that
# prints, when a context is destroyed, its calls' host time by phase and
# the GPU time of the ranges' copies and kernels), then counts rmat SCALE
# with each line of CASES ("LABEL|FLAGS", CSR/N replaced by the bytes) and
# shows the report's figures with the trace. Prepare with
# scripts/gpu-rowstream.sh --prepare; run from the repository root on the
# GPU machine: bash $DEV/src/scripts/gpu-rowtrace.sh. Output under $OUT.
set -uo pipefail

. "$(dirname "$0")/lib/devcheck.sh"
devcheck_setup gpu-rowtrace
SCALE=${SCALE:-23}
TRACE=$TMP/cuda-trace
rm -rf "$TRACE" && cp -r "$SRC/kernels/cuda" "$TRACE"
make -C "$TRACE" clean >/dev/null 2>&1
if ! make -C "$TRACE" -j16 libtrigrid_cuda.so NVCCFLAGS="-O3 -std=c++17 -arch sm_90 -lineinfo -Xcompiler -fPIC -DTG_ROWS_TRACE" >"$OUT/trace-build.log" 2>&1; then
	tail -30 "$OUT/trace-build.log"
	exit 1
fi
rmat_graph "$SCALE"
while IFS='|' read -r label flags; do
	[ -n "$label" ] || continue
	for d in 20 4 3 2; do flags=${flags//CSR\/$d/$((csr / d))}; done
	flags=${flags//CSR/$csr}
	j=$("$BIN" count --device gpu --json --progress none --log-level warn --cuda-lib "$TRACE/libtrigrid_cuda.so" $flags "$f" 2>"$OUT/trace.err")
	check "rmat $SCALE $label" "$(echo "$j" | triangles)" "$want"
	echo "  count $(echo "$j" | grep -o '"count": *[0-9.e-]*' | head -1 | grep -o '[0-9.e-]*$') stall $(echo "$j" | grep -o '"stall_seconds": *[0-9.e-]*' | grep -o '[0-9.e-]*$') calls $(echo "$j" | grep -o '"call_seconds": *[0-9.e-]*' | grep -o '[0-9.e-]*$') idle $(echo "$j" | grep -o '"idle_share": *[0-9.e-]*' | grep -o '[0-9.e-]*$')" | tee -a "$RES"
	grep -E "trace|timeline" "$OUT/trace.err" | sed 's/^/  /' | tee -a "$RES"
done <<<"${CASES:?CASES: lines LABEL|FLAGS}"
echo "done at $(elapsed) s" | tee -a "$RES"
