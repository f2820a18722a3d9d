#!/usr/bin/env bash
# The whole run on a GPU machine that has nvcc but no Go, in one call:
#   1. builds libtrigrid_cuda.so from scratch;
#   2. conformance: `trigrid count --device gpu --cuda-lib "$LIB"` on every dataset of
#      MANIFEST.tsv against its published count, and on generated rmat
#      graphs against `trigrid count --device cpu` of the same file;
#      Also `--verify` on the datasets (the device's cleaning against the
#      host's), the device preprocessing tests of kernels/gpu (every id
#      layout against the host), and compute-sanitizer on small counts;
#   3. `trigrid bench e2e --device gpu --cuda-lib "$LIB"` (median of fresh processes: read,
#      clean, order, count, whole process, CPU time, host peak) on rmat 22 as
#      binary and as text, then on the largest rmat scales that the time
#      left allows.
# Prepare on a machine with Go:
#   scripts/gpu-e2e.sh --prepare      (writes $DEV/trigrid, $DEV/gpu.test and $DEV/data)
# Everything goes under $OUT; results.txt is the summary. Knobs: RUNS (runs
# per graph, default 5), BIG_SCALES (default "24 25"), BUDGET_S (seconds
# after which no further scale is started, default 120), CPU_CHECK_MAX
# (largest scale also counted on the CPU, default 25), BEFORE (another
# trigrid binary timed on the same graphs, for before/after figures), DEV
# (the prepared folder, default .dev/e2e).
# TMPDIR=/dev/shm keeps the generated graphs in memory (rmat 27 is 17 GB).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

