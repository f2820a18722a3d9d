#!/usr/bin/env bash
# Out-of-core streaming check in ONE call on a GPU machine with nvcc but no
# Go (binaries built beforehand: scripts/gpu-stream.sh --prepare DIR):
#   1. builds libtrigrid_cuda.so;
#   2. runs the device tests (kernels/gpu and cmd/trigrid: counts on the
#      GPU against the reference, the out-of-core sweep at small scale);
#   3. compute-sanitizer on a small capped run (asynchronous uploads from
#      pinned blocks, slots evicted and reloaded);
#   4. generates rmat graphs and sweeps device-memory caps on them and the
#      datasets (scripts/gpu-outofcore.sh: exact at every cap);
#   5. the throughput table of rmat 23: uncapped, a quarter and a twentieth
#      of its CSR, pinned and not, each run RUNS times, with the
#      device_memory figures of `count --json`.
# Results go under $OUT (results.txt is the summary); each step is bounded
# by time so that a slow step leaves the rest its share. Knobs: SWEEP (rmat
# scales swept), TABLE_SCALE, RUNS, DIVS (caps as fractions of the CSR),
# EXTRA_P4 and EXTRA_P20 (P forced at a quarter and a twentieth of the
# CSR), SKIP_TESTS=1, TEST_RUN (the kernels/gpu tests run), SKIP_CMD_TESTS=1,
# UNPINNED=0 (no runs without pinned memory), SKIP_SWEEP=1; OLD_CUDA=DIR (a kernels/cuda tree of
# another revision) builds it too and, with TABLE=ab, times the capped rows
# with both libraries in turn instead of the table; TABLE=capped times
# only the capped rows; TABLE=kernels times the capped rows once with each
# of KERNELS.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" = "--prepare" ]; then
	set -e
	D=${2:?usage: gpu-stream.sh --prepare DIR}
	mkdir -p "$D/bin" "$D/data"
	rm -f "$D/bin/"* # an earlier --prepare's
	CGO_ENABLED=0 go build -ldflags='-s -w' -o "$D/bin/trigrid" ./cmd/trigrid
	CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$D/bin/gpu.test" ./kernels/gpu/
	CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$D/bin/cmd.test" ./cmd/trigrid/
	gzip -f "$D/bin/"*
	for f in MANIFEST.tsv CA-GrQc.txt facebook_combined.txt soc-Epinions1.txt; do
		cp "${DATASETS:-../shared/datasets}/$f" "$D/data/" 2>/dev/null || echo "no $f"
	done
	exit 0
fi

cd "$ROOT"
OUT=${OUT:-/tmp/gpu-stream}
mkdir -p "$OUT"
D=${D:?D: the directory --prepare wrote}
for z in "$D/bin/"*.gz; do [ -f "$z" ] && gunzip -f "$z"; done
chmod +x "$D/bin/"*
BIN=$D/bin/trigrid
DATA=$D/data
LIB=$ROOT/kernels/cuda/libtrigrid_cuda.so
RES=$OUT/results.txt
RUNS=${RUNS:-3}
SWEEP=${SWEEP:-"22"}
TABLE_SCALE=${TABLE_SCALE:-23}
export TRIGRID_CUDA_LIB=$LIB TRIGRID_DATA_DIR=$DATA
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }

date -u >"$RES"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>"$RES" 2>&1
if ! make -C kernels/cuda -j16 all >"$OUT/build.log" 2>&1; then
	grep -E "error|Error" "$OUT/build.log" | head -30 | tee -a "$RES"
	exit 1
fi
echo "build ok ($(elapsed) s)" | tee -a "$RES"
OLD_LIB=""
if [ -n "${OLD_CUDA:-}" ]; then
	if make -C "$OLD_CUDA" -j16 all >"$OUT/build-old.log" 2>&1; then
		OLD_LIB=$OLD_CUDA/libtrigrid_cuda.so
		echo "old library built ($(elapsed) s)" | tee -a "$RES"
	else
		echo "old library: build failed" | tee -a "$RES"
	fi
