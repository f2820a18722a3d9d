#!/usr/bin/env bash
# Per-vertex and per-edge counts on a GPU in ONE call, on a machine with
# nvcc but no Go:
#   1. builds libtrigrid_cuda.so and tgdrv from scratch;
#   2. tgdrv -local on the datasets: tg_count_local of polak and wetric,
#      per vertex and per edge, whole (entry by entry against a CPU count)
#      and on a P = 3 hash partition;
#   3. the Go device tests of the per-vertex mode (kernels/gpu: every
#      kernel with one against the CPU's per-vertex kernel, whole and
#      partitioned with both schemes, datasets and rmat; cmd/trigrid: the files
#      `count --device gpu --per-vertex/--per-edge` writes, whole,
#      partitioned and from shards, against an independent count);
#   4. compute-sanitizer (memcheck, racecheck) on tgdrv -local on a small
#      graph;
#   5. trigrid bench kernels --modes total,vertex,edge on rmat graphs
#      (CUDA-event medians of RUNS runs, every run checked).
# Binaries and data are built beforehand where Go is:
#   scripts/gpu-pervertex.sh --prepare DIR   (writes DIR/payload.tgz)
# and unpacked here from $PAYLOAD. Results go under $OUT; results.txt is
# the summary. Knobs: SCALES (bench), MAX_SCALE (device tests), RUNS.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

