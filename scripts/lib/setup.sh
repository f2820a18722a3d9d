# shellcheck shell=bash
# The GPU machine's side of every suite but prepare and selftest; sourced.
#
# device_setup: OUT, WORK, LOGS, GRAPHS and the results files; the prepared
# binaries (BIN_DIR, default .dev/bin, gzipped or not) unpacked into
# WORK/bin, the datasets (DATA_DIR, default .dev/data) into WORK/data as
# MANIFEST.tsv names them; the machine into results.txt.
# build_lib [tgdrv] [twt]: libtrigrid_cuda.so (and the tools) built from
# scratch in kernels/cuda; sets LIB (exported as TRIGRID_CUDA_LIB) and TGDRV.
# With --dry-run=cpu the library is the plain-C reference of the same ABI,
# built with gcc in a copy of kernels/cuda, and make only checks its targets
# (make -n).

device_setup() {
	OUT=${OUT:-/tmp/trigrid-device/$SUITE}
	mkdir -p "$OUT" || die "cannot create $OUT"
	OUT=$(cd "$OUT" && pwd)
	AUTO_WORK=""
	if [ -z "${WORK:-}" ]; then
		WORK=${TMPDIR:-/tmp}/trigrid-device
		# A dry run's work space is its own, removed at its end (main).
		if [ -n "$DRY" ]; then
			WORK=${TMPDIR:-/tmp}/trigrid-device-dry-$$
			# shellcheck disable=SC2034 # read by main (device.sh)
			AUTO_WORK=$WORK
		fi
	fi
	mkdir -p "$WORK/bin" "$WORK/json" "$WORK/data" || die "cannot create $WORK"
	if [ -z "${GRAPHS:-}" ]; then
		GRAPHS=$WORK/graphs
		# Generated graphs in memory where there is room (rmat 25 is 4.3 GB).
		if [ -z "$DRY" ] && [ -d /dev/shm ] && [ -w /dev/shm ] &&
			[ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((24 * 1024 * 1024)) ]; then
			GRAPHS=/dev/shm/trigrid-device
		fi
	fi
	mkdir -p "$GRAPHS" || die "cannot create $GRAPHS"
	# Results in OUT (results.txt, results.json, commands.txt,
	# logs.tar.gz: few files come back from a device call), logs in LOGS.
	LOGS=$WORK/logs/$SUITE
	rm -rf "$LOGS"
	mkdir -p "$LOGS" || die "cannot create $LOGS"
	RES=$OUT/results.txt
	RECORDS=$LOGS/records.jsonl
	CMDLOG=$OUT/commands.txt
	: >"$RES"
	: >"$RECORDS"
	: >"$CMDLOG"
	rm -f "$OUT/results.json" "$OUT/logs.tar.gz"
	trap 'on_signal' INT TERM
	say "scripts/device.sh $SUITE ${ARGS_TEXT:-}${DRY:+ (dry run: $DRY)}"
	say "started $(date -u '+%Y-%m-%d %H:%M:%S') UTC; deadline in $((DEADLINE - START)) s; out $OUT; graphs $GRAPHS"
	machine
	unpack_bins
	unpack_data
}

on_signal() {
	say "interrupted at $(elapsed) s"
	fail "run" "interrupted by a signal"
	finalize
	exit 1
}

machine() {
	local m=$LOGS/machine.txt gpu
	: >"$m"
	if [ "$DRY" = print ]; then
		xrun nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
		gpu="(dry run)"
	elif command -v nvidia-smi >/dev/null; then
		gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -8 | paste -sd ';' -)
	else
		gpu="no nvidia-smi"
	fi
	{
		echo "gpu=$gpu"
		echo "cores=$(nproc)"
		echo "memory_gib=$(free -g 2>/dev/null | awk '/Mem:/ { print $2 }')"
		echo "kernel=$(uname -r)"
		echo "os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
		echo "nvcc=$(find_nvcc >/dev/null && "$(find_nvcc)" --version 2>/dev/null | grep -o 'release [0-9.]*' | head -1)"
		echo "build=$(head -1 "$BIN_DIR/BUILD.txt" 2>/dev/null)"
		echo "tree=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
		echo "thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
	} >>"$m"
	say "machine: $(paste -sd ' ' "$m" | sed 's/=/: /g')"
}

