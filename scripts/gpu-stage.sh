#!/usr/bin/env bash
# The input staged on the device while it is read, checked and timed on a
# GPU machine in one call: scripts/gpu-e2e.sh (build, conformance of every
# device path against the datasets and the CPU, the device preprocessing
# tests staged and not, whole-process timings with an earlier build timed
# beside), then compute-sanitizer memcheck on the staged upload
# (TestDeviceStageIDs) and on the id preprocessing of a dataset.
# Prepare on a machine with Go:
#   DEV=.dev/stage scripts/gpu-stage.sh --prepare [REV]
# (REV: a git revision built as $DEV/trigrid-before, the "before" binary).
# Knobs: those of gpu-e2e.sh; DEV defaults to .dev/stage.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export DEV=${DEV:-$ROOT/.dev/stage}

if [ "${1:-}" = "--prepare" ]; then
	set -e
	bash scripts/gpu-e2e.sh --prepare
	if [ -n "${2:-}" ]; then
		tmp=$(mktemp -d)
		git worktree add -q --detach "$tmp/src" "$2"
		(cd "$tmp/src" && CGO_ENABLED=0 go build -ldflags='-s -w' -o "$DEV/trigrid-before" ./cmd/trigrid)
		git worktree remove --force "$tmp/src"
		rm -rf "$tmp"
	fi
	du -sh "$DEV"
	exit 0
fi

OUT=${OUT:-/tmp/gpu-stage}
mkdir -p "$OUT"
[ -x "$DEV/trigrid-before" ] && export BEFORE=${BEFORE:-$DEV/trigrid-before}
OUT=$OUT bash scripts/gpu-e2e.sh
rc=$?
RES=$OUT/results.txt
LIB=$ROOT/kernels/cuda/libtrigrid_cuda.so
if [ -f "$LIB" ] && command -v compute-sanitizer >/dev/null; then
	(cd kernels/gpu && TRIGRID_CUDA_LIB=$LIB timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
		"$DEV/gpu.test" -test.run 'TestDeviceStageIDs' >"$OUT/sanitizer-stage.log" 2>&1)
	s=$?
	echo "compute-sanitizer memcheck TestDeviceStageIDs rc=$s: $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer-stage.log")" | tee -a "$RES"
	[ $s = 0 ] || { rc=1; grep -m10 -E "Invalid|Error|FAIL|at " "$OUT/sanitizer-stage.log" | tee -a "$RES"; }
fi
echo "gpu-stage done, rc=$rc" | tee -a "$RES"
exit $rc