fi

if [ "${SKIP_TESTS:-0}" != 1 ]; then
	(cd kernels/gpu && TRIGRID_MAX_SCALE=${MAX_SCALE:-16} timeout 100 "$D/bin/gpu.test" -test.v -test.timeout 90s \
		-test.run "${TEST_RUN:-Device|CountAhead|CountUnderMemoryCaps|BlockBytes|Pin}" >"$OUT/gpu-test.log" 2>&1)
	echo "kernels/gpu tests on the GPU rc=$? ($(elapsed) s)" | tee -a "$RES"
	grep -E "^(--- FAIL|FAIL|ok|PASS)" "$OUT/gpu-test.log" | head -10 | tee -a "$RES"
	[ "${SKIP_CMD_TESTS:-0}" = 1 ] || (cd cmd/trigrid && timeout 100 "$D/bin/cmd.test" -test.v -test.timeout 90s -test.run 'Device|OutOfCore' >"$OUT/cmd-test.log" 2>&1)
	echo "cmd/trigrid tests on the GPU rc=$? ($(elapsed) s)" | tee -a "$RES"
	grep -E "^(--- FAIL|FAIL|ok|PASS)" "$OUT/cmd-test.log" 2>/dev/null | head -10 | tee -a "$RES"
fi

if command -v compute-sanitizer >/dev/null && [ -f "$DATA/CA-GrQc.txt" ]; then
	timeout 120 compute-sanitizer --tool memcheck --leak-check full "$BIN" count --device gpu --json --progress none \
		--partitions 3 --device-mem-limit 300KiB "$DATA/CA-GrQc.txt" >"$OUT/sanitizer.log" 2>&1
	echo "compute-sanitizer memcheck (CA-GrQc, P = 3, 300 KiB cap) rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log")" | tee -a "$RES"
	grep -o '"triangles":[0-9]*' "$OUT/sanitizer.log" | head -1 | tee -a "$RES"
fi

for s in $SWEEP $TABLE_SCALE; do
	[ -f "/tmp/r$s.bin" ] || "$BIN" gen rmat --scale "$s" --edge-factor 16 --seed 1 -o "/tmp/r$s.bin" >/dev/null 2>&1
done
echo "graphs generated ($(elapsed) s)" | tee -a "$RES"