if [ "${1:-}" = "--prepare" ]; then
	set -e
	dir=${2:?usage: gpu-pervertex.sh --prepare DIR}
	tmp=$(mktemp -d)
	CGO_ENABLED=0 go build -ldflags='-s -w' -o "$tmp/trigrid" ./cmd/trigrid
	CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$tmp/gpu.test" ./kernels/gpu/
	CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$tmp/cmd.test" ./cmd/trigrid/
	mkdir -p "$tmp/data" "$dir"
	ds=${DATASETS:-../shared/datasets}
	cp "$ds"/*.txt "$ds"/MANIFEST.tsv "$tmp/data/" 2>/dev/null || echo "no datasets in $ds"
	tar czf "$dir/payload.tgz" -C "$tmp" .
	rm -rf "$tmp"
	du -sh "$dir/payload.tgz"
	exit 0
fi

OUT=${OUT:-/tmp/gpu-pervertex}
mkdir -p "$OUT"
WORK=$(mktemp -d)
tar xzf "${PAYLOAD:?PAYLOAD names the tarball of --prepare}" -C "$WORK"
BIN=$WORK DATA=$WORK/data
SCALES=${SCALES:-"20 22"}
RUNS=${RUNS:-5}
LIB=$ROOT/kernels/cuda/libtrigrid_cuda.so
TGDRV=$ROOT/kernels/cuda/tools/tgdrv
RES=$OUT/results.txt
export TRIGRID_CUDA_LIB=$LIB TRIGRID_DATA_DIR=$DATA

nvidia-smi >"$OUT/smi.txt" 2>&1
date -u >"$RES"
grep -E "H200|H100" "$OUT/smi.txt" | head -2 >>"$RES"
make -C kernels/cuda clean >/dev/null 2>&1
if ! make -C kernels/cuda -j16 all tgdrv >"$OUT/build.log" 2>&1; then
	grep -E "error|Error" "$OUT/build.log" | head -30 | tee -a "$RES"
	exit 1
fi
echo "build ok" | tee -a "$RES"

small=()
for f in CA-GrQc.txt CA-HepTh.txt facebook_combined.txt Wiki-Vote.txt Email-Enron.txt soc-Epinions1.txt; do
	[ -f "$DATA/$f" ] && small+=("$DATA/$f")
done
timeout 60 "$TGDRV" -lib "$LIB" -local -runs 1 -p 3 "${small[@]}" >"$OUT/tgdrv-local.log" 2>&1
echo "tgdrv -local rc=$?" | tee -a "$RES"
grep -E "per (vertex|edge)|WRONG|ERROR|^FAIL|^PASS" "$OUT/tgdrv-local.log" | grep -vE "ok \(" | head -20 | tee -a "$RES"
grep -cE "per (vertex|edge) +whole ok .*P=3 hash: ok" "$OUT/tgdrv-local.log" | sed 's/^/tgdrv -local checks passed: /' | tee -a "$RES"

(cd kernels/gpu && TRIGRID_LOCAL_MAX_SCALE=${MAX_SCALE:-18} timeout 130 "$BIN/gpu.test" -test.v -test.run 'DeviceLocal' -test.timeout 120s >"$OUT/gpu-local.log" 2>&1)
echo "kernels/gpu DeviceLocal rc=$?" | tee -a "$RES"
grep -E "^(--- |FAIL|ok|PASS)|_test.go" "$OUT/gpu-local.log" | head -20 | tee -a "$RES"
(cd cmd/trigrid && TRIGRID_PV_SCALE=${PV_SCALE:-14} timeout 70 "$BIN/cmd.test" -test.v -test.run 'PerVertexThroughDevice|CountThroughDevice' -test.timeout 60s >"$OUT/cli-local.log" 2>&1)
echo "cmd/trigrid per-vertex through the device rc=$?" | tee -a "$RES"
grep -E "^(--- |FAIL|ok|PASS)|_test.go" "$OUT/cli-local.log" | head -10 | tee -a "$RES"

# memcheck over the P = 3 partition too; racecheck (shared memory) on the
# whole graph only, which it slows the most.
for tool in memcheck racecheck; do
	p=3
	[ $tool = racecheck ] && p=1
	timeout 60 compute-sanitizer --tool $tool "$TGDRV" -lib "$LIB" -local -runs 1 -p $p "$DATA/CA-GrQc.txt" >"$OUT/sanitizer-$tool.log" 2>&1
	echo "compute-sanitizer $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer-$tool.log" | tr '\n' ' ') $(grep -cE 'whole ok' "$OUT/sanitizer-$tool.log") local checks ok" | tee -a "$RES"
done
[ "${SKIP_BENCH:-0}" = 1 ] && exit 0

graphs=()
[ -f "$DATA/soc-Epinions1.txt" ] && graphs+=("$DATA/soc-Epinions1.txt")
for s in $SCALES; do
	"$BIN/trigrid" gen rmat --scale "$s" --edge-factor 16 --seed 1 -o "/tmp/rmat$s.bin" >>"$OUT/gen.log" 2>&1
	graphs+=("/tmp/rmat$s.bin")
done
echo "== trigrid bench kernels --modes total,vertex,edge --kernels auto,polak,wetric --runs $RUNS" | tee -a "$RES"
timeout 150 "$BIN/trigrid" bench kernels --runs "$RUNS" --modes total,vertex,edge --kernels auto,polak,wetric --json "${graphs[@]}" >"$OUT/bench.json" 2>"$OUT/bench.err"
echo "bench rc=$?" | tee -a "$RES"
python3 - "$OUT/bench.json" <<'PY' | tee -a "$RES"
import json, sys
rows = json.load(open(sys.argv[1]))
for r in rows:
    print(f'{r["graph"]:>12} {r["kernel"]:>7} {r.get("mode") or "total":>6} ran {r["ran"]:>7} median {r["median_ms"]:9.3f} ms '
          f'(min {r["min_ms"]:.3f} max {r["max_ms"]:.3f}, wall {r["wall_ms"]:.3f}, {r["runs"]} runs) {r["triangles"]} {"ok" if r["ok"] else "FAIL " + r.get("error", "")}')
tot = {r["graph"]: r["median_ms"] for r in rows if r["kernel"] == "auto" and not r.get("mode") and r["ok"]}
for r in rows:
    if r["kernel"] == "auto" and r.get("mode") and r["graph"] in tot:
        print(f'{r["graph"]}: auto per {r["mode"]} / total-only auto = {r["median_ms"] / tot[r["graph"]]:.2f}x')
PY
tail -3 "$OUT/bench.err" | tee -a "$RES"

# The whole process on rmat 22 (binary, in the page cache): totals against
# per-vertex and per-edge counts written as binary counts files.
if [ -f /tmp/rmat22.bin ]; then
	echo "== trigrid count --device gpu rmat22.bin, 3 runs each: total, --per-vertex, --per-vertex --per-edge" | tee -a "$RES"
	cat /tmp/rmat22.bin >/dev/null
	for mode in total vertex edge; do
		args=()
		[ $mode != total ] && args+=(--per-vertex /tmp/pv-v.bin)
		[ $mode = edge ] && args+=(--per-edge /tmp/pv-e.bin)
		for i in 1 2 3; do
			timeout 60 "$BIN/trigrid" count --device gpu --json --progress none --log-level warn "${args[@]}" /tmp/rmat22.bin >>"$OUT/e2e-$mode.json" 2>>"$OUT/e2e.err"
		done
	done
	python3 - "$OUT" <<'PY' | tee -a "$RES"
import json, statistics, sys, os
for mode in ("total", "vertex", "edge"):
    f = os.path.join(sys.argv[1], f"e2e-{mode}.json")
    rows = [json.loads(l) for l in open(f) if l.strip()] if os.path.exists(f) else []
    if not rows:
        print(f"{mode}: no runs"); continue
    med = lambda k: statistics.median(r["seconds"].get(k, 0) for r in rows)
    r = rows[0]
    print(f'{mode:>6}: {r["triangles"]} triangles, kernel {r["kernel"]} on {r["device"]}; median of {len(rows)}: total {med("total"):.3f}s '
          f'(read {med("read"):.3f} clean {med("clean"):.3f} order {med("order"):.3f} count {med("count"):.3f} kernel {med("kernel")*1000:.1f} ms)')
PY
	tail -3 "$OUT/e2e.err" | tee -a "$RES"
fi
