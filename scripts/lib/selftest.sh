# shellcheck shell=bash
# The selftest suite: what can be checked of device.sh without a GPU (see
# `scripts/device.sh selftest --help`); sourced.

st_ok() {
	OKS=$((OKS + 1))
	printf 'ok   %s\n' "$*"
}
st_fail() {
	FAILS=$((FAILS + 1))
	printf 'FAIL %s\n' "$*"
}

# st_run NAME WANT_RC LOG ARGS...: device.sh ARGS, its exit status WANT_RC.
st_run() {
	local name=$1 want=$2 log=$3 rc t0
	shift 3
	t0=$(date +%s)
	env -u RUNS -u SCALES -u OUT bash "$SELF" "$@" >"$log" 2>&1
	rc=$?
	if [ "$rc" = "$want" ]; then
		st_ok "$name (exit $rc, $(($(date +%s) - t0)) s)"
		return 0
	fi
	st_fail "$name: exit $rc, want $want; the end of $log:"
	tail -15 "$log" | sed 's/^/     /'
	return 1
}

# st_results DIR: results.json of a dry run: no failure, something checked.
st_results() {
	python3 - "$1/results.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(f"FAIL {sys.argv[1]}: {e}")
    sys.exit(1)
bad = [r for r in d["results"] if r.get("status") == "fail"]
for r in bad[:10]:
    print(f"FAIL   {r.get('suite')}: {r.get('name')}: {r.get('detail') or ''} got {r.get('got')} want {r.get('want')}")
n = sum(1 for r in d["results"] if r.get("status") in ("ok", "dry"))
if bad or n == 0:
    print(f"FAIL {sys.argv[1]}: {len(bad)} failed, {n} passed")
    sys.exit(1)
print(f"ok   {sys.argv[1]}: {n} passed, {d['skipped']} skipped")
PY
}

