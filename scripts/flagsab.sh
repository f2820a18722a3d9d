#!/usr/bin/env bash
# scripts/flagsab.sh OUT FILE... -- FLAGS...: on the GPU machine, the
# library built once as it is and once more for each set of nvcc FLAGS
# (a quoted word each, e.g. "-DTG_WETRIC_PROBE=1"; only the objects of
# AB_FILES are rebuilt for a set; words starting with @ are kernel
# settings, e.g. "@wetric_spread=8"), then `trigrid bench kernels` of
# KERNELS on every FILE under each library, the libraries alternated
# ROUNDS times. OUT/flagsab.txt: one line a library, file and round with
# the median kernel ms and whether the count was right; OUT/summary.txt
# the medians over the rounds; OUT/runs.tar.gz the runs' JSON and the
# build logs.
#
# Environment: BIN (.dev/bin/trigrid), ROUNDS (3), RUNS (9), KERNELS
# (wetric), AB_FILES (wetric), CUDA_ARCH (sm_90), NCU (1: Nsight Compute
# profiles of the wedge kernel on the first FILE, with the source pages,
# into OUT/ncu-wetric-N*, one for each library N of NCU_LIBS ("0"), each
# with its set's settings; NCU_ARGS: more ncu options, e.g.
# "--clock-control none" to profile at the clocks the runs had), BASE (a
# kernels/cuda tree of another revision, e.g. from `git archive REV
# kernels/cuda`: built too and alternated with the others as the last
# library), CONFORM (library numbers: `make conformance` of each set's
# build, on CHECK_GRAPHS too, into OUT/conformance-N.txt).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 3 ] || {
	sed -n '2,23p' "$0"
	exit 2
}
OUT=$1
shift
files=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	files+=("$1")
	shift
done
[ "${1:-}" = -- ] || {
	echo "flagsab: no -- before the flag sets" >&2
	exit 2
}
shift
sets=("" "$@")
# A set's words starting with @ are kernel settings (@wetric_spread=8:
# --kernel-setting wetric_spread=8), the others nvcc flags; a set of
# settings only runs the first library.
flags=() ksets=()
for i in "${!sets[@]}"; do
	f="" k=""
	for w in ${sets[$i]}; do
		case $w in @*) k+=" --kernel-setting ${w#@}" ;; *) f+=" $w" ;; esac
	done
	flags[i]=${f# } ksets[i]=${k# }
done
BIN=${BIN:-$ROOT/.dev/bin/trigrid}
ROUNDS=${ROUNDS:-3} RUNS=${RUNS:-9} KERNELS=${KERNELS:-wetric} AB_FILES=${AB_FILES:-wetric}
ARCH=${CUDA_ARCH:-sm_90}
N=${ARCH#sm_}
mkdir -p "$OUT" || exit 2
[ -x "$BIN" ] || {
	[ -f "$BIN.gz" ] && gunzip -k "$BIN.gz" && chmod +x "$BIN"
} || {
	echo "flagsab: no $BIN" >&2
	exit 2
}
for i in "${!files[@]}"; do
	f=${files[$i]}
	case $f in *.gz) [ -f "$f" ] || f=${f%.gz} ;; *) [ -f "$f" ] || f=$f.gz ;; esac
	[ -f "$f" ] || {
		echo "flagsab: no ${files[$i]}" >&2
		exit 2
	}
	files[i]=$f
done