# unpack_bins: WORK/bin/NAME for every BIN_DIR/NAME[.gz]; BIN is trigrid.
unpack_bins() {
	local f n
	TB=$WORK/bin
	BIN=$TB/trigrid
	if [ "$DRY" = print ]; then
		[ -e "$BIN_DIR/trigrid" ] || [ -e "$BIN_DIR/trigrid.gz" ] || note "no $BIN_DIR/trigrid: the commands shown name $BIN"
		return 0
	fi
	if [ ! -e "$BIN_DIR/trigrid" ] && [ ! -e "$BIN_DIR/trigrid.gz" ]; then
		say "FAIL no $BIN_DIR/trigrid[.gz]: run 'scripts/device.sh prepare' on a machine with Go and carry .dev/bin and .dev/data"
		exit 2
	fi
	for f in "$BIN_DIR"/*; do
		[ -f "$f" ] || continue
		n=$(basename "$f")
		case $n in
		*.txt | *.tsv) continue ;;
		*.gz) n=${n%.gz} && gunzip -c "$f" >"$TB/$n.tmp" && mv "$TB/$n.tmp" "$TB/$n" ;;
		*) cp "$f" "$TB/$n" ;;
		esac || die "cannot unpack $f into $TB"
		chmod +x "$TB/$n"
	done
	"$BIN" version >/dev/null 2>&1 || {
		say "FAIL $BIN does not run here: $("$BIN" version 2>&1 | head -2 | tr '\n' ' ')"
		exit 2
	}
	say "trigrid: $("$BIN" version 2>&1 | head -1); $(head -1 "$BIN_DIR/BUILD.txt" 2>/dev/null)"
}

# unpack_data: WORK/data holds MANIFEST.tsv and every file it names, as it
# names them (DATA_DIR/F, or DATA_DIR/F.gz unpacked).
unpack_data() {
	local name file
	DATA=$WORK/data
	if [ "$DRY" = print ]; then
		DATA=$DATA_DIR
		return 0
	fi
	[ -f "$DATA_DIR/MANIFEST.tsv" ] || {
		say "no $DATA_DIR/MANIFEST.tsv: the dataset checks are skipped"
		return 0
	}
	cp "$DATA_DIR/MANIFEST.tsv" "$DATA/MANIFEST.tsv"
	while IFS=$'\t' read -r name file _; do
		case $name in '#'* | '') continue ;; esac
		[ -s "$DATA/$file" ] && continue
		if [ -f "$DATA_DIR/$file" ]; then
			cp "$DATA_DIR/$file" "$DATA/$file"
		elif [ -f "$DATA_DIR/$file.gz" ]; then
			gunzip -c "$DATA_DIR/$file.gz" >"$DATA/$file.tmp" && mv "$DATA/$file.tmp" "$DATA/$file"
		fi
	done <"$DATA/MANIFEST.tsv"
}

find_nvcc() {
	local c
	for c in "$(command -v nvcc)" /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do
		[ -n "$c" ] && [ -x "$c" ] && {
			echo "$c"
			return 0
		}
	done
	return 1
}

find_sanitizer() {
	local c
	for c in "$(command -v compute-sanitizer)" /usr/local/cuda/bin/compute-sanitizer \
		/usr/local/cuda/compute-sanitizer/compute-sanitizer /usr/local/cuda-*/bin/compute-sanitizer; do
		[ -n "$c" ] && [ -x "$c" ] && {
			echo "$c"
			return 0
		}
	done
	return 1
}

# mk ARGS...: make (print mode: shown; cpu mode: make -n, which checks the
# targets and runs nothing).
mk() {
	if [ "$DRY" = cpu ]; then
		cmdlog make "$@"
		make -n "$@" >/dev/null
	else
		xrun make "$@"
	fi
}

