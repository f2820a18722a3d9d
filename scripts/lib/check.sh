# shellcheck shell=bash
# The check suite: the kernels' conformance test, the Go device tests, the
# datasets through every device path and kernel, compute-sanitizer; and the
# helpers that run test binaries and the sanitizer. Sourced.

# testbin LABEL BINARY PKGDIR PATTERN SECONDS [ENV=VALUE]...: a test
# binary of prepare (run in its package's directory, through the library,
# -test.run PATTERN, empty for every test). With --dry-run=cpu: checks
# that every alternative of PATTERN names a test of the binary.
testbin() {
	local label=$1 name=$2 tb=$TB/$2 dir=$ROOT/$3 pat=$4 t=$5 one rc pass fails skips out
	shift 5
	if [ "$DRY" != print ] && [ ! -x "$tb" ]; then
		fail "$label" "no $name in $BIN_DIR (prepare builds it)"
		return 1
	fi
	if [ "$DRY" = cpu ]; then
		cmdlog env "$@" "$tb" -test.v -test.run "${pat:-.}"
		(cd "$dir" && "$tb" -test.list '.*') >"$WORK/tests.list" 2>&1 ||
			{ fail "$label" "$name -test.list failed: $(tail -3 "$WORK/tests.list" | tr '\n' ' ')"; return 1; }
		out=$(python3 "$PY" testlist "$WORK/tests.list" "${pat:-.}")
		tally "${out//-test.run/$name -test.run}"
		return 0
	fi
	one=$LOGS/tests.one
	(cd "$dir" && CMD_T=$t xrun env "$@" TRIGRID_DATA_DIR="$DATA" "$tb" -test.v -test.timeout "$((t - 15))s" ${pat:+-test.run "$pat"}) >"$one" 2>&1
	rc=$?
	[ "$DRY" = print ] && return 0
	cat "$one" >>"$LOGS/tests-$name.log"
	pass=$(grep -c '^--- PASS' "$one")
	fails=$(grep -c '^--- FAIL' "$one")
	skips=$(grep -c '^--- SKIP' "$one")
	if [ $rc -eq 0 ]; then
		ok "$label" "($pass passed, $skips skipped)" passed# "$pass" skipped# "$skips"
		grep '^--- SKIP' "$one" | head -5 | sed 's/^/     /' | tee -a "$RES"
	else
		fail "$label" "$(rcmsg $rc), $fails failed, $pass passed (tests-$name.log)" passed# "$pass" failed# "$fails"
		grep -E '^(--- FAIL|FAIL|panic:)|_test\.go:[0-9]+:' "$one" | head -25 | sed 's/^/     /' | tee -a "$RES"
	fi
	rm -f "$one"
}

# sanitize TOOL LABEL DIR CMD...: CMD (trigrid, a test binary or tgdrv)
# under compute-sanitizer --tool TOOL in DIR; ok when it exits 0 and the
# summary says no errors. Its output stays in OUT/sanitizer.log. With
# --dry-run=cpu: CMD without the sanitizer (a test binary: its pattern
# checked against the test list).
sanitize() {
	local tool=$1 label="compute-sanitizer $1 $2" dir=$3 cs rc summary one=$LOGS/sanitizer.one a pat=""
	shift 3
	if [ "$DRY" = cpu ]; then
		case $1 in
		*.test)
			for a in "$@"; do
				[ "${next:-}" = 1 ] && pat=$a
				next=0
				[ "$a" = -test.run ] && next=1
			done
			unset next
			cmdlog compute-sanitizer --tool "$tool" "$@"
			(cd "$dir" && "$1" -test.list '.*') >"$WORK/tests.list" 2>&1
			a=$(python3 "$PY" testlist "$WORK/tests.list" "${pat:-.}")
			tally "${a//-test.run/$label: -test.run}"
			;;
		*)
			(cd "$dir" && xrun "$@") >"$one" 2>&1
			rc=$?
			if [ $rc -eq 0 ]; then ok "$label" "(run without the sanitizer: exit 0)"; else fail "$label" "without the sanitizer: $(rcmsg $rc): $(tail -3 "$one" | tr '\n' ' ')"; fi
			;;
		esac
		return 0
	fi
	if [ "$DRY" = print ]; then
		(cd "$dir" && xrun compute-sanitizer --tool "$tool" --error-exitcode 9 "$@")
		return 0
	fi
	cs=$(find_sanitizer) || {
		skip "$label" "no compute-sanitizer on this machine"
		return 0
	}
	(cd "$dir" && CMD_T=${SAN_T:-240} xrun "$cs" --tool "$tool" --error-exitcode 9 "$@") >"$one" 2>&1
	rc=$?
	{
		echo "### $label: $*"
		cat "$one"
	} >>"$LOGS/sanitizer.log"
	summary=$(grep -E '(ERROR|RACECHECK) SUMMARY' "$one" | tail -1 | sed 's/^=* *//')
	if [ $rc -eq 0 ] && [[ $summary == *"SUMMARY: 0 "* ]]; then
		ok "$label" "($summary)"
	else
		fail "$label" "$(rcmsg $rc); ${summary:-no summary} (sanitizer.log)"
		if [ -n "$summary" ]; then
			grep -m 12 -E 'Invalid|Error|error|FAIL|at 0x|by thread' "$one" | sed 's/^/     /' | tee -a "$RES"
		else
			tail -4 "$one" | sed 's/^/     /' | tee -a "$RES"
		fi
	fi
	SAN_OUT=$one
}

