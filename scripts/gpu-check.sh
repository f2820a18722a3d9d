#!/usr/bin/env bash
# GPU check, meant for ONE call on the device machine (no Go there): build
# libtrigrid_cuda.so, run the Go conformance tests (binary built beforehand
# with CGO_ENABLED=0 go test -c -o .dev/bin/gpu.test ./kernels/gpu/), run
# compute-sanitizer on a small graph, generate rmat graphs and time every
# kernel on shipped and generated graphs. Everything goes under $OUT
# (results.txt is the table). Inputs: .dev/data (datasets), .dev/bin
# (gpu.test, optionally trigrid), .dev/rmat.py when trigrid is absent.
set -uo pipefail
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
ROOT=$(pwd)
DATA=${TRIGRID_DATA_DIR:-$ROOT/.dev/data}
BIN=$ROOT/.dev/bin
SCALES=${SCALES:-"22 23"}
LIB=$ROOT/kernels/cuda/libtrigrid_cuda.so
TGDRV=$ROOT/kernels/cuda/tools/tgdrv
RES=$OUT/results.txt

nvidia-smi >"$OUT/smi.txt" 2>&1
date -u >"$RES"
head -12 "$OUT/smi.txt" >>"$RES"
if ! make -C kernels/cuda -j16 all tgdrv >"$OUT/build.log" 2>&1; then
	tail -40 "$OUT/build.log"
	exit 1
fi

if [ -x "$BIN/gpu.test" ]; then
	TRIGRID_CUDA_LIB=$LIB TRIGRID_DATA_DIR=$DATA TRIGRID_MAX_SCALE=${MAX_SCALE:-20} \
		timeout 300 "$BIN/gpu.test" -test.v -test.run Device -test.timeout 290s >"$OUT/conformance.log" 2>&1
	echo "conformance rc=$?" | tee -a "$RES"
	grep -E "^(--- |FAIL|ok|PASS)|_test.go" "$OUT/conformance.log" | head -40 | tee -a "$RES"
fi

timeout 150 compute-sanitizer --tool memcheck "$TGDRV" -lib "$LIB" -runs 1 -p 3 "$DATA/CA-GrQc.txt" >"$OUT/sanitizer.log" 2>&1
echo "compute-sanitizer: $(grep 'ERROR SUMMARY' "$OUT/sanitizer.log")" | tee -a "$RES"

graphs=("$DATA/soc-Epinions1.txt")
for s in $SCALES; do
	f=/tmp/rmat$s.u32
	if [ -x "$BIN/trigrid" ]; then
		f=/tmp/rmat$s.bin
		"$BIN/trigrid" gen rmat --scale "$s" --edge-factor 16 -o "$f" >>"$OUT/gen.log" 2>&1
	else
		python3 "$ROOT/.dev/rmat.py" "$s" "$f" >>"$OUT/gen.log" 2>&1
	fi
	graphs+=("$f")
done
if [ -x "$BIN/trigrid" ]; then
	timeout 300 "$BIN/trigrid" bench kernels --cuda-lib "$LIB" --runs 5 "${graphs[@]}" 2>&1 | tee -a "$RES"
else
	timeout 300 "$TGDRV" -lib "$LIB" -runs 5 -p 2 "${graphs[@]}" 2>&1 | tee -a "$RES"
fi