# build_lib [tgdrv] [twt]: see the header. With --lib PATH the library is
# PATH and only the tools are built.
build_lib() {
	local want=(libtrigrid_cuda.so) t rc nvcc cuda=$ROOT/kernels/cuda
	for t in "$@"; do want+=("tools/$t"); done
	TGDRV=$cuda/tools/tgdrv
	if [ "$DRY" = cpu ]; then
		# What the GPU machine would build, checked; the reference library
		# and tgdrv built here from a copy (never in the shared tree).
		if mk -C "$cuda" clean && mk -C "$cuda" -j "$(nproc)" "${want[@]}"; then
			ok "build targets (make -n)" "${want[*]}"
		else
			fail "build targets (make -n)" "make -n -C kernels/cuda ${want[*]} failed"
		fi
		rm -rf "$WORK/cuda" && cp -r "$cuda" "$WORK/cuda" && rm -rf "$WORK/cuda/build" "$WORK/cuda"/*.so
		if make -s -C "$WORK/cuda" CC=gcc ref tgdrv >"$LOGS/build.log" 2>&1; then
			LIB=$WORK/cuda/libtrigrid_ref.so
			# shellcheck disable=SC2034 # used by the suites
			TGDRV=$WORK/cuda/tools/tgdrv
			ok "build (reference library in place of the CUDA one)" "$LIB"
		else
			fail "build" "make ref tgdrv in a copy of kernels/cuda failed: $(tail -5 "$LOGS/build.log" | tr '\n' ' ')"
			finalize
			exit 1
		fi
		export TRIGRID_CUDA_LIB=$LIB
		return 0
	fi
	if [ -n "${USER_LIB:-}" ]; then
		LIB=$USER_LIB
		[ "$DRY" = print ] || [ -f "$LIB" ] || die "--lib $LIB: no such file"
		want=("${want[@]:1}")
		say "library: $LIB (--lib; not rebuilt)"
		[ ${#want[@]} -gt 0 ] && { mk -C "$cuda" -j "$(nproc)" "${want[@]}" >"$LOGS/build.log" 2>&1 || fail "build ${want[*]}" "$(tail -5 "$LOGS/build.log" | tr '\n' ' ')"; }
		export TRIGRID_CUDA_LIB=$LIB
		return 0
	fi
	LIB=$cuda/libtrigrid_cuda.so
	export TRIGRID_CUDA_LIB=$LIB
	if [ "$DRY" != print ]; then
		nvcc=$(find_nvcc) || {
			fail "build" "no nvcc (neither on PATH nor under /usr/local/cuda*/bin)"
			finalize
			exit 1
		}
		t=$(dirname "$nvcc")
		case ":$PATH:" in *":$t:"*) ;; *) export PATH=$t:$PATH ;; esac
	fi
	# Objects may survive between calls on a reused machine: from scratch.
	mk -C "$cuda" clean >/dev/null 2>&1
	CMD_T=400 mk -C "$cuda" -j "$(nproc)" "${want[@]}" >"$LOGS/build.log" 2>&1
	rc=$?
	if [ "$DRY" = print ]; then
		return 0
	elif [ $rc -ne 0 ]; then
		fail "build" "make ${want[*]}: $(rcmsg $rc); the end of build.log:"
		grep -E "error|Error" "$LOGS/build.log" | head -20 | tee -a "$RES"
		tail -15 "$LOGS/build.log" | tee -a "$RES"
		finalize
		exit 1
	fi
	ok "build" "${want[*]} at $(elapsed) s"
}

# build_other_lib DIR: libtrigrid_cuda.so of another tree's kernels/cuda
# (the ab suite's side b) in DIR, in the background; wait_other_lib sets
# OTHER_LIB to it (a failure is a FAIL).
build_other_lib() {
	OTHER_LIB=$1/libtrigrid_cuda.so
	OTHER_PID=""
	if [ "$DRY" = cpu ]; then
		make -s -C "$1" CC=gcc ref >"$LOGS/build-b.log" 2>&1 && OTHER_LIB=$1/libtrigrid_ref.so
		return 0
	fi
	if [ "$DRY" = print ]; then
		mk -C "$1" -j "$(nproc)" libtrigrid_cuda.so
		return 0
	fi
	(CMD_T=400 mk -C "$1" -j "$(nproc)" libtrigrid_cuda.so >"$LOGS/build-b.log" 2>&1) &
	OTHER_PID=$!
}
wait_other_lib() {
	[ -n "${OTHER_PID:-}" ] || return 0
	if wait "$OTHER_PID"; then
		ok "build (side b)" "$OTHER_LIB"
	else
		fail "build (side b)" "$(tail -5 "$LOGS/build-b.log" | tr '\n' ' ')"
		OTHER_LIB=""
	fi
}
