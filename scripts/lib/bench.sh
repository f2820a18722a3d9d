# shellcheck shell=bash
# The suites bench (kernel times), e2e (whole processes), partitions
# (--partitions 4 and --verify) and outofcore (device-memory caps); sourced.

# whole NAME FILE WANT: the whole-graph count on the device, checked, and
# the graph's V, E and CSR (from it; counted once a graph and side).
declare -A FACT_V=() FACT_E=() FACT_J=()
whole() {
	local name=$1 f=$2 want=$3 j rc key=$SIDE:$2
	if [ -n "${FACT_V[$key]:-}" ]; then
		V=${FACT_V[$key]} E=${FACT_E[$key]} WJ=${FACT_J[$key]}
		CSR=$((8 * (V + 1) + 4 * E))
		return 0
	fi
	j=$(jn "$name whole")
	WJ=$j
	CMD_T=180 count "$j" "$f"
	rc=$?
	counted "$name gpu whole" "$want" "$j" $rc metric# "$([ "$DRY" = print ] || j1 "$j" seconds.count)" unit s
	facts "$f" "$j"
	if [ "$DRY" != print ] && [ -n "$CSR" ]; then
		FACT_V[$key]=$V
		FACT_E[$key]=$E
		FACT_J[$key]=$j
		say "     $name: $V vertices, $E edges, CSR $CSR bytes; count $(f3 "$(j1 "$j" seconds.count)") s, total $(f3 "$(j1 "$j" seconds.total)") s"
	fi
}

# bench: `trigrid bench kernels` (median CUDA-event ms of RUNS runs, every
# run checked by bench against the CPU) on rmat SCALES and the datasets,
# each count also against the published one.
suite_bench() { part bench bench_kernels 30; }
bench_kernels() {
	local files=()
	[ "$BENCH_DATASETS" = 1 ] && mapfile -t files < <(dataset_files)
	bench_kernels_with "${files[@]}"
}

