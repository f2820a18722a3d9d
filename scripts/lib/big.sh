#!/usr/bin/env bash
# scripts/lib/big.sh [options]: graphs past 2^32 edges on one GPU, in one
# device call (the GPU machine; carry .dev/bin and .dev/data from
# `scripts/device.sh prepare`). Builds the library, then each part in
# order, within --timeout:
#   small    trigrid bench kernels (auto, wetric) on soc-Epinions1 and
#            soc-Slashdot0902 (those of .dev/data) and rmat --small-rmat
#            scales (none), against MANIFEST.tsv and the published counts; with
#            --ab-flags also a second library, --ab-files (wetric) rebuilt with
#            those nvcc flags, the two alternated --rounds times; with --settings "A=1,B=2;C=3"
#            wetric under each list of kernel settings; every dataset once
#            (auto, wetric, trust); one ncu profile of wetric; with
#            --conformance 1 make conformance (tools/twt) on the text datasets
#   r24 r26 r27  rmat 24, 26, 27: gen (timed), bench e2e (kernel and whole
#            process), a debug count, one count --kernel trust
#   r28      rmat 28, edge factor 16 (2^32 input pairs): gen (timed, its
#            edges a second), bench e2e --runs RUNS through auto (wetric),
#            one count --kernel trust; both against the published count
#   r28e17   the same for rmat 28, edge factor 17 (4,498,211,467 edges)
#   stream   rmat --stream-scale (29) that no disk here holds: `gen ... --format
#            bin -o - | count -` once per --stream-kernels, against each other
#            (each count's debug log and JSON in the logs)
#   cap      rmat --cap-scale (28) out of core: one count for the CSR's size,
#            one count at --device-mem-limit CSR/4 with debug logs (the
#            pieces' steps, in the logs), the kernels/gpu tests of the pieces
#            and ranges (gpu.test), bench e2e at that cap and uncapped
#            (--cap-runs N, 3)
# Graphs go to /dev/shm (a graph is removed after its part). Results: OUT
# (results.txt, results.json, commands.txt, logs.tar.gz) as device.sh's.
#
# options: --runs N (5) --timeout S (570) --parts "P ..." (all) --rounds N (2)
#          --ab-flags "FLAGS" --ab-files "F ..." --settings "LISTS" --stream-scale S (29) --stream-kernels "K ..."
#          (auto trust) --small-runs N (9: bench kernels) --small-rmat "S ..." (rmat 18, 20, 22) --trust 0|1 (1: the rmat parts' trust count) --cap-runs N (3) --cap-scale S (28: 23 or 28) --out DIR
#          --bin DIR --data DIR --lib PATH (count through this library, not rebuilt)
#          --other-bin PATH (the rmat parts' bench e2e also through this trigrid,
#          alternated with this tree's --rounds times) --dry-run
# shellcheck source-path=SCRIPTDIR
# The parts are called by name (part NAME part_NAME): SC2317 cannot see it.
# shellcheck disable=SC2317
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=common.sh
. "$ROOT/scripts/lib/common.sh" || exit 2
# shellcheck source=setup.sh
. "$ROOT/scripts/lib/setup.sh" || exit 2
# shellcheck source=bench.sh
. "$ROOT/scripts/lib/bench.sh" || exit 2

