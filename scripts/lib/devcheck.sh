# Shared by the device checks of the partitioned path (gpu-partitioned.sh,
# gpu-devsplit.sh, gpu-partverify.sh); sourced, not run.
#
# devcheck_prepare DEV [BEFORE_COMMIT], on a machine with Go: the payload a
# check carries to the GPU machine, under DEV: src/ (this tree's tracked
# and untracked files), bin/ (trigrid, pipeline.test, gpu.test and, for
# BEFORE_COMMIT, trigrid-before; gzipped), before-cuda/ (BEFORE_COMMIT's
# kernels/cuda, for a library of its ABI), data/ (the datasets, text
# gzipped).
#
# devcheck_setup NAME, on the GPU machine, from a script at
# DEV/src/scripts: sets START, SRC, DEV, OUT (default /tmp/NAME), TMP,
# RES, LIB (exported as TRIGRID_CUDA_LIB) and BIN, unpacks the binaries,
# writes the machine to RES and builds libtrigrid_cuda.so from SRC (exit
# 1 when that fails).
#
# Then: elapsed (seconds since START), count ARGS (`trigrid count --device
# gpu --json` of ARGS), triangles, field NAME (an integer out of count's
# JSON on stdin) and num NAME (a number, seconds too), check NAME GOT WANT (an ok or FAIL line in RES; fail=1 on
# FAIL), gotest DIR BIN PATTERN [SECONDS] (SRC/DIR's test binary BIN with
# -test.run PATTERN through the library, its output appended to
# OUT/tests.log, its rc and failures in RES), memcheck DIR BIN PATTERN
# (the same under compute-sanitizer memcheck, when there is one, into
# OUT/memcheck.log, its rc and error summary in RES), each_dataset FN (FN NAME FILE WANT CSR for every dataset of
# MANIFEST.tsv in DEV/data; CSR is its forward graph's bytes).

