#!/usr/bin/env bash
# Device call: what host<->device copies, pinning and the driver's start
# cost on this machine (kernels/cuda/tools/copybench.cu). Results in
# $OUT/copybench.txt.
set -euo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
nvcc -O2 -std=c++17 -o /tmp/copybench kernels/cuda/tools/copybench.cu -lpthread
{
  nvidia-smi --query-gpu=name,persistence_mode,pcie.link.gen.current,pcie.link.width.current,driver_version --format=csv
  echo "## process start to exit, first CUDA call only (5 runs)"
  for i in 1 2 3 4 5; do
    a=$(date +%s%N); /tmp/copybench 0 >/dev/null; b=$(date +%s%N)
    echo "whole process: $(( (b - a) / 1000000 )) ms"
  done
  /tmp/copybench 0
  echo "## copies, ${MIB:-512} MiB"
  /tmp/copybench "${MIB:-512}" "$(nproc)"
} 2>&1 | tee "$OUT/copybench.txt"