SUITE=big
E2E_DEVICE=gpu
DRY="" RUNS=5 TIMEOUT=570 PARTS="small r28 r28e17 r27 stream" ROUNDS=2 AB_FLAGS=""
STREAM_SCALE=29 STREAM_KERNELS="auto trust" SKIP_PARTS="" SETTINGS="" AB_FILES=wetric TRUST=1 SMALL_RUNS=9 CONFORMANCE=0 CAP_RUNS=3 CAP_SCALE=28 SMALL_RMAT=""
BIN_DIR=$ROOT/.dev/bin DATA_DIR=$ROOT/.dev/data GRAPHS="" WORK="" USER_LIB="" KEPT="" OTHER_BIN=""
ARGS_TEXT="$*"
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2 ;;
	--timeout) TIMEOUT=$2 ;;
	--parts) PARTS=$2 ;;
	--rounds) ROUNDS=$2 ;;
	--ab-flags) AB_FLAGS=$2 ;;
	--settings) SETTINGS=$2 ;;
	--ab-files) AB_FILES=$2 ;;
	--trust) TRUST=$2 ;;
	--small-runs) SMALL_RUNS=$2 ;;
	--small-rmat) SMALL_RMAT=$2 ;;
	--cap-runs) CAP_RUNS=$2 ;;
	--cap-scale) CAP_SCALE=$2 ;;
	--conformance) CONFORMANCE=$2 ;;
	--stream-scale) STREAM_SCALE=$2 ;;
	--stream-kernels) STREAM_KERNELS=$2 ;;
	--out) OUT=$2 ;;
	--bin) BIN_DIR=$(realpath -m "$2") ;;
	--data) DATA_DIR=$(realpath -m "$2") ;;
	--lib) USER_LIB=$(realpath -m "$2") ;;
	--other-bin) OTHER_BIN=$(realpath -m "$2") ;;
	--dry-run)
		DRY=print
		shift
		continue
		;;
	-h | --help)
		sed -n '2,/^# shellcheck/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) die "big.sh: unknown option $1 (--help)" ;;
	esac
	[ $# -ge 2 ] || die "$1 needs a value"
	shift 2
done
for x in "$RUNS" "$TIMEOUT" "$ROUNDS" "$STREAM_SCALE" "$CAP_RUNS" "$CAP_SCALE"; do
	[[ $x =~ ^[0-9]+$ ]] || die "big.sh: $x is not a whole number"
done
for x in $PARTS; do
	case $x in small | r24 | r26 | r27 | r28 | r28e17 | stream | cap) ;; *) die "big.sh: no part $x" ;; esac
done
DEADLINE=$((START + TIMEOUT))

# The published counts (docs/performance.md), each from two kernels.
big_want() {
	case $1 in
	18-16) echo 82842671 ;;
	20-16) echo 423571919 ;;
	22-16) echo 2109057696 ;;
	23-16) echo 4673176691 ;;
	24-16) echo 10286549506 ;;
	26-16) echo 49160836370 ;;
	27-16) echo 106880097173 ;;
	28-16) echo 231437221421 ;;
	28-17) echo 266360741604 ;;
	esac
}

# big_gen S EF: G is rmat S with edge factor EF in GRAPHS, generated and
# timed (edges a second from the summary's count); one a part before kept
# (big_keep) is taken as it is.
big_gen() {
	local s=$1 ef=$2 t0 t1 secs raw
	G=$GRAPHS/r$s-$ef.bin
	[ "$DRY" = print ] && {
		tg gen rmat --scale "$s" --edge-factor "$ef" --seed 1 --progress none -o "$G"
		return 0
	}
	if [ "$KEPT" = "$G" ] && [ "$(stat -c %s "$G" 2>/dev/null)" = $((24 + 8 * (ef << s))) ]; then
		say "     rmat $s ef $ef: the graph of the part before"
		return 0
	fi
	rm -f "$G"
	t0=$(date +%s.%N)
	CMD_T=200 tg gen rmat --scale "$s" --edge-factor "$ef" --seed 1 --progress none -o "$G" >"$LOGS/gen-$s-$ef.log" 2>&1
	local rc=$?
	t1=$(date +%s.%N)
	if [ "$rc" -ne 0 ]; then
		fail "gen rmat $s ef $ef" "$(rcmsg "$rc"): $(tail -c 300 "$LOGS/gen-$s-$ef.log" | tr '\n' ' ')"
		rm -f "$G"
		return 1
	fi
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	raw=$((ef << s))
	ok "gen rmat $s ef $ef" "$secs s, $(awk -v n="$raw" -v t="$secs" 'BEGIN { printf "%.1f", n / t / 1e6 }')M edges/s, $(stat -c %s "$G") bytes" metric# "$secs" unit s
}