# bench_kernels_with DATASET...: bench kernels (MODES, KERNELS) of the
# datasets given and rmat SCALES, every row checked.
bench_kernels_with() {
	local files=() wants=() s f j rc extra=()
	for f in "$@"; do
		[ -n "$f" ] || continue
		files+=("$f")
		wants+=("$(basename "$f")=$(dataset_want "$(basename "$f")")")
	done
	for s in $SCALES; do
		rmat "$s" || continue
		rmat_want "$s"
		files+=("$G")
		wants+=("$(basename "$G")=$W")
	done
	[ ${#files[@]} -gt 0 ] || {
		skip "bench kernels" "no graphs"
		return 0
	}
	[ -n "$MODES" ] && extra+=(--modes "$MODES")
	[ -n "$KERNELS" ] && extra+=(--kernels "$KERNELS")
	j=$(jn bench)
	CMD_T=420 tg bench kernels --runs "$RUNS" --json "${extra[@]}" "${files[@]}" >"$j" 2>"$j.err"
	rc=$?
	[ "$DRY" = print ] && return 0
	[ $rc -eq 0 ] || fail "bench kernels${MODES:+ --modes $MODES}" "$(rcmsg $rc): $(tail -c 300 "$j.err" | tr '\n' ' ')"
	tally "$(python3 "$PY" benchrows "$j" "$RECORDS" "$PART" "$SIDE" "${wants[@]}")" norec
}

# e2e: `trigrid bench e2e` (fresh processes, medians of RUNS) of the first
# scale of SCALES as binary, as text and with --per-vertex, and of the
# second whole, with --partitions 4 and under a cap of a quarter of its CSR.
suite_e2e() { part e2e e2e_all 30; }
e2e_all() {
	local a b wa wb ga gb
	read -r a b _ <<<"$SCALES"
	b=${b:-$a}
	rmat "$a" && {
		ga=$G
		rmat_want "$a"
		wa=$W
		e2e "rmat $a binary" "$wa" "$ga"
		rmat_text "$a" && e2e "rmat $a text" "$wa" "$G"
	}
	rmat "$b" && {
		gb=$G
		rmat_want "$b"
		wb=$W
		e2e "rmat $b whole" "$wb" "$gb"
		e2e "rmat $b --partitions 4" "$wb" "$gb" -- --partitions 4
		if [ "$E2E_DEVICE" = gpu ]; then
			whole "rmat $b" "$gb" "$wb"
			[ -n "$CSR" ] && e2e "rmat $b cap CSR/4" "$wb" "$gb" -- --partitions 0 --device-mem-limit "$(capof 4)"
		fi
	}
	[ -n "${ga:-}" ] && e2e "rmat $a --per-vertex" "$wa" "$ga" -- --per-vertex "$WORK/v$a.tsv"
}

# e2e NAME WANT FILE [-- COUNT FLAGS]: one `bench e2e` row, its count
# checked; its medians go to results.json.
e2e() {
	local name=$1 want=$2 j rc vals
	shift 2
	j=$(jn "e2e $name")
	CMD_T=300 tg bench e2e --device "$E2E_DEVICE" --runs "$RUNS" --json "$@" >"$j" 2>"$j.err"
	rc=$?
	if [ "$DRY" = print ]; then
		check "e2e $name" "" "$want"
		return 0
	fi
	if [ $rc -ne 0 ]; then
		fail "e2e $name" "$(rcmsg $rc): $(tail -c 300 "$j.err" | tr '\n' ' ')"
		return 1
	fi
	mapfile -t vals < <(jget "$j" 0.triangles 0.whole_process_s 0.total_s 0.read_s 0.order_s 0.count_s 0.kernel_s 0.host_peak_bytes 0.runs 0.kernel 0.device)
	check "e2e $name" "${vals[0]:-}" "$want" data@ "$j" metric# "${vals[1]:-}" unit s
	say "     whole process $(f3 "${vals[1]:-}") s (in-process $(f3 "${vals[2]:-}"): read $(f3 "${vals[3]:-}"), order $(f3 "${vals[4]:-}"), count $(f3 "${vals[5]:-}"), kernel $(f3 "${vals[6]:-}")), host peak $(((${vals[7]:-0} + 524288) / 1048576)) MiB, median of ${vals[8]:-?}, ${vals[9]:-?} on ${vals[10]:-?}"
}

# partitions: rmat SCALES whole and through --partitions 4 (hash and
# range: the device split), rmat --verify-scale through --partitions 4
# --verify (the device's blocks against the host's split, every subtask
# against the reference kernel), and --big-scales whole and --partitions 4.
suite_partitions() { part partitions partitions_all 20; }
partitions_all() {
	local s sc j rc
	for s in $SCALES; do
		rmat "$s" || continue
		rmat_want "$s"
		whole "rmat $s" "$G" "$W"
		for sc in hash range; do
			j=$(jn "r$s p4 $sc")
			CMD_T=180 count "$j" --partitions 4 --scheme $sc "$G"
			rc=$?
			counted "rmat $s gpu -P 4 $sc" "$W" "$j" $rc metric# "$(j1 "$j" seconds.total)" unit s
		done
	done
	if [ -n "$VERIFY_SCALE" ]; then
		rmat "$VERIFY_SCALE" && rmat_want "$VERIFY_SCALE" && for sc in hash range; do
			j=$(jn "r$VERIFY_SCALE p4 $sc verify")
			CMD_T=240 count "$j" --partitions 4 --scheme $sc --verify "$G"
			rc=$?
			counted "rmat $VERIFY_SCALE gpu -P 4 $sc --verify" "$W" "$j" $rc
		done
	fi
	for s in $BIG_SCALES; do
		rmat "$s" || continue
		rmat_want "$s"
		whole "rmat $s" "$G" "$W"
		j=$(jn "r$s p4")
		CMD_T=240 count "$j" --partitions 4 "$G"
		rc=$?
		counted "rmat $s gpu -P 4 hash" "$W" "$j" $rc metric# "$(j1 "$j" seconds.total)" unit s
		[ "$DRY" = print ] || say "     rmat $s: input staged on the device while read: $(j1 "$WJ" input.staged | grep . || echo no)"
		# Large graphs leave the memory to the next ones.
		[ "$s" -ge 25 ] && [ "$DRY" != print ] && rm -f "$G"
	done
}

# outofcore: every graph under device-memory caps of CSR/DIV for each of
# --divs (P chosen by the device's accounting), by each of --paths:
# blocks (--partitions 0), whole (the whole graph under the cap: row
# ranges or blocks, as count chooses), ranges (--row-ranges on), stream
# (--partitions 0 --row-stream on). Each count equals the published one;
# a cap below the least that fits must be an error stating that least,
# which must then count exactly.
suite_outofcore() { part outofcore outofcore_all 30; }
outofcore_all() {
	local s
	for s in $SCALES; do
		rmat "$s" || continue
		rmat_want "$s"
		sweep "rmat $s" "$G" "$W"
	done
	[ "$SWEEP_DATASETS" = 1 ] && each_dataset sweep
}

sweep() { # NAME FILE WANT
	local d p
	whole "$1" "$2" "$3"
	if [ -z "$CSR" ]; then
		fail "$1 caps" "no uncapped count to size the caps from"
		return 1
	fi
	for d in $DIVS; do
		for p in $PATHS; do capped "$1" "$2" "$3" "$d" "$p"; done
	done
}

capped() { # NAME FILE WANT DIV PATH
	local name="$1 CSR/$4 $5" f=$2 want=$3 cap flags=() round j rc least got vals
	case $5 in
	blocks) flags=(--partitions 0) ;;
	whole) flags=() ;;
	ranges) flags=(--row-ranges on) ;;
	stream) flags=(--partitions 0 --row-stream on) ;;
	*)
		fail "$name" "unknown path $5 (blocks, whole, ranges, stream)"
		return 1
		;;
	esac
	cap=$(capof "$4")
	for round in 1 2 3; do
		j=$(jn "$name $round")
		CMD_T=180 count "$j" "${flags[@]}" --device-mem-limit "$cap" "$f"
		rc=$?
		if [ "$DRY" = print ]; then
			check "$name" "" "$want"
			return 0
		fi
		if [ $rc -eq 0 ]; then
			mapfile -t vals < <(jget "$j" triangles partition.p device_memory.row_ranges seconds.count seconds.total device_memory.peak_bytes)
			got=${vals[0]:-}
			check "$name" "$got" "$want" cap# "$cap" p# "${vals[1]:-}" metric# "${vals[3]:-}" unit s seconds@ "$(jsec "$j")"
			say "     cap $cap bytes: P=${vals[1]:--} ranges=${vals[2]:--} count $(f3 "${vals[3]:-}") s total $(f3 "${vals[4]:-}") s peak ${vals[5]:-?} bytes"
			return 0
		fi
		# "the least that fits is (about) N", "needs at least N", "the least
		# that can count this graph: N".
		least=$(grep -oE 'least[a-z ]*:? *[0-9]+' "$j.err" | grep -oE '[0-9]+$' | head -1)
		if [ -z "$least" ] || [ "$least" -le "$cap" ]; then
			fail "$name" "cap $cap bytes: $(rcmsg $rc): $(tail -c 300 "$j.err" | tr '\n' ' ')" cap# "$cap"
			return 1
		fi
		say "     $name: cap $cap bytes is below the stated least $least; counting at that"
		cap=$least
	done
	fail "$name" "no cap counted in 3 rounds (last $cap bytes)"
}