devcheck_prepare() {
	set -e
	local root dev
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	dev=$(realpath -m "$1")
	rm -rf "$dev"
	mkdir -p "$dev/bin" "$dev/data" "$dev/src"
	(cd "$root" && git ls-files -co --exclude-standard | grep -v '^\.dev/' | tar -cf - -T - | tar -xf - -C "$dev/src")
	(cd "$root" && CGO_ENABLED=0 go build -ldflags='-s -w' -o "$dev/bin/trigrid" ./cmd/trigrid)
	(cd "$root" && CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$dev/bin/pipeline.test" ./pipeline)
	(cd "$root" && CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$dev/bin/gpu.test" ./kernels/gpu)
	if [ -n "${2:-}" ]; then
		local tmp
		tmp=$(mktemp -d)
		(cd "$root" && git archive "$2" | tar -xf - -C "$tmp")
		(cd "$tmp" && CGO_ENABLED=0 go build -ldflags='-s -w' -o "$dev/bin/trigrid-before" ./cmd/trigrid)
		cp -r "$tmp/kernels/cuda" "$dev/before-cuda"
		rm -rf "$tmp"
	fi
	cp "${TRIGRID_DATA_DIR:-$root/../shared/datasets}"/* "$dev/data/" 2>/dev/null || echo "no datasets: conformance skips them"
	gzip -9 "$dev"/bin/*
	for f in "$dev"/data/*.txt; do [ -f "$f" ] && gzip -9 "$f"; done
	du -sh "$dev"
}

devcheck_setup() {
	START=$(date +%s)
	SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	DEV=$(dirname "$SRC")
	OUT=${OUT:-/tmp/$1}
	mkdir -p "$OUT"
	TMP=${TMPDIR:-/tmp}/$1
	mkdir -p "$TMP/bin"
	RES=$OUT/results.txt
	LIB=$SRC/kernels/cuda/libtrigrid_cuda.so
	export TRIGRID_CUDA_LIB=$LIB
	for f in "$DEV"/bin/*.gz; do gunzip -c "$f" >"$TMP/bin/$(basename "$f" .gz)"; done
	chmod +x "$TMP"/bin/*
	BIN=$TMP/bin/trigrid
	date -u >"$RES"
	nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>"$RES" 2>&1
	echo "cores $(nproc), $(free -g | awk '/Mem:/ {print $2}') GiB" >>"$RES"
	make -C "$SRC/kernels/cuda" clean >/dev/null 2>&1
	if ! make -C "$SRC/kernels/cuda" -j16 libtrigrid_cuda.so >"$OUT/build.log" 2>&1; then
		tail -40 "$OUT/build.log"
		exit 1
	fi
	echo "build ok at $(elapsed) s" | tee -a "$RES"
	fail=0
}

elapsed() { echo $(($(date +%s) - START)); }
count() { "$BIN" count --device gpu --json --progress none --log-level warn "$@" 2>>"$OUT/count.err"; }
triangles() { grep -o '"triangles": *[0-9]*' | head -1 | grep -o '[0-9]*$'; }
field() { grep -o "\"$1\": *[0-9]*" | head -1 | grep -o '[0-9]*$'; }
num() { grep -o "\"$1\": *[0-9.e-]*" | head -1 | grep -o '[0-9.e-]*$'; }
check() { # name got want
	if [ -n "$2" ] && [ "$2" = "$3" ]; then
		echo "ok   $1 $2" | tee -a "$RES"
	else
		echo "FAIL $1 got '$2' want '$3'" | tee -a "$RES"
		fail=1
	fi
}

gotest() { # dir bin pattern [seconds]
	local one=$OUT/tests.one rc
	(cd "$SRC/$1" && timeout "${4:-200}" "$TMP/bin/$2" -test.v -test.run "$3" >"$one" 2>&1)
	rc=$?
	echo "$1 $3 (real library) rc=$rc" | tee -a "$RES"
	grep -E "^(--- FAIL|FAIL)|_test.go" "$one" | head -20 | tee -a "$RES"
	cat "$one" >>"$OUT/tests.log" && rm -f "$one"
}

memcheck() { # dir bin pattern
	command -v compute-sanitizer >/dev/null || return 0
	(cd "$SRC/$1" && timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$TMP/bin/$2" \
		-test.run "$3" >"$OUT/memcheck.log" 2>&1)
	echo "compute-sanitizer memcheck $1 $3 rc=$?" | tee -a "$RES"
	grep -E "ERROR SUMMARY" "$OUT/memcheck.log" | tail -1 | tee -a "$RES"
}

each_dataset() {
	local name file want f w v e
	[ -f "$DEV/data/MANIFEST.tsv" ] || return 0
	while IFS=$'\t' read -r name file _ _ _ want _; do
		case "$name" in '#'* | '') continue ;; esac
		f=$DEV/data/$file
		[ -f "$f" ] || f=$f.gz
		[ -f "$f" ] || continue
		w=$(count "$f")
		v=$(echo "$w" | field vertices)
		e=$(echo "$w" | field edges)
		"$1" "$name" "$f" "$want" $((8 * (v + 1) + 4 * e))
	done <"$DEV/data/MANIFEST.tsv"
}

# rmat_graph S: generates rmat S (`gen rmat --edge-factor 16 --seed 1`)
# into $TMP/rS.bin and counts it uncapped; sets f, want, v, e and csr (the
# CSR's bytes, 8 (v + 1) + 4 e) and notes them in $RES.
rmat_graph() {
	local whole
	f=$TMP/r$1.bin
	"$BIN" gen rmat --scale "$1" --edge-factor 16 --seed 1 -q -o "$f"
	whole=$(count "$f")
	want=$(echo "$whole" | triangles)
	v=$(echo "$whole" | field vertices)
	e=$(echo "$whole" | field edges)
	csr=$((8 * (v + 1) + 4 * e))
	echo "rmat $1: $want triangles, $v vertices, $e edges, CSR $csr bytes" | tee -a "$RES"
}

# before_lib_start: with a BEFORE payload (before-cuda/ and trigrid-before),
# builds its libtrigrid_cuda.so in the background; before_lib_wait then
# sets BEFORE_LIB to it (empty without one or when it did not build).
before_lib_start() {
	BEFORE_LIB=
	BEFORE_PID=
	[ -d "$DEV/before-cuda" ] && [ -x "$TMP/bin/trigrid-before" ] || return 0
	rm -rf "$TMP/before-cuda" && cp -r "$DEV/before-cuda" "$TMP/before-cuda"
	(make -C "$TMP/before-cuda" -j16 libtrigrid_cuda.so >"$OUT/build-before.log" 2>&1) &
	BEFORE_PID=$!
}
before_lib_wait() {
	[ -n "${BEFORE_PID:-}" ] || return 0
	wait "$BEFORE_PID" && BEFORE_LIB=$TMP/before-cuda/libtrigrid_cuda.so
	echo "before library: ${BEFORE_LIB:-did not build}" | tee -a "$RES"
}
