#!/usr/bin/env bash
# scripts/bench-stats-device.sh BIN SCALE...: on the GPU machine (16 cores,
# 128 GiB), the block statistics `trigrid bench simulate --stats` reads of
# the R-MAT graphs of the given scales, generated in memory and never
# written as graphs: $OUT/rmatS-stats.json and its log. Build BIN here first:
#   CGO_ENABLED=0 go build -o .dev/simstats/trigrid ./cmd/trigrid
# and carry .dev/simstats.
set -uo pipefail
bin=${1:?usage: bench-stats-device.sh BIN SCALE...}
shift
out=${OUT:?OUT must name the output directory}
echo "cores: $(nproc)"
free -g | head -2
for s in "$@"; do
	log=$out/rmat$s-stats.log
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -v "$bin" bench stats --rmat "$s" -o "$out/rmat$s-stats.json" --progress log >"$log" 2>&1
	else
		"$bin" bench stats --rmat "$s" -o "$out/rmat$s-stats.json" --progress log >"$log" 2>&1
	fi
	echo "rmat $s: exit $?"
	grep -E 'vertices|Elapsed|Maximum resident|User time' "$log"
done