if [ "${1:-}" = "--prepare" ]; then
	set -e
	P=${DEV:-.dev/e2e}
	mkdir -p "$P/data"
	CGO_ENABLED=0 go build -ldflags='-s -w' -o "$P/trigrid" ./cmd/trigrid
	CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$P/gpu.test" ./kernels/gpu/
	cp "${TRIGRID_DATA_DIR:-../shared/datasets}"/* "$P/data/" 2>/dev/null || echo "no ../shared/datasets: conformance skips the datasets"
	du -sh "$P"
	exit 0
fi

START=$(date +%s)
elapsed() { echo $(($(date +%s) - START)); }
OUT=${OUT:-/tmp/gpu-e2e}
mkdir -p "$OUT"
DEV=${DEV:-$ROOT/.dev/e2e}
BIN=$DEV/trigrid
DATA=$DEV/data
RUNS=${RUNS:-5}
BIG_SCALES=${BIG_SCALES:-"24 25"}
BUDGET_S=${BUDGET_S:-120}
CPU_CHECK_MAX=${CPU_CHECK_MAX:-25}
TMP=${TMPDIR:-/tmp}/gpu-e2e-graphs
mkdir -p "$TMP/detail"
RES=$OUT/results.txt
# Few files go back from a device call: details stay in $TMP/detail, and
# results.txt repeats each JSON result.
D=$TMP/detail
LIB=$ROOT/kernels/cuda/libtrigrid_cuda.so

date -u >"$RES"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>"$RES" 2>&1
echo "cores $(nproc), $(free -g | awk '/Mem:/ {print $2}') GiB" >>"$RES"
make -C kernels/cuda clean >/dev/null 2>&1
if ! make -C kernels/cuda -j16 all >"$OUT/build.log" 2>&1; then
	# A CUB without 64-bit item counts: build with 32-bit ones (then
	# preprocessing takes fewer than 2^31 pairs).
	grep -m5 error "$OUT/build.log" | tee -a "$RES"
	if ! make -C kernels/cuda -j16 all NVCCFLAGS="-O3 -std=c++17 -arch sm_90 -lineinfo -Xcompiler -fPIC -DTG_INT_ITEMS" >>"$OUT/build.log" 2>&1; then
		tail -40 "$OUT/build.log"
		exit 1
	fi
	echo "built with 32-bit item counts (TG_INT_ITEMS)" | tee -a "$RES"
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

if [ -f "$DATA/MANIFEST.tsv" ]; then
	while IFS=$'\t' read -r name file _ _ _ want _; do
		case "$name" in '#'* | '') continue ;; esac
		[ -f "$DATA/$file" ] || continue
		got=$("$BIN" count --device gpu --cuda-lib "$LIB" --json --progress none "$DATA/$file" 2>>"$D/conformance.err" | triangles)
		check "gpu $name" "$got" "$want"
		got=$("$BIN" count --device gpu --verify --cuda-lib "$LIB" --json --progress none "$DATA/$file" 2>>"$D/conformance.err" | triangles)
		check "gpu --verify $name" "$got" "$want"
	done <"$DATA/MANIFEST.tsv"
fi
if [ -x "$DEV/gpu.test" ]; then
	(cd kernels/gpu && TRIGRID_CUDA_LIB=$LIB timeout 200 "$DEV/gpu.test" -test.v -test.run 'DevicePrepareIDs|DevicePreprocess|DeviceOrientIDs|DeviceStageIDs' >"$D/gpu-test.log" 2>&1)
	rc=$?
	echo "kernels/gpu device preprocessing tests rc=$rc at $(elapsed) s" | tee -a "$RES"
	grep -E "^(--- |FAIL|ok|PASS)|_test.go" "$D/gpu-test.log" | head -20 | tee -a "$RES"
	[ $rc = 0 ] || fail=1
fi
if command -v compute-sanitizer >/dev/null; then
	printf '18446744073709551615 7\n7 900000000000\n900000000000 18446744073709551615\n7 7\n5 5\n7 18446744073709551615\n' >"$TMP/sparse64.txt"
	for f in "$DATA/CA-GrQc.txt" "$TMP/sparse64.txt"; do
		[ -f "$f" ] || continue
		timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN" count --device gpu --cuda-lib "$LIB" --json --progress none "$f" >"$D/sanitizer.log" 2>&1
		rc=$?
		echo "compute-sanitizer memcheck $(basename "$f") rc=$rc: $(grep -E 'ERROR SUMMARY' "$D/sanitizer.log")" | tee -a "$RES"
		[ $rc = 0 ] || { fail=1; grep -m10 -E "Invalid|Error|at " "$D/sanitizer.log" | tee -a "$RES"; }
	done
	if [ -x "$DEV/gpu.test" ]; then # the input staged in pinned pieces
		(cd kernels/gpu && TRIGRID_CUDA_LIB=$LIB timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
			"$DEV/gpu.test" -test.run 'TestDeviceStageIDs$' >"$D/sanitizer-stage.log" 2>&1)
		rc=$?
		echo "compute-sanitizer memcheck TestDeviceStageIDs rc=$rc: $(grep -E 'ERROR SUMMARY' "$D/sanitizer-stage.log")" | tee -a "$RES"
		[ $rc = 0 ] || { fail=1; grep -m10 -E "Invalid|Error|FAIL|at " "$D/sanitizer-stage.log" | tee -a "$RES"; }
	fi
fi

gen() { # scale
	local f=$TMP/r$1.bin
	[ -f "$f" ] || "$BIN" gen rmat --scale "$1" --edge-factor 16 --seed 1 -q -o "$f"
	echo "$f"
}
e2e() { # label runs files...
	local label=$1 runs=$2
	shift 2
	"$BIN" bench e2e --runs "$runs" --device gpu --cuda-lib "$LIB" --json "$@" >"$D/e2e-$label.json" 2>"$D/e2e-$label.err"
	echo "bench e2e $label rc=$? at $(elapsed) s" | tee -a "$RES"
	cat "$D/e2e-$label.json" "$D/e2e-$label.err" | tee -a "$RES"
	# BEFORE: an earlier build to compare with, timed the same way.
	if [ -x "${BEFORE:-}" ]; then
		"$BEFORE" bench e2e --runs "$runs" --device gpu --cuda-lib "$LIB" --json "$@" >"$D/e2e-$label-before.json" 2>&1
		echo "bench e2e $label, earlier build, rc=$? at $(elapsed) s" | tee -a "$RES"
		cat "$D/e2e-$label-before.json" | tee -a "$RES"
	fi
}

r22=$(gen 22)
"$BIN" convert "$r22" "$TMP/r22.txt" >/dev/null 2>&1
echo "generated rmat 22 (bin $(stat -c %s "$r22") B, text $(stat -c %s "$TMP/r22.txt") B) at $(elapsed) s" | tee -a "$RES"
cpu22=$("$BIN" count --device cpu --json --progress none "$r22" | triangles)
check "cpu rmat 22 (docs/performance.md)" "$cpu22" 2109057696
check "gpu rmat 22 text" "$("$BIN" count --device gpu --cuda-lib "$LIB" --json --progress none "$TMP/r22.txt" | triangles)" "$cpu22"
e2e r22 "$RUNS" "$r22" "$TMP/r22.txt"
for b in "$BIN" ${BEFORE:-}; do
	"$b" bench e2e --runs 3 --device cpu --json "$r22" >"$D/e2e-r22-cpu.json" 2>&1
	echo "bench e2e r22 on the CPU ($(basename "$b")) rc=$? at $(elapsed) s" | tee -a "$RES"
	cat "$D/e2e-r22-cpu.json" | tee -a "$RES"
done

for s in $BIG_SCALES; do
	if [ "$(elapsed)" -ge "$BUDGET_S" ]; then
		echo "rmat $s skipped: $(elapsed) s used of $BUDGET_S" | tee -a "$RES"
		break
	fi
	f=$(gen "$s")
	echo "generated rmat $s ($(stat -c %s "$f") B) at $(elapsed) s" | tee -a "$RES"
	"$BIN" count --device gpu --cuda-lib "$LIB" --json --progress none "$f" >"$D/count-r$s.json"
	gpu=$(triangles <"$D/count-r$s.json")
	# Whether the input went to the device while it was read, and the phases.
	echo "rmat $s: $(grep -oE '"(staged|read|device_wait|stage_wait|order|count)": *[^,}]*' "$D/count-r$s.json" | tr '\n' ' ')" | tee -a "$RES"
	case $s in # published in docs/performance.md
	24) check "gpu rmat 24 (docs/performance.md)" "$gpu" 10286549506 ;;
	25) check "gpu rmat 25 (docs/performance.md)" "$gpu" 22528457603 ;;
	esac
	if [ "$s" -le "$CPU_CHECK_MAX" ]; then
		cpu=$("$BIN" count --device cpu --json --progress none "$f" | triangles)
		check "gpu rmat $s against cpu" "$gpu" "$cpu"
	else
		echo "gpu rmat $s: $gpu triangles (not counted on the CPU here)" | tee -a "$RES"
	fi
	e2e "r$s" 3 "$f"
	rm -f "$f"
done
echo "done at $(elapsed) s, conformance $([ $fail = 0 ] && echo ok || echo FAILED)" | tee -a "$RES"
exit $fail
