# shellcheck shell=bash
# What every suite of scripts/device.sh shares; sourced, not run.
#
# Results: say (a line of results.txt, echoed), rec (a record of
# records.jsonl, from which results.json is made), check NAME GOT WANT (ok
# or FAIL; FAIL makes the run exit 1), fail, skip, ok.
# Commands: xrun CMD... runs CMD under the current step's timeout, capped
# by the run's deadline, logs it to commands.txt and, with --dry-run
# (print), only prints it; tg ARGS... is xrun of trigrid; testbin, sanitize
# and mk (in their files) do the same for test binaries, compute-sanitizer
# and make, and, with --dry-run=cpu, check what they would run without a
# GPU.

# The device is one NVIDIA H200: its suites build the CUDA library for its
# generation only, which builds several times faster than the Makefile's
# default of every supported generation (CUDA_ARCH overrides).
export CUDA_ARCH="${CUDA_ARCH:-sm_90}"

START=$(date +%s)
DEADLINE=$((START + 570))
FAILS=0
OKS=0
SKIPS=0
SIDE=""
PART=""
RES=/dev/null
RECORDS=/dev/null
CMDLOG=/dev/null
CMD_T=300
LIBDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=$LIBDIR/results.py
exec 7>&1

elapsed() { echo $(($(date +%s) - START)); }
left() { echo $((DEADLINE - $(date +%s))); }
say() { printf '%s\n' "$*" | tee -a "$RES"; }
note() { printf 'device.sh: %s\n' "$*" >&2; }
die() {
	printf 'device.sh: %s\n' "$*" >&2
	exit 2
}
section() { say "== $* (at $(elapsed) s)"; }

# js STRING: STRING as a JSON string.
js() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\t'/\\t}
	s=${s//$'\n'/\\n}
	s=${s//$'\r'/\\r}
	printf '"%s"' "$s"
}

# rec STATUS NAME [KEY VALUE]...: appends a record. KEY# takes a number
# (a string when VALUE is not one), KEY@ a file of JSON embedded at the
# end.
rec() {
	local status=$1 name=$2 k v line
	shift 2
	line="{\"suite\":$(js "${PART:-$SUITE}"),\"name\":$(js "$name"),\"status\":$(js "$status"),\"at_s\":$(elapsed)"
	[ -n "$SIDE" ] && line+=",\"side\":$(js "$SIDE")"
	while [ $# -ge 2 ]; do
		k=$1 v=$2
		shift 2
		case $k in
		*'#')
			if [[ $v =~ ^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; then
				line+=",$(js "${k%#}"):$v"
			else
				line+=",$(js "${k%#}"):$(js "$v")"
			fi
			;;
		*@) line+=",$(js "$k"):$(js "$v")" ;;
		*) line+=",$(js "$k"):$(js "$v")" ;;
		esac
	done
	printf '%s}\n' "$line" >>"$RECORDS"
}

ok() { # NAME [DETAIL [KEY VALUE]...]
	local name=$1 detail=${2:-}
	shift 2 2>/dev/null || shift $#
	OKS=$((OKS + 1))
	say "ok   $name${detail:+ $detail}"
	rec ok "$name" detail "$detail" "$@"
}
fail() { # NAME DETAIL [KEY VALUE]...
	local name=$1 detail=$2
	shift 2
	FAILS=$((FAILS + 1))
	say "FAIL $name: $detail"
	rec fail "$name" detail "$detail" "$@"
	return 1
}
skip() { # NAME WHY
	SKIPS=$((SKIPS + 1))
	say "SKIP $1: $2"
	rec skip "$1" detail "$2"
}

# check NAME GOT WANT [KEY VALUE]...: exact; an empty GOT or WANT fails.
check() {
	local name=$1 got=$2 want=$3
	shift 3
	if [ "$DRY" = print ]; then
		say "DRY  $name (want ${want:-the expected count})"
		rec dry "$name" want# "$want" "$@"
		return 0
	fi
	if [ -n "$got" ] && [ -n "$want" ] && [ "$got" = "$want" ]; then
		OKS=$((OKS + 1))
		say "ok   $name $got"
		rec ok "$name" got# "$got" want# "$want" "$@"
		return 0
	fi
	FAILS=$((FAILS + 1))
	say "FAIL $name: got '$got' want '$want'"
	rec fail "$name" got# "$got" want# "$want" "$@"
	return 1
}

# rcmsg RC: why a command ended.
rcmsg() {
	case $1 in
	0) echo "exit 0" ;;
	124 | 137) echo "timed out (rc $1)" ;;
	125) echo "not run: the run's deadline had passed" ;;
	*) echo "exit $1" ;;
	esac
}

