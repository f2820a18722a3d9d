# shellcheck shell=bash
# The final suite (the release check in one call) and the ab suite (one
# timing suite for two builds, alternated). Sourced.

# final: check + partitions + outofcore (CSR/4, CSR/20) + bench + e2e on
# rmat SCALES (22 23) and the datasets, in the order that puts exactness
# first and the parts of unknown length last, each part started only with
# its least time left before the deadline (--timeout, 540 s by default);
# a part left out for time is a SKIP and the run then exits 3.
suite_final() {
	part datasets check_datasets 30
	part partitions partitions_all 30
	part outofcore outofcore_all 30
	part tests check_tests 60
	part bench bench_kernels 30
	part e2e e2e_all 30
	part memcheck check_memcheck 40
	part conformance check_conformance 40
}

# ab: the timing suite --suite (bench, e2e, outofcore or partitions) for
# side a (this tree: BIN_DIR's trigrid, the library built here) and side b
# (AB_DIR, from `prepare --ab REV`: its trigrid and its kernels/cuda,
# built here), --rounds times, a then b in odd rounds and b then a in even
# ones; every count is checked on both sides, and the table gives each
# row's median of its metric (kernel ms, whole process s, count s) on each
# side and a / b.
suite_ab() {
	local r order side fn a_bin=$BIN a_lib=$LIB b_bin b_lib
	case $AB_SUITE in
	bench) fn=bench_kernels ;;
	e2e) fn=e2e_all ;;
	outofcore) fn=outofcore_all ;;
	partitions) fn=partitions_all ;;
	shards) fn=shards_ab ;;
	*) die "ab --suite $AB_SUITE: one of bench, e2e, outofcore, partitions, shards" ;;
	esac
	b_bin=$WORK/ab/trigrid
	b_lib=${OTHER_LIB:-}
	if [ "$DRY" != print ] && { [ ! -x "$b_bin" ] || [ -z "$b_lib" ]; }; then
		fail "ab" "side b is not ready (binary $b_bin, library ${b_lib:-not built})"
		return 1
	fi
	for r in $(seq "$ROUNDS"); do
		order="a b"
		[ $((r % 2)) = 0 ] && order="b a"
		for side in $order; do
			SIDE=$side
			if [ "$side" = a ]; then BIN=$a_bin LIB=$a_lib; else BIN=$b_bin LIB=$b_lib; fi
			export TRIGRID_CUDA_LIB=$LIB
			part "$AB_SUITE" "$fn" 20
		done
	done
	# shellcheck disable=SC2034 # read by rec (common.sh)
	SIDE=""
	BIN=$a_bin LIB=$a_lib
	export TRIGRID_CUDA_LIB=$LIB
	section "a / b (a: this tree; b: $(cat "$AB_DIR/REV" 2>/dev/null || echo "$AB_DIR"))"
	[ "$DRY" = print ] || python3 "$PY" abtable "$RECORDS" | tee -a "$RES"
}

# ab_setup: side b's binary and library (in the background while side a's
# builds).
ab_setup() {
	local f
	mkdir -p "$WORK/ab"
	if [ "$DRY" = print ]; then
		OTHER_LIB=$WORK/ab/cuda/libtrigrid_cuda.so
		xrun tar -xzf "$AB_DIR/cuda.tar.gz" -C "$WORK/ab"
		build_other_lib "$WORK/ab/cuda"
		return 0
	fi
	for f in trigrid trigrid.gz; do
		[ -f "$AB_DIR/$f" ] || continue
		case $f in
		*.gz) gunzip -c "$AB_DIR/$f" >"$WORK/ab/trigrid" ;;
		*) cp "$AB_DIR/$f" "$WORK/ab/trigrid" ;;
		esac
		chmod +x "$WORK/ab/trigrid"
	done
	if [ ! -x "$WORK/ab/trigrid" ] || [ ! -f "$AB_DIR/cuda.tar.gz" ]; then
		say "FAIL no side b in $AB_DIR: run 'scripts/device.sh prepare --ab REV' and carry $AB_DIR"
		exit 2
	fi
	rm -rf "$WORK/ab/cuda"
	tar -xzf "$AB_DIR/cuda.tar.gz" -C "$WORK/ab" || die "cannot unpack $AB_DIR/cuda.tar.gz"
	say "side b: $(cat "$AB_DIR/REV" 2>/dev/null), $("$WORK/ab/trigrid" version 2>&1 | head -1)"
	build_other_lib "$WORK/ab/cuda"
}