# build NAME FLAGS [SRC]: the library of SRC (this tree's kernels/cuda)
# with nvcc FLAGS in OUT/cuda-NAME. Build 0 is this tree as it is; the
# sets reuse its objects but AB_FILES'; a BASE tree is built whole.
build() {
	local d=$OUT/cuda-$1 src=${3:-$ROOT/kernels/cuda} o
	rm -rf "$d" && cp -a "$src" "$d" && rm -rf "$d"/*.so
	if [ -n "${3:-}" ]; then
		rm -rf "$d/build"
	elif [ "$1" != 0 ]; then
		[ -d "$OUT/cuda-0/build" ] && cp -a "$OUT/cuda-0/build" "$d/"
		for o in $AB_FILES; do rm -f "$d/build/$o.o"; done
	fi
	make -C "$d" -j "$(nproc)" CUDA_ARCH="$ARCH" \
		NVCCFLAGS="-O3 -std=c++17 -gencode arch=compute_$N,code=sm_$N -lineinfo -Xcompiler -fPIC $2" \
		libtrigrid_cuda.so >"$OUT/build-$1.log" 2>&1
}
build 0 "${flags[0]}" || {
	echo "flagsab: build 0 failed: $(tail -5 "$OUT/build-0.log")" >&2
	exit 1
}
for i in "${!sets[@]}"; do [ "$i" -gt 0 ] && [ -n "${flags[$i]}" ] && build "$i" "${flags[$i]}" & done
wait
if [ -n "${BASE:-}" ]; then
	build base "" "$BASE" || echo "flagsab: base build failed: $(tail -3 "$OUT/build-base.log")" >&2
fi
libs=()
for i in "${!sets[@]}"; do
	if [ "$i" -gt 0 ] && [ -z "${flags[$i]}" ]; then
		libs+=("$OUT/cuda-0/libtrigrid_cuda.so")
		echo "lib $i: ${sets[$i]}" | tee -a "$OUT/flagsab.txt"
		continue
	fi
	if [ ! -f "$OUT/cuda-$i/libtrigrid_cuda.so" ]; then
		echo "flagsab: build $i (${sets[$i]}) failed, left out: $(grep -m3 -i error "$OUT/build-$i.log")" | tee -a "$OUT/flagsab.txt" >&2
		libs+=("")
		continue
	fi
	libs+=("$OUT/cuda-$i/libtrigrid_cuda.so")
	echo "lib $i: ${sets[$i]:-as is}" | tee -a "$OUT/flagsab.txt"
done

# The base library, when built, is the last one (no kernel settings).
if [ -f "$OUT/cuda-base/libtrigrid_cuda.so" ]; then
	nb=${#sets[@]}
	libs[nb]=$OUT/cuda-base/libtrigrid_cuda.so ksets[nb]=""
	echo "lib $nb: base $BASE" | tee -a "$OUT/flagsab.txt"
fi
for r in $(seq "$ROUNDS"); do
	for i in "${!libs[@]}"; do
		[ -n "${libs[$i]}" ] || continue
		j=$OUT/bench-$r-$i.json
		read -ra ks <<<"${ksets[$i]}"
		TRIGRID_CUDA_LIB=${libs[$i]} timeout 120 "$BIN" bench kernels --runs "$RUNS" --json --kernels "$KERNELS" "${ks[@]}" "${files[@]}" >"$j" 2>"$j.err"
		python3 - "$j" "$r" "$i" >>"$OUT/flagsab.txt" <<'EOF'
import json, sys
try:
    rows = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"round {sys.argv[2]} lib {sys.argv[3]}: no result ({e})")
    sys.exit(0)
for x in rows:
    print(f"round {sys.argv[2]} lib {sys.argv[3]} {x['graph']} {x['kernel']} {x['median_ms']:.4f} ms ok={x['ok']}")
EOF
	done
done
python3 - "$OUT/flagsab.txt" >"$OUT/summary.txt" <<'EOF'
import collections, statistics, sys
libs, t = {}, collections.defaultdict(list)
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "lib":
        libs[w[1].rstrip(":")] = " ".join(w[2:])
    elif w[0] == "round" and len(w) >= 8:
        t[(w[5], w[4], w[3])].append((float(w[6]), w[8]))
for (k, g, i), v in sorted(t.items()):
    base = t.get((k, g, "0"))
    m = statistics.median(x for x, _ in v)
    ratio = f" ({m / statistics.median(x for x, _ in base):.3f}x lib 0)" if base and i != "0" else ""
    print(f"{g} {k} lib {i} [{libs.get(i, '')}]: median {m:.4f} ms over {len(v)} rounds{ratio} {set(o for _, o in v)}")
EOF
cat "$OUT/summary.txt"
# The runs' files in one archive: a device call returns few files, and
# the profiles below should be among them.
(cd "$OUT" && tar -czf runs.tar.gz bench-* build-*.log && rm -f bench-* build-*.log)

if [ "${NCU:-0}" = 1 ]; then
	ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	if [ -x "$ncu" ]; then
		read -ra nargs <<<"${NCU_ARGS:-}"
		for n in ${NCU_LIBS:-0}; do
			[ -n "${libs[$n]:-}" ] || continue
			read -ra ks <<<"${ksets[$n]}"
			p=$OUT/ncu-wetric-$n
			TRIGRID_CUDA_LIB=${libs[$n]} timeout 180 "$ncu" "${nargs[@]}" --kernel-name regex:wedge_kernel --launch-skip 2 --launch-count 1 \
				--set full --import-source yes -o "$p" "$BIN" bench kernels --runs 4 --kernels wetric "${ks[@]}" "${files[0]}" >"$p-run.log" 2>&1
			"$ncu" -i "$p.ncu-rep" --page details >"$p-details.txt" 2>&1
			"$ncu" -i "$p.ncu-rep" --page source --csv --print-source cuda >"$p-source-cuda.csv" 2>&1
			"$ncu" -i "$p.ncu-rep" --page source --csv --print-source sass >"$p-source-sass.csv" 2>&1
			echo "ncu lib $n:"
			grep -E "Duration|Registers|Achieved Occupancy|Executed Ipc|Issue Slots" "$p-details.txt" | head
		done
	else
		echo "no ncu"
	fi
fi
# The conformance test of the listed sets' builds, their nvcc flags
# passed again so that make reuses their objects.
for n in ${CONFORM:-}; do
	d=$OUT/cuda-$n
	[ "$n" = 0 ] || [ -n "${flags[$n]:-}" ] || d=$OUT/cuda-0
	if [ ! -f "$d/libtrigrid_cuda.so" ]; then
		echo "conformance $n: no build" | tee -a "$OUT/summary.txt"
		continue
	fi
	make -C "$d" -j "$(nproc)" CUDA_ARCH="$ARCH" \
		NVCCFLAGS="-O3 -std=c++17 -gencode arch=compute_$N,code=sm_$N -lineinfo -Xcompiler -fPIC ${flags[$n]:-}" \
		conformance CHECK_GRAPHS="${CHECK_GRAPHS:-}" >"$OUT/conformance-$n.txt" 2>&1
	echo "conformance $n [${sets[$n]:-as is}]: rc $? $(grep -c "^FAIL" "$OUT/conformance-$n.txt") FAIL lines, $(grep -E "passed, [0-9]+ failed" "$OUT/conformance-$n.txt" | tr "\n" " ")" | tee -a "$OUT/summary.txt"
	tail -4 "$OUT/conformance-$n.txt"
done
rm -rf "$OUT"/cuda-*
