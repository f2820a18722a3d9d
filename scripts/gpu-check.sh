#!/usr/bin/env bash
# GPU check in ONE call on a GPU machine that has nvcc but no Go:
#   1. builds libtrigrid_cuda.so from scratch (objects can survive between
#      calls on a reused machine, so stale ones are removed first);
#   2. builds the kernels' own conformance test (make -C kernels/cuda
#      conformance: random blocks against brute force under every setting
#      variant, and the datasets whole and partitioned against its CPU count
#      and MANIFEST.tsv);
#   3. runs the Go conformance tests, built beforehand on a machine with Go:
#        scripts/gpu-check.sh --prepare   (writes .dev/bin and .dev/data)
#   4. runs compute-sanitizer on a small graph;
#   5. generates rmat graphs with trigrid and times every kernel on them and
#      on soc-Epinions1 (trigrid bench kernels: median CUDA-event ms);
#   6. times `trigrid count` end to end on the GPU (binary edge list in the
#      page cache) and through partitions.
# SKIP_BENCH=1 stops after step 4.
# Everything goes under $OUT; results.txt is the summary. Knobs: SCALES
# (rmat scales to bench), E2E_SCALES, MAX_SCALE (largest conformance rmat),
# RUNS.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

if [ "${1:-}" = "--prepare" ]; then
	set -e
	mkdir -p .dev/bin .dev/data
	CGO_ENABLED=0 go build -ldflags='-s -w' -o .dev/bin/trigrid ./cmd/trigrid
	CGO_ENABLED=0 go test -c -ldflags='-s -w' -o .dev/bin/gpu.test ./kernels/gpu/
	CGO_ENABLED=0 go test -c -ldflags='-s -w' -o .dev/bin/cmd.test ./cmd/trigrid/
	cp ../shared/datasets/* .dev/data/ 2>/dev/null || echo "no ../shared/datasets: the conformance run will skip datasets"
	du -sh .dev
	exit 0
fi

OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
DATA=${TRIGRID_DATA_DIR:-$ROOT/.dev/data}
BIN=$ROOT/.dev/bin
SCALES=${SCALES:-"18 20 22 23"}
E2E_SCALES=${E2E_SCALES:-"22 23"}
RUNS=${RUNS:-5}
LIB=$ROOT/kernels/cuda/libtrigrid_cuda.so
TGDRV=$ROOT/kernels/cuda/tools/tgdrv
RES=$OUT/results.txt
export TRIGRID_CUDA_LIB=$LIB TRIGRID_DATA_DIR=$DATA

nvidia-smi >"$OUT/smi.txt" 2>&1
date -u >"$RES"
grep -E "Driver|H200|H100|MiB" "$OUT/smi.txt" | head -4 >>"$RES"
make -C kernels/cuda clean >/dev/null 2>&1
if ! make -C kernels/cuda -j16 all tgdrv twt >"$OUT/build.log" 2>&1; then
	tail -40 "$OUT/build.log"
	exit 1
fi
echo "build ok" | tee -a "$RES"

CHECK_GRAPHS=""
for f in CA-GrQc.txt CA-HepTh.txt facebook_combined.txt Wiki-Vote.txt Email-Enron.txt soc-Epinions1.txt; do
	[ -f "$DATA/$f" ] && CHECK_GRAPHS="$CHECK_GRAPHS $DATA/$f"
done
timeout 300 make -C kernels/cuda conformance CHECK_GRAPHS="$CHECK_GRAPHS" >"$OUT/twt.log" 2>&1
echo "conformance (kernels/cuda tools/twt) rc=$? $(grep -E '^[0-9]+ passed' "$OUT/twt.log" | tr '\n' ' ')" | tee -a "$RES"
grep -E "^FAIL" "$OUT/twt.log" | head -20 | tee -a "$RES"
# The tool's CPU count against the published one.
if [ -f "$DATA/MANIFEST.tsv" ]; then
	awk 'NR == FNR { if ($0 !~ /^#/) { split($0, c, "\t"); want[c[2]] = c[6] }; next }
		/^graph .*triangles=/ { f = $2; sub(/:$/, "", f); n = split(f, p, "/"); t = $NF; sub(/triangles=/, "", t)
			if (p[n] in want) { print (want[p[n]] == t ? "ok  " : "FAIL") " MANIFEST " p[n] " " t " want " want[p[n]] } }' \
		"$DATA/MANIFEST.tsv" "$OUT/twt.log" | tee -a "$RES"
fi

if [ -x "$BIN/gpu.test" ]; then
	(cd kernels/gpu && TRIGRID_MAX_SCALE=${MAX_SCALE:-22} timeout 240 "$BIN/gpu.test" -test.v -test.run Device -test.timeout 230s >"$OUT/conformance.log" 2>&1)
	echo "conformance (kernels/gpu) rc=$?" | tee -a "$RES"
	grep -E "^(--- FAIL|FAIL|ok|PASS)|_test.go" "$OUT/conformance.log" | head -20 | tee -a "$RES"
fi
if [ -x "$BIN/cmd.test" ]; then
	(cd cmd/trigrid && timeout 120 "$BIN/cmd.test" -test.v -test.run 'Device' >"$OUT/cli-device.log" 2>&1)
	echo "conformance (trigrid count on the GPU vs the reference kernel) rc=$?" | tee -a "$RES"
	grep -E "^(--- |FAIL|ok|PASS)" "$OUT/cli-device.log" | head -10 | tee -a "$RES"
fi

timeout 120 compute-sanitizer --tool memcheck "$TGDRV" -lib "$LIB" -runs 1 -p 3 "$DATA/CA-GrQc.txt" >"$OUT/sanitizer.log" 2>&1
echo "compute-sanitizer: $(grep 'ERROR SUMMARY' "$OUT/sanitizer.log")" | tee -a "$RES"
[ "${SKIP_BENCH:-0}" = 1 ] && exit 0

graphs=("$DATA/soc-Epinions1.txt")
for s in $SCALES; do
	"$BIN/trigrid" gen rmat --scale "$s" --edge-factor 16 -o "/tmp/rmat$s.bin" >>"$OUT/gen.log" 2>&1
	graphs+=("/tmp/rmat$s.bin")
done
echo "== trigrid bench kernels --runs $RUNS" | tee -a "$RES"
timeout 300 "$BIN/trigrid" bench kernels --runs "$RUNS" "${graphs[@]}" 2>&1 | tee -a "$RES"

echo "== trigrid count --device gpu (end to end, file in the page cache), $RUNS runs each" | tee -a "$RES"
for s in $E2E_SCALES; do
	f=/tmp/rmat$s.bin
	cat "$f" >/dev/null
	for i in $(seq "$RUNS"); do
		"$BIN/trigrid" count --device gpu --json --progress none --log-level warn "$f" >>"$OUT/e2e-rmat$s.json"
	done
	python3 - "$OUT/e2e-rmat$s.json" <<'PY' | tee -a "$RES"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda k: statistics.median(r["seconds"][k] for r in rows)
r = rows[0]
print(f'{r["file"]}: {r["triangles"]} triangles, {r["edges"]} edges, kernel {r["kernel"]} on {r["device"]}; '
      f'median of {len(rows)}: total {med("total"):.3f}s = read {med("read"):.3f} + compact {med("clean"):.3f} '
      f'+ GPU preprocess {med("order"):.3f} + count {med("count"):.3f} (kernel {med("kernel")*1000:.1f} ms)')
PY
done
echo "== trigrid count --partitions 2 / --shards on the GPU" | tee -a "$RES"
"$BIN/trigrid" count --device gpu --partitions 2 --progress none --log-level warn /tmp/rmat20.bin 2>&1 | grep -E "triangles|kernel|time" | tee -a "$RES"
"$BIN/trigrid" partition --progress none -P 3 --scheme range -o /tmp/r20.shards /tmp/rmat20.bin >/dev/null 2>&1
"$BIN/trigrid" count --device gpu --shards /tmp/r20.shards --progress none --log-level warn 2>&1 | grep -E "triangles|kernel|time" | tee -a "$RES"
echo "== CPU on this machine for comparison: trigrid count --device cpu rmat22" | tee -a "$RES"
"$BIN/trigrid" count --device cpu --progress none --log-level warn /tmp/rmat22.bin 2>&1 | grep -E "triangles|kernel|time" | tee -a "$RES"