suite_check() {
	part datasets check_datasets 30
	part tests check_tests 60
	part memcheck check_memcheck 60
	part conformance check_conformance 60
}

# Every dataset through the whole device path (as it is, --verify: the
# device's cleaning against the host's, and partitioned with --verify:
# the device's blocks against the host's split), every kernel on it (bench
# kernels --runs 1) and tgdrv (preprocessing, every kernel, P = 3),
# against MANIFEST.tsv.
check_datasets() {
	each_dataset dataset_counts
	dataset_kernels
	dataset_tgdrv
}

dataset_counts() { # NAME FILE WANT
	local v label flags j rc
	for v in "whole|" "--verify|--verify" "-P 3 hash --verify|--partitions 3 --verify" \
		"-P 2 range --verify|--partitions 2 --scheme range --verify"; do
		label=${v%%|*}
		read -ra flags <<<"${v#*|}"
		j=$(jn "$1")
		CMD_T=120 count "$j" "${flags[@]}" "$2"
		rc=$?
		counted "$1 gpu $label" "$3" "$j" $rc
	done
}

dataset_kernels() {
	local files f wants=() j rc
	mapfile -t files < <(dataset_files)
	[ ${#files[@]} -gt 0 ] || return 0
	for f in "${files[@]}"; do wants+=("$(basename "$f")=$(dataset_want "$(basename "$f")")"); done
	j=$(jn bench-datasets)
	CMD_T=240 tg bench kernels --runs 1 --json "${files[@]}" >"$j" 2>"$j.err"
	rc=$?
	[ "$DRY" = print ] && return 0
	[ $rc -eq 0 ] || fail "bench kernels (every kernel on the datasets)" "$(rcmsg $rc): $(tail -c 300 "$j.err" | tr '\n' ' ')"
	tally "$(python3 "$PY" benchrows "$j" "$RECORDS" "$PART" "$SIDE" "${wants[@]}")" norec
}

dataset_tgdrv() {
	local files rc log=$LOGS/tgdrv.log
	mapfile -t files < <(dataset_files text)
	[ ${#files[@]} -gt 0 ] || return 0
	CMD_T=180 xrun "$TGDRV" -lib "$LIB" -runs 1 -p 3 "${files[@]}" >"$log" 2>&1
	rc=$?
	[ "$DRY" = print ] && return 0
	if [ $rc -eq 0 ] && tail -1 "$log" | grep -q '^PASS'; then
		ok "tgdrv -p 3 on ${#files[@]} datasets" "($(grep -c ' ok ' "$log") kernel checks ok; tgdrv.log)"
	else
		fail "tgdrv -p 3 on ${#files[@]} datasets" "$(rcmsg $rc) (tgdrv.log)"
		grep -vE ' ok |^device|preprocess: .*identical' "$log" | head -15 | sed 's/^/     /' | tee -a "$RES"
	fi
}

# The Go tests through the real library: every kernels/gpu test (the
# device ones: every kernel whole and partitioned on the datasets and rmat
# up to --max-scale, preprocessing, id layouts, the device split, staging,
# per-vertex; the others run on the GPU beside the reference library), the
# pipeline's and the CLI's device tests.
check_tests() {
	testbin "kernels/gpu tests" gpu.test kernels/gpu "" 360 TRIGRID_MAX_SCALE="$MAX_SCALE"
	testbin "pipeline device tests" pipeline.test pipeline 'Device|Staged' 240
	testbin "cmd/trigrid device tests" cmd.test cmd/trigrid 'Device|Fallback' 240
}

# compute-sanitizer memcheck where a device path could read or write out
# of bounds: whole counts (dense and 64-bit ids), partitioned with
# --verify (ids as they are and spread over 64 bits), capped, the
# kernels/gpu tests of staging, pieces, ranges and streaming, the device
# split's pipeline test, tgdrv.
check_memcheck() {
	local grqc sparse spread gpu=$ROOT/kernels/gpu
	grqc=$(dataset CA-GrQc.txt)
	sparse=$WORK/sparse64.txt
	printf '18446744073709551615 7\n7 900000000000\n900000000000 18446744073709551615\n7 7\n5 5\n7 18446744073709551615\n' >"$sparse"
	sanitize memcheck "count, 64-bit ids" "$ROOT" "$BIN" count --device gpu --json --progress none "$sparse"
	if [ -n "$grqc" ]; then
		spread=$WORK/grqc-spread.txt
		[ "$DRY" = print ] || awk '/^#/ { next } { printf "%.0f %.0f\n", $1 * 1000003 + 1099511627776, $2 * 1000003 + 1099511627776 }' "$grqc" >"$spread"
		san_count "count CA-GrQc" "$grqc"
		san_count "count CA-GrQc -P 2 --verify" "$grqc" --partitions 2 --verify
		san_count "count CA-GrQc, ids spread over 64 bits, -P 2 --verify" "$spread" --partitions 2 --verify
		san_count "count CA-GrQc -P 3 capped at 300KiB" "$grqc" --partitions 3 --device-mem-limit 300KiB
		sanitize memcheck "tgdrv CA-GrQc -p 3" "$ROOT" "$TGDRV" -lib "$LIB" -runs 1 -p 3 "$grqc"
	else
		skip "compute-sanitizer memcheck of counts" "no CA-GrQc.txt among the datasets"
	fi
	sanitize memcheck "kernels/gpu staging and pieces" "$gpu" "$TB/gpu.test" -test.run 'TestDeviceStageIDs$|TestOrientInPieces$|TestOrientMarkedInPieces$'
	sanitize memcheck "kernels/gpu ranges" "$gpu" "$TB/gpu.test" -test.run 'TestCountInRanges$|TestRangesRefuse'
	sanitize memcheck "kernels/gpu row streaming" "$gpu" "$TB/gpu.test" -test.run 'TestRowStreamingUnderMemoryCaps$|TestRowStreamingRefusesMalformed$|TestCountInChunks$'
	sanitize memcheck "pipeline device split" "$ROOT/pipeline" "$TB/pipeline.test" -test.run 'TestPartitionedDeviceSplit$/messy.bin/(hash-4|range-3)/verify=false'
}

# san_count LABEL FILE ARGS...: a count under memcheck, its triangles
# against CA-GrQc's (the only dataset it is given).
san_count() {
	local label=$1 f=$2 got
	shift 2
	SAN_OUT=""
	sanitize memcheck "$label" "$ROOT" "$BIN" count --device gpu --json --progress none --log-level warn "$@" "$f"
	[ "$DRY" = cpu ] && SAN_OUT=$LOGS/sanitizer.one
	[ -n "$SAN_OUT" ] || return 0
	got=$(grep -o '"triangles": *[0-9]*' "$SAN_OUT" | head -1 | grep -o '[0-9]*$')
	check "$label (under memcheck)" "$got" "$(dataset_want CA-GrQc.txt)"
}

# make -C kernels/cuda conformance: tools/twt on random blocks against
# brute force under every setting variant, and the text datasets whole and
# partitioned against its CPU count, which must also be MANIFEST.tsv's.
check_conformance() {
	local files rc log=$LOGS/conformance.log
	mapfile -t files < <(dataset_files text)
	CMD_T=300 mk -C "$ROOT/kernels/cuda" conformance CHECK_GRAPHS="${files[*]}" >"$log" 2>&1
	rc=$?
	if [ "$DRY" = cpu ]; then
		if [ $rc -eq 0 ]; then ok "conformance target (make -n)"; else fail "conformance target (make -n)" "$(tail -3 "$log" | tr '\n' ' ')"; fi
		return 0
	fi
	[ "$DRY" = print ] && return 0
	if [ $rc -eq 0 ] && ! grep -q '^FAIL' "$log"; then
		ok "conformance (tools/twt random, check)" "($(grep -E '^[0-9]+ passed' "$log" | paste -sd ';' -))"
	else
		fail "conformance (tools/twt random, check)" "$(rcmsg $rc); $(grep -E '^[0-9]+ passed' "$log" | paste -sd ';' -) (conformance.log)"
		grep -E '^FAIL|rror' "$log" | head -20 | sed 's/^/     /' | tee -a "$RES"
	fi
	# twt's own CPU count of each dataset against the published one.
	tally "$(awk 'NR == FNR { if ($0 !~ /^#/) { split($0, c, "\t"); want[c[2]] = c[6] }; next }
		/^graph .*triangles=/ { f = $2; sub(/:$/, "", f); n = split(f, p, "/"); t = $NF; sub(/triangles=/, "", t)
			if (p[n] in want) print (want[p[n]] == t ? "ok   " : "FAIL ") "twt CPU count of " p[n] " " t " (MANIFEST " want[p[n]] ")" }' \
		"$DATA/MANIFEST.tsv" "$log" 2>/dev/null)"
}