# tally TEXT [norec]: says the ok and FAIL lines a helper printed and
# counts them (norec: the helper wrote their records).
tally() {
	local line n
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		say "$line"
		n=${line#* }
		n=${n#"${n%%[! ]*}"}
		case $line in
		FAIL*)
			FAILS=$((FAILS + 1))
			[ "${2:-}" = norec ] || rec fail "$n"
			;;
		ok*)
			OKS=$((OKS + 1))
			[ "${2:-}" = norec ] || rec ok "$n"
			;;
		esac
	done <<<"$1"
}

# stop_procs ARRAY: TERM to every process whose PID the named array holds,
# then KILL to any still there 10 s later; empties the array.
stop_procs() {
	local -n _procs=$1
	local p
	[ ${#_procs[@]} -gt 0 ] || return 0
	for p in "${_procs[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${_procs[@]}"; do
		for _ in $(seq 20); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.5
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	_procs=()
}

cmdlog() { { printf '+'; printf ' %q' "$@"; printf '\n'; } >>"$CMDLOG"; }

# xrun CMD...: CMD under a timeout of CMD_T seconds, capped by the time left
# before the deadline (rc 125 without running when none is left).
xrun() {
	cmdlog "$@"
	if [ "$DRY" = print ]; then
		{ printf '+'; printf ' %q' "$@"; printf '\n'; } >&7
		return 0
	fi
	local t l
	t=$CMD_T
	l=$(($(left) - 15))
	[ "$l" -lt "$t" ] && t=$l
	if [ "$t" -lt 3 ]; then
		printf '+ (not run: deadline) %s\n' "$*" >>"$CMDLOG"
		return 125
	fi
	timeout -k 10 "$t" "$@"
}

tg() { xrun "$BIN" "$@"; }

# f3 NUMBER: NUMBER to 3 decimals (? when empty).
f3() { if [ -n "${1:-}" ]; then printf '%.3f' "$1" 2>/dev/null || printf '%s' "$1"; else printf '?'; fi; }

# jget FILE PATH...: values out of a JSON file, one a line.
jget() { python3 "$PY" get "$@"; }
j1() { python3 "$PY" get "$1" "$2"; }

# part NAME FN MIN_SECONDS: one part of a suite, unless --skip names it or
# fewer than MIN_SECONDS are left before the deadline.
part() {
	local name=$1 fn=$2 min=${3:-10} t0
	if [[ ",$SKIP_PARTS," == *",$name,"* ]]; then
		skip "part $name" "--skip $name"
		return 0
	fi
	if [ "$DRY" != print ] && [ "$(left)" -lt "$min" ]; then
		skip "part $name" "$(left) s left before the deadline, $min needed (raise --timeout or run it alone)"
		return 0
	fi
	t0=$(date +%s)
	PART=$name
	section "$name"
	"$fn"
	say "-- $name took $(($(date +%s) - t0)) s"
	rec info "part $name" elapsed_s# "$(($(date +%s) - t0))"
	PART=""
	finalize quiet
}

# finalize [quiet]: results.json from the records so far.
finalize() {
	[ "$RECORDS" = /dev/null ] && return 0
	local line
	line=$(python3 "$PY" finalize "$RECORDS" "$OUT" "$SUITE" "$DRY" "$LOGS/machine.txt" 2>&1)
	[ "${1:-}" = quiet ] && return 0
	say "$SUITE: $line (in $OUT: results.txt, results.json, commands.txt, logs.tar.gz)"
	pack_logs
}

# pack_logs: LOGS as OUT/logs.tar.gz (a device call returns 8 files of
# OUT at most); a log above 4 MiB keeps its last 4 MiB.
pack_logs() {
	local f
	[ -d "${LOGS:-}" ] || return 0
	for f in "$LOGS"/*; do
		[ -f "$f" ] && [ "$(stat -c %s "$f")" -gt $((4 << 20)) ] && tail -c $((4 << 20)) "$f" >"$f.tail" && mv "$f.tail" "$f"
	done
	tar -czf "$OUT/logs.tar.gz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")" 2>/dev/null
}

# The published counts of `trigrid gen rmat --scale S --edge-factor 16
# --seed 1` (docs/performance.md).
rmat_known() {
	case $1 in
	18) echo 82842671 ;;
	20) echo 423571919 ;;
	22) echo 2109057696 ;;
	23) echo 4673176691 ;;
	24) echo 10286549506 ;;
	25) echo 22528457603 ;;
	26) echo 49160836370 ;;
	27) echo 106880097173 ;;
	28) echo 231437221421 ;;
	29) echo 499658401240 ;;
	esac
}

# gscale S: the scale generated for rmat S (tiny ones with --dry-run=cpu).
gscale() {
	if [ "$DRY" = cpu ]; then
		local s=$(($1 - 12))
		[ $s -lt 7 ] && s=7
		echo $s
	else
		echo "$1"
	fi
}

# rmat S: sets G to rmat S (edge factor 16, seed 1) in GRAPHS, generated
# when missing (atomically, so a killed run leaves no partial graph); 1
# when it could not be.
declare -A SHOWN=()
rmat() {
	local s tmp rc
	s=$(gscale "$1")
	G=$GRAPHS/r$1.bin
	if [ "$DRY" = print ]; then
		[ -n "${SHOWN[$G]:-}" ] || tg gen rmat --scale "$s" --edge-factor 16 --seed 1 -q -o "$G"
		SHOWN[$G]=1
		return 0
	fi
	[ -s "$G" ] && return 0
	tmp=$GRAPHS/.r$1.$$.bin
	CMD_T=300 tg gen rmat --scale "$s" --edge-factor 16 --seed 1 -q -o "$tmp" >>"$LOGS/gen.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		rm -f "$tmp"
		fail "gen rmat $1" "$(rcmsg $rc) (gen.log)"
		return 1
	fi
	mv "$tmp" "$G"
}

# rmat_text S: sets G to rmat S as a text edge list beside the binary one.
rmat_text() {
	local b tmp rc
	rmat "$1" || return 1
	b=$G
	G=${b%.bin}.txt
	if [ "$DRY" = print ]; then
		[ -n "${SHOWN[$G]:-}" ] || tg convert -q "$b" "$G"
		SHOWN[$G]=1
		return 0
	fi
	[ -s "$G" ] && return 0
	tmp=$GRAPHS/.r$1.$$.txt
	tg convert -q "$b" "$tmp" >>"$LOGS/gen.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		rm -f "$tmp"
		fail "convert rmat $1 to text" "$(rcmsg $rc) (gen.log)"
		return 1
	fi
	mv "$tmp" "$G"
}

# rmat_want S: sets W to the expected count of rmat S: the published one,
# or (for a scale without one) the CPU's count, kept beside the graph.
rmat_want() {
	local s f
	s=$(gscale "$1")
	W=$(rmat_known "$s")
	[ "$s" = "$1" ] && [ -n "$W" ] && return 0
	W=""
	[ "$DRY" = print ] && return 0
	f=$GRAPHS/r$1.bin
	if [ ! -s "$f.want" ]; then
		tg count --device cpu --json --progress none --log-level warn "$f" >"$f.cpu.json" 2>>"$LOGS/count.err" &&
			j1 "$f.cpu.json" triangles >"$f.want"
	fi
	W=$(cat "$f.want" 2>/dev/null)
	[ -n "$W" ] || fail "rmat $1 expected count" "the CPU count failed (count.err)"
}

# count FILE ARGS...: `trigrid count --device gpu --json ARGS` into FILE
# (its stderr into FILE.err); its rc.
count() {
	local f=$1
	shift
	tg count --device "${COUNT_DEVICE:-gpu}" --json --progress none --log-level warn "$@" >"$f" 2>"$f.err"
}

# counted NAME WANT JSON RC: checks one count's triangles (the reason, when
# it failed, from its stderr).
counted() {
	local name=$1 want=$2 j=$3 rc=$4 got
	shift 4
	if [ "$DRY" = print ]; then
		check "$name" "" "$want"
		return 0
	fi
	if [ "$rc" -ne 0 ]; then
		fail "$name" "$(rcmsg "$rc"): $(tail -c 300 "$j.err" 2>/dev/null | tr '\n' ' ')" want# "$want"
		return 1
	fi
	got=$(j1 "$j" triangles)
	check "$name" "$got" "$want" seconds@ "$(jsec "$j")" "$@"
}

# jsec FILE: a file holding FILE's "seconds" object (for a record).
jsec() {
	local s=$1.seconds
	[ -f "$1" ] && j1 "$1" seconds >"$s" 2>/dev/null
	echo "$s"
}

# jn NAME: a fresh JSON path under WORK/json.
JN=0
jn() {
	JN=$((JN + 1))
	echo "$WORK/json/$JN-${1//[^A-Za-z0-9._-]/_}.json"
}

# The datasets of MANIFEST.tsv: each_dataset FN calls FN NAME FILE WANT
# for every one present in DATA (name, file and triangles columns).
each_dataset() {
	local name file want f
	if [ ! -f "$DATA/MANIFEST.tsv" ]; then
		skip "datasets" "no $DATA/MANIFEST.tsv (prepare copies ../shared/datasets)"
		return 0
	fi
	while IFS=$'\t' read -r name file _ _ _ want _; do
		case $name in '#'* | '') continue ;; esac
		f=$DATA/$file
		if [ ! -f "$f" ] && [ "$DRY" != print ]; then
			skip "dataset $name" "$file is not in $DATA"
			continue
		fi
		"$1" "$name" "$f" "$want"
	done <"$DATA/MANIFEST.tsv"
}

# dataset_files [text]: the datasets' paths (text: plain edge lists only).
dataset_files() {
	local name file f
	[ -f "$DATA/MANIFEST.tsv" ] || return 0
	while IFS=$'\t' read -r name file _; do
		case $name in '#'* | '') continue ;; esac
		f=$DATA/$file
		[ "${1:-}" = text ] && [[ $f != *.txt ]] && continue
		[ -f "$f" ] || [ "$DRY" = print ] && echo "$f"
	done <"$DATA/MANIFEST.tsv"
}

# dataset_want FILE: MANIFEST.tsv's count of the dataset FILE (a basename).
dataset_want() {
	[ -f "$DATA/MANIFEST.tsv" ] || return 0
	awk -F'\t' -v f="$1" '$1 !~ /^#/ && $2 == f { print $6 }' "$DATA/MANIFEST.tsv"
}

# dataset NAME: the path of the dataset whose file is NAME (empty if none).
dataset() { [ -f "$DATA/$1" ] || [ "$DRY" = print ] && echo "$DATA/$1"; }

# facts FILE JSON: sets V, E and CSR (8 bytes a vertex and 4 an edge) of a
# graph from one of its count's JSON; CSR is "CSR" in print mode.
facts() {
	local vals
	if [ "$DRY" = print ]; then
		V=V E=E CSR=CSR
		return 0
	fi
	mapfile -t vals < <(jget "$2" vertices edges)
	V=${vals[0]:-} E=${vals[1]:-}
	if [ -n "$V" ] && [ -n "$E" ]; then
		CSR=$((8 * (V + 1) + 4 * E))
	else
		CSR=""
	fi
}

# capof DIV: CSR / DIV in bytes (DIV may be a fraction).
capof() {
	if [ "$CSR" = CSR ]; then
		echo "CSR/$1"
	else
		awk -v c="$CSR" -v d="$1" 'BEGIN { printf "%d", c / d }'
	fi
}