# big_graph NAME S EF: gen, bench e2e through auto, one count with debug
# logs (its phases and the device's steps), one count through trust, each
# against the published count; the graph removed after, unless the cap
# part comes later and takes it.
big_graph() {
	local name=$1 s=$2 ef=$3 want j rc
	want=$(big_want "$s-$ef")
	big_gen "$s" "$ef" || return 1
	if [ -n "$OTHER_BIN" ]; then
		# Side b's trigrid through the same library, alternated with this
		# tree's (a b, then b a) --rounds times.
		local r
		for r in $(seq "$ROUNDS"); do
			if [ $((r % 2)) = 1 ]; then
				e2e "$name a$r" "$want" "$G"
				BIN=$OTHER_BIN e2e "$name b$r" "$want" "$G"
			else
				BIN=$OTHER_BIN e2e "$name b$r" "$want" "$G"
				e2e "$name a$r" "$want" "$G"
			fi
		done
	else
		e2e "$name" "$want" "$G"
	fi
	big_debug "$name" "$want" "$s-$ef"
	if [ "$TRUST" = 1 ]; then
		j=$(jn "$name trust")
		CMD_T=240 count "$j" --kernel trust "$G"
		rc=$?
		counted "$name trust" "$want" "$j" "$rc" metric# "$([ "$DRY" = print ] || j1 "$j" seconds.kernel)" unit s
		[ "$DRY" = print ] || say "     $name trust: kernel $(f3 "$(j1 "$j" seconds.kernel)") s, count $(f3 "$(j1 "$j" seconds.count)") s, total $(f3 "$(j1 "$j" seconds.total)") s"
	fi
	big_keep "$s" "$ef"
}

# big_debug NAME WANT TAG: one count of G with debug logs (LOGS/debug-TAG.log):
# its phases and the device's preparation steps into the results.
big_debug() {
	local j rc
	j=$(jn "$1 debug")
	CMD_T=120 tg count --device gpu --json --progress none --log-level debug "$G" >"$j" 2>"$LOGS/debug-$3.log"
	rc=$?
	counted "$1 count (debug)" "$2" "$j" "$rc"
	[ "$DRY" = print ] && return 0
	say "     $1 phases: $(j1 "$j" seconds | tr -d '\n ' | head -c 300)"
	grep -E 'prepared|staged|unpinned|pinned in all' "$LOGS/debug-$3.log" | sed -E 's/^time=[^ ]* level=[A-Z]* //' | cut -c 1-300 | sed 's/^/     /' | tee -a "$RES"
}