# The throughput table first: it is what the figures in docs come from.
field() { python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$1"; }
G=/tmp/r$TABLE_SCALE.bin
base=$("$BIN" count --device gpu --json --progress none --log-level warn "$G")
csr=$(echo "$base" | field '8*(r["vertices"]+1)+4*r["edges"]')
echo "rmat $TABLE_SCALE: CSR $csr bytes, $(echo "$base" | field 'r["triangles"]') triangles" | tee -a "$RES"
# summary LABEL < JSON: one line of the figures.
summary() {
	python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
d = r.get("device_memory") or {}
p = r.get("partition") or {}
s = r["seconds"]
print("%-22s P=%-3s fit=%-3s tri %d count %.3f kernel %.3f part %.3f total %.3f peak %s copied %s uploads %s ahead %s pinned %s stall %.3f splits %s idle %.3f" % (
    sys.argv[1], p.get("p", "-"), p.get("p_fit", "-"), r["triangles"], s["count"], s.get("kernel", 0), s.get("partition", 0), s["total"],
    d.get("peak_bytes", "-"), d.get("copied_bytes", "-"), d.get("uploads", "-"), d.get("uploads_ahead", "-"), d.get("uploads_pinned", "-"),
    d.get("stall_seconds", 0), d.get("splits", "-"), d.get("idle_share", 0)))
' "$1"
}
row() { # runs, label, extra args...
	local n=$1 label=$2
	shift 2
	for run in $(seq "$n"); do
		out=$("$BIN" count --device gpu --json --progress none --log-level error "$@" "$G" 2>&1) || { echo "$label: FAILED: $(echo "$out" | tail -1)" | tee -a "$RES"; return; }
		echo "$out" >"$OUT/table-$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')-$run.json"
		echo "$out" | summary "$label" | tee -a "$RES"
	done
}
q=$((csr / 4))
t=$((csr / 20))
if [ "${TABLE:-}" = ab ] && [ -n "$OLD_LIB" ]; then
	for run in $(seq "$RUNS"); do
		row 1 "CSR/20 P=0 new" --partitions 0 --device-mem-limit "$t"
		row 1 "CSR/20 P=0 old" --partitions 0 --device-mem-limit "$t" --cuda-lib "$OLD_LIB"
		row 1 "CSR/4 P=0 new" --partitions 0 --device-mem-limit "$q"
		row 1 "CSR/4 P=0 old" --partitions 0 --device-mem-limit "$q" --cuda-lib "$OLD_LIB"
	done
	echo "a/b done ($(elapsed) s)" | tee -a "$RES"
	exit 0
fi
if [ "${TABLE:-}" = kernels ]; then
	for k in ${KERNELS:-wetric trust grouptc trix polak}; do
		row 1 "CSR/4 P=0 $k" --partitions 0 --device-mem-limit "$q" --kernel "$k"
		row 1 "CSR/20 P=0 $k" --partitions 0 --device-mem-limit "$t" --kernel "$k"
	done
	exit 0
fi
if [ "${TABLE:-}" = capped ]; then
	row "$RUNS" "CSR/20 P=0" --partitions 0 --device-mem-limit "$t"
	row "$RUNS" "CSR/4 P=0" --partitions 0 --device-mem-limit "$q"
	exit 0
fi
row "$RUNS" "uncapped"
row "$RUNS" "CSR/4 P=0" --partitions 0 --device-mem-limit "$q"
row "$RUNS" "CSR/20 P=0" --partitions 0 --device-mem-limit "$t"
row "$RUNS" "P=4 uncapped" --partitions 4
# One run each: nothing pinned (UNPINNED=0 skips these) and other P.
if [ "${UNPINNED:-1}" = 1 ]; then
	row 1 "CSR/4 P=0 unpinned" --partitions 0 --device-mem-limit "$q" --pinned-host-mem 0
	row 1 "CSR/20 P=0 unpinned" --partitions 0 --device-mem-limit "$t" --pinned-host-mem 0
fi
for p in ${EXTRA_P4:-4 5 6 8}; do row 1 "CSR/4 P=$p" --partitions "$p" --device-mem-limit "$q"; done
for p in ${EXTRA_P20:-10 12}; do row 1 "CSR/20 P=$p" --partitions "$p" --device-mem-limit "$t"; done
echo "table done ($(elapsed) s)" | tee -a "$RES"
[ "${SKIP_SWEEP:-0}" = 1 ] && exit 0

# The cap sweep: exact at every cap.
graphs=""
for s in $SWEEP; do graphs="$graphs /tmp/r$s.bin"; done
for f in facebook_combined.txt soc-Epinions1.txt CA-GrQc.txt; do [ -f "$DATA/$f" ] && graphs="$graphs $DATA/$f"; done
MANIFEST=$DATA/MANIFEST.tsv timeout "${SWEEP_TIMEOUT:-200}" scripts/gpu-outofcore.sh "$BIN" "$LIB" $graphs >"$OUT/sweep.log" 2>&1
echo "cap sweep rc=$? ($(elapsed) s)" | tee -a "$RES"
grep -cE " ok$" "$OUT/sweep.log" | sed 's/^/exact runs: /' | tee -a "$RES"
grep -E "WRONG|FAILED" "$OUT/sweep.log" | head | tee -a "$RES"
exit 0