suite_selftest() {
	local w f s src bin data rc out args cpu_args suites shellcheck_bin port
	w=${OUT:-${TMPDIR:-/tmp}/trigrid-device-selftest}
	rm -rf "$w"
	mkdir -p "$w" || die "cannot create $w"
	w=$(cd "$w" && pwd)
	echo "selftest in $w"

	# 1. Syntax and lint.
	for f in "$SELF" "$ROOT"/scripts/lib/*.sh; do
		if bash -n "$f" 2>"$w/bash-n.txt"; then st_ok "bash -n ${f#"$ROOT"/}"; else st_fail "bash -n ${f#"$ROOT"/}: $(head -3 "$w/bash-n.txt")"; fi
	done
	if shellcheck_bin=$(command -v shellcheck); then
		if (cd "$ROOT" && "$shellcheck_bin" -x scripts/device.sh scripts/lib/*.sh scripts/flagsab.sh) >"$w/shellcheck.txt" 2>&1; then
			st_ok "shellcheck scripts/device.sh scripts/lib/*.sh scripts/flagsab.sh"
		else
			st_fail "shellcheck: $(grep -c '^In ' "$w/shellcheck.txt") findings ($w/shellcheck.txt)"
			head -30 "$w/shellcheck.txt" | sed 's/^/     /'
		fi
	else
		echo "SKIP shellcheck: not installed (apt-get install shellcheck)"
	fi
	if python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' "$ROOT/scripts/lib/results.py" 2>"$w/py.txt"; then
		st_ok "python3 parses scripts/lib/results.py"
	else
		st_fail "scripts/lib/results.py: $(tail -1 "$w/py.txt")"
	fi

	# 2. Binaries and a few small datasets.
	if [ "$ST_PREPARED" = 1 ]; then
		bin=$BIN_DIR data=$DATA_DIR
		[ -e "$bin/trigrid" ] || [ -e "$bin/trigrid.gz" ] || die "--prepared: no $bin/trigrid (scripts/device.sh prepare)"
	else
		command -v go >/dev/null || die "selftest builds its binaries with Go (or give --prepared)"
		bin=$w/bin data=$w/data
		mkdir -p "$bin" "$data"
		echo "building the binaries into $bin"
		for s in "trigrid build ./cmd/trigrid" "gpu.test test ./kernels/gpu" "pipeline.test test ./pipeline" "cmd.test test ./cmd/trigrid"; do
			read -r f args src <<<"$s"
			gobuild "$ROOT" "$bin/$f" "$args" "$src" >/dev/null || {
				st_fail "go $args $src"
				return 1
			}
		done
		st_ok "built trigrid, gpu.test, pipeline.test, cmd.test"
		gzip -1 "$bin/cmd.test" # a gzipped binary, as prepare may leave one
		src=$DATASETS
		if [ -f "$src/MANIFEST.tsv" ]; then
			head -1 "$src/MANIFEST.tsv" >"$data/MANIFEST.tsv"
			for f in CA-GrQc.txt facebook_combined.txt ca-AstroPh.txt.gz; do
				[ -f "$src/$f" ] || continue
				awk -F'\t' -v f="$f" '$2 == f' "$src/MANIFEST.tsv" >>"$data/MANIFEST.tsv"
				cp "$src/$f" "$data/"
			done
			# A text dataset carried gzipped, as prepare may leave it.
			[ -f "$data/facebook_combined.txt" ] && gzip -1 "$data/facebook_combined.txt"
		else
			gunzip -c "$ROOT/testdata/ca-GrQc.txt.gz" >"$data/CA-GrQc.txt" || die "no datasets: neither $src nor testdata/ca-GrQc.txt.gz"
			printf '# name\tfile\tformat\tvertices\tedges\ttriangles\tnotes\nca-GrQc\tCA-GrQc.txt\tedgelist\t5242\t14484\t48260\ttestdata\n' >"$data/MANIFEST.tsv"
		fi
	fi

	# 3. Help, usage errors.
	st_run "device.sh --help" 0 "$w/help.txt" --help
	for s in ${SUITES:?}; do st_run "device.sh $s --help" 0 "$w/help-$s.txt" "$s" --help; done
	st_run "an unknown suite is refused" 2 "$w/usage-1.txt" nosuchsuite
	st_run "an unknown option is refused" 2 "$w/usage-2.txt" bench --no-such-option
	st_run "an option of another suite is refused" 2 "$w/usage-3.txt" bench --divs 4
	st_run "a bad value is refused" 2 "$w/usage-4.txt" outofcore --paths sideways --dry-run
	st_run "prepare --dry-run" 0 "$w/prepare-dry.txt" prepare --dry-run

	# 4. Every suite, commands printed, then run without a GPU.
	mkdir -p "$w/ab/side-b"
	cp "$bin"/trigrid* "$w/ab/side-b/"
	tar -czf "$w/ab/side-b/cuda.tar.gz" -C "$ROOT/kernels" --exclude build --exclude '*.so' --exclude tools/tgdrv --exclude tools/twt cuda
	echo "selftest: this tree again" >"$w/ab/side-b/REV"
	port=$((20000 + $$ % 20000))
	suites=${ST_SUITES:-check bench e2e partitions outofcore pervertex cluster multigpu final ab}
	for s in $suites; do
		args=("$s" --bin "$bin" --data "$data")
		case $s in
		ab) args+=(--suite bench --ab-dir "$w/ab/side-b") ;;
		cluster) args+=(--port "$port") ;;
		multigpu) args+=(--port "$((port + 10))") ;;
		esac
		cpu_args=()
		case $s in
		outofcore) cpu_args=(--divs "20 4 0.5" --paths "blocks whole ranges stream" --with-datasets) ;;
		final) cpu_args=(--divs "20 4") ;;
		esac
		out=$w/print/$s
		if st_run "$s --dry-run" 0 "$w/print-$s.txt" "${args[@]}" --dry-run --out "$out"; then
			if grep -q '^+ ' "$w/print-$s.txt" && ! grep -q '^FAIL' "$w/print-$s.txt"; then
				st_ok "$s --dry-run printed $(grep -c '^+ ' "$w/print-$s.txt") commands"
			else
				st_fail "$s --dry-run printed no commands or a FAIL ($w/print-$s.txt)"
			fi
		fi
		out=$w/cpu/$s
		if st_run "$s --dry-run=cpu" 0 "$w/cpu-$s.txt" "${args[@]}" "${cpu_args[@]}" --dry-run=cpu --out "$out" --work "$w/work" --graphs "$w/graphs"; then
			tally "$(st_results "$out")" norec
		else
			grep '^FAIL' "$w/cpu-$s.txt" | head -10 | sed 's/^/     /'
		fi
	done

	# 5. Strictness: a count other than the expected one fails the run.
	if [[ " $suites " == *" check "* ]]; then
		mkdir -p "$w/wrong"
		cp "$data"/* "$w/wrong/"
		awk -F'\t' 'BEGIN { OFS = "\t" } /^#/ { print; next } { $6 = $6 + 1; print }' "$data/MANIFEST.tsv" >"$w/wrong/MANIFEST.tsv"
		st_run "a wrong expected count fails (check --dry-run=cpu)" 1 "$w/wrong.txt" check --bin "$bin" --data "$w/wrong" \
			--skip tests,memcheck,conformance --dry-run=cpu --out "$w/cpu/wrong" --work "$w/work-wrong" --graphs "$w/graphs"
		if grep -q "^FAIL .*got '[0-9]*' want '[0-9]*'" "$w/wrong.txt"; then
			st_ok "the wrong count is a FAIL line naming got and want"
		else
			st_fail "no FAIL line for the wrong count ($w/wrong.txt)"
		fi
	fi

	echo "selftest: $OKS ok, $FAILS failed (logs in $w)"
	[ "$ST_KEEP" = 1 ] || [ "$FAILS" -gt 0 ] || rm -rf "${w:?}/work" "${w:?}/work-wrong" "${w:?}/graphs" "${w:?}/bin"
	[ "$FAILS" -eq 0 ]
}