# big_keep S EF: G removed, or kept (KEPT) when the cap part, later in
# PARTS, is to count this graph.
big_keep() {
	[ "$DRY" = print ] && return 0
	local after=" $PARTS "
	after=${after#* "$PART" }
	if [ "$1" = "$CAP_SCALE" ] && [ "$2" = 16 ] && [[ " $after " == *" cap "* ]]; then
		KEPT=$G
		return 0
	fi
	rm -f "$G"
}

part_r24() { big_graph "rmat 24" 24 16; }
part_r26() { big_graph "rmat 26" 26 16; }
part_r27() { big_graph "rmat 27" 27 16; }
part_r28() { big_graph "rmat 28" 28 16; }
part_r28e17() { big_graph "rmat 28 ef 17" 28 17; }

# part_small: bench kernels auto and wetric on the small datasets; with
# AB_FLAGS, a second library (those nvcc flags) alternated with this one.
part_small() {
	local files=() wants=() n f r side j
	for n in soc-Epinions1.txt soc-Slashdot0902.txt; do
		f=$(dataset "$n")
		[ -n "$f" ] || {
			skip "small $n" "not in $DATA"
			continue
		}
		files+=("$f")
		wants+=("$n=$(dataset_want "$n")")
	done
	for n in $SMALL_RMAT; do
		[ -n "$(big_want "$n-16")" ] || die "big.sh: no published count of rmat $n (--small-rmat 18, 20 or 22)"
		big_gen "$n" 16 || return 1
		files+=("$G")
		wants+=("$(basename "$G")=$(big_want "$n-16")")
	done
	[ ${#files[@]} -gt 0 ] || return 0
	local libs=("$LIB") sides=(a)
	if [ -n "$AB_FLAGS" ]; then
		# Side b: this tree's objects but those of --ab-files, rebuilt with
		# the flags (make does not see flags, so the copies stay current).
		local cb=$WORK/cuda-b o
		rm -rf "$cb" && cp -a "$ROOT/kernels/cuda" "$cb" && rm -f "$cb"/*.so
		for o in $AB_FILES; do rm -f "$cb/build/$o.o"; done
		CMD_T=300 mk -C "$cb" -j "$(nproc)" NVCCFLAGS="-O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -lineinfo -Xcompiler -fPIC $AB_FLAGS" libtrigrid_cuda.so >"$LOGS/build-b.log" 2>&1 ||
			fail "build b ($AB_FLAGS)" "$(tail -5 "$LOGS/build-b.log" | tr '\n' ' ')"
		libs+=("$cb/libtrigrid_cuda.so")
		sides+=(b)
		say "     side b: $AB_FLAGS"
	fi
	for r in $(seq "$ROUNDS"); do
		for side in 0 1; do
			[ "$side" -lt "${#libs[@]}" ] || continue
			SIDE=${sides[$side]}
			j=$(jn "small $r $SIDE")
			TRIGRID_CUDA_LIB=${libs[$side]} CMD_T=120 tg bench kernels --runs "$SMALL_RUNS" --json --kernels auto,wetric "${files[@]}" >"$j" 2>"$j.err"
			[ "$DRY" = print ] && continue
			tally "$(python3 "$PY" benchrows "$j" "$RECORDS" "$PART" "$SIDE" "${wants[@]}")" norec
		done
	done
	SIDE=""
	[ "$DRY" = print ] || [ ${#libs[@]} -lt 2 ] || python3 "$PY" abtable "$RECORDS" | tee -a "$RES"
	# Every dataset once through this tree's library: each count checked.
	local all=() allw=()
	# shellcheck disable=SC2119 # every format, not text only
	mapfile -t all < <(dataset_files)
	for f in "${all[@]}"; do allw+=("$(basename "$f")=$(dataset_want "$(basename "$f")")"); done
	j=$(jn "small datasets")
	CMD_T=120 tg bench kernels --runs 1 --json --kernels auto,wetric,trust "${all[@]}" >"$j" 2>"$j.err"
	[ "$DRY" = print ] || tally "$(python3 "$PY" benchrows "$j" "$RECORDS" "$PART" "" "${allw[@]}")" norec
	small_settings "${files[@]}"
	small_profile "${files[0]}"
	[ "$CONFORMANCE" = 1 ] || return 0
	local txt=()
	# shellcheck disable=SC2119 # text only
	mapfile -t txt < <(dataset_files text)
	if CMD_T=240 mk -C "$ROOT/kernels/cuda" -j "$(nproc)" conformance CHECK_GRAPHS="${txt[*]}" >"$LOGS/conformance.log" 2>&1; then
		ok "conformance" "$(grep -E '[0-9]+ passed, [0-9]+ failed' "$LOGS/conformance.log" | paste -sd ';' -)"
	else
		fail "conformance" "$(grep -E '^FAIL|[0-9]+ passed|rror' "$LOGS/conformance.log" | head -8 | tr '\n' ' ')"
	fi
}

# small_settings FILE...: wetric under each of SETTINGS (";"-separated
# lists of name=value, comma-separated), its median ms on each file.
small_settings() {
	local set flags j i n line
	[ -n "$SETTINGS" ] || return 0
	IFS=';' read -ra sets <<<"$SETTINGS"
	for set in "${sets[@]}"; do
		flags=()
		IFS=',' read -ra kv <<<"$set"
		for i in "${kv[@]}"; do flags+=(--kernel-setting "$i"); done
		j=$(jn "small setting $set")
		CMD_T=60 tg bench kernels --runs "$SMALL_RUNS" --json --kernels wetric "${flags[@]}" "$@" >"$j" 2>"$j.err"
		[ "$DRY" = print ] && continue
		line=""
		for ((n = 0; n < $#; n++)); do
			line+=" $(jget "$j" "$n.graph" | head -1) $(jget "$j" "$n.median_ms" | head -1) ms ($(jget "$j" "$n.ok" | head -1));"
		done
		say "     wetric $set:$line"
		rec info "small setting $set" detail "$line"
	done
}

# small_profile FILE: one Nsight Compute profile of the wedge kernel on
# FILE (when ncu is here), into the logs.
small_profile() {
	local ncu
	ncu=$(command -v ncu)
	[ -z "$ncu" ] && [ -x /usr/local/cuda/bin/ncu ] && ncu=/usr/local/cuda/bin/ncu
	if [ -z "$ncu" ]; then
		[ "$DRY" = print ] || say "     no ncu: the wedge kernel is not profiled"
		return 0
	fi
	CMD_T=120 xrun "$ncu" --kernel-name regex:wedge_kernel --launch-skip 1 --launch-count 1 --set full \
		"$BIN" bench kernels --runs 2 --kernels wetric "$1" >"$LOGS/ncu-wetric.txt" 2>&1
	[ "$DRY" = print ] || say "     ncu of wetric on $(basename "$1"): $(grep -E 'Duration|Achieved Occupancy' "$LOGS/ncu-wetric.txt" | tr -s ' ' | head -3 | paste -sd ';' -)"
}

# part_stream: rmat STREAM_SCALE through a pipe, once per kernel; the
# kernels' counts must agree.
part_stream() {
	local k j rc got first="" s=$STREAM_SCALE
	for k in $STREAM_KERNELS; do
		j=$(jn "stream r$s $k")
		cmdlog bash -c "trigrid gen rmat --scale $s --edge-factor 16 --seed 1 --format bin --progress none -o - | trigrid count --device gpu --json --kernel $k -"
		if [ "$DRY" = print ]; then
			say "DRY  gen rmat $s -o - | count --kernel $k -"
			continue
		fi
		local tv=()
		[ -x /usr/bin/time ] && tv=(/usr/bin/time -v)
		# shellcheck disable=SC2016 # expanded by the inner shell
		timeout -k 10 "$(($(left) - 15))" bash -o pipefail -c '"$1" gen rmat --scale "$2" --edge-factor 16 --seed 1 --format bin --progress none -o - 2>"$3.gen" |
			"${@:5}" "$1" count --device gpu --json --progress none --log-level debug --kernel "$4" - >"$3" 2>"$3.err"' _ "$BIN" "$s" "$j" "$k" "${tv[@]}"
		rc=$?
		cp "$j" "$LOGS/stream-r$s-$k.json" 2>/dev/null
		cp "$j.err" "$LOGS/stream-r$s-$k.log" 2>/dev/null
		if [ "$rc" -ne 0 ]; then
			fail "stream rmat $s $k" "$(rcmsg "$rc"): $(grep -v -e '^\s' -e 'level=DEBUG' "$j.err" | tail -c 300 | tr '\n' ' ') $(tail -c 200 "$j.gen")"
			continue
		fi
		got=$(j1 "$j" triangles)
		say "     stream rmat $s $k seconds: $(j1 "$j" seconds | tr -d '\n' | head -c 400)"
		say "     stream rmat $s $k: $got triangles, $(j1 "$j" edges) edges, kernel $(f3 "$(j1 "$j" seconds.kernel)") s, total $(f3 "$(j1 "$j" seconds.total)") s, peak $(grep -o 'Maximum resident set size (kbytes): [0-9]*' "$j.err" | grep -o '[0-9]*$') kB"
		if [ -z "$first" ]; then
			first=$got
			ok "stream rmat $s $k" "$got" got# "$got" seconds@ "$(jsec "$j")"
		else
			check "stream rmat $s $k against ${STREAM_KERNELS%% *}" "$got" "$first" seconds@ "$(jsec "$j")"
		fi
	done
}

# part_cap: rmat CAP_SCALE out of core. The graph, one count for its
# CSR's size (8 bytes a vertex, 4 an edge), one count at a quarter of the
# CSR with debug logs, the kernels/gpu tests of the pieces and the ranges,
# and bench e2e at that cap and uncapped.
part_cap() {
	local want j rc n m cap t
	local s=$CAP_SCALE
	want=$(big_want "$s-16")
	[ -n "$want" ] || die "big.sh: no published count of rmat $s (--cap-scale 23 or 28)"
	big_gen "$s" 16 || return 1
	j=$(jn "cap r$s size")
	CMD_T=120 count "$j" "$G"
	rc=$?
	counted "rmat $s uncapped count" "$want" "$j" "$rc" || return 1
	if [ "$DRY" = print ]; then
		cap=CAP
	else
		n=$(j1 "$j" vertices) m=$(j1 "$j" edges)
		cap=$(((8 * n + 4 * m) / 4))
		say "     rmat $s: $n vertices, $m edges, CSR/4 = $cap bytes"
	fi
	j=$(jn "cap r$s debug")
	CMD_T=150 tg count --device gpu --json --progress none --log-level debug --device-mem-limit "$cap" "$G" >"$j" 2>"$LOGS/cap-r$s-debug.log"
	rc=$?
	counted "rmat $s CSR/4 count (debug)" "$want" "$j" "$rc"
	[ "$DRY" = print ] || {
		say "     CSR/4 debug: $(j1 "$j" seconds | tr -d '\n' | head -c 400)"
		say "     CSR/4 plan: $(j1 "$j" plan.span_ids) (span ids), clean $(j1 "$j" plan.clean)"
		grep -E 'pieces:|counted in row ranges|does not fit' "$LOGS/cap-r$s-debug.log" | cut -c 1-300 | sed 's/^/     /' | tee -a "$RES"
	}
	t=$TB/gpu.test
	if [ "$DRY" != print ] && [ ! -x "$t" ]; then
		fail "cap gpu.test" "no gpu.test in $BIN_DIR (prepare builds it)"
	else
		(cd "$ROOT/kernels/gpu" && CMD_T=120 xrun "$t" -test.v -test.timeout 110s \
			-test.run 'Pieces|Marked|Span|CutRanges|Rope|Filled|Compact|Ranges|PrepareOrient') >"$LOGS/tests-cap.log" 2>&1
		rc=$?
		[ "$DRY" = print ] || if [ "$rc" -eq 0 ]; then
			ok "cap gpu.test" "($(grep -c '^--- PASS' "$LOGS/tests-cap.log") passed)"
		else
			fail "cap gpu.test" "$(rcmsg "$rc"): $(grep -E '^(--- FAIL|panic:)|_test\.go:[0-9]+:' "$LOGS/tests-cap.log" | head -5 | tr '\n' ' ')"
		fi
	fi
	RUNS=$CAP_RUNS e2e "rmat $s CSR/4" "$want" "$G" -- --device-mem-limit "$cap"
	RUNS=$CAP_RUNS e2e "rmat $s uncapped" "$want" "$G"
	[ "$DRY" = print ] || rm -f "$G"
}

device_setup
say "shm: $(df -h /dev/shm | awk 'NR == 2 { print $2 " total, " $4 " free" }')"
# shellcheck disable=SC2119 # no tools: the library only
build_lib
for p in $PARTS; do
	part "$p" "part_$p" 20
done
say "done at $(elapsed) s: $OKS ok, $FAILS failed, $SKIPS skipped"
finalize
[ "$FAILS" -gt 0 ] && exit 1
exit 0
