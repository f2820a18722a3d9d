#!/usr/bin/env bash
# The partitioned device path from the input's own ids (tg_prep_ids_out)
# under the checks too slow for gpu-partitioned.sh's timing run, in one
# call on a GPU machine that has nvcc but no Go:
#   1. builds libtrigrid_cuda.so from this tree;
#   2. compute-sanitizer memcheck of `count --device gpu --partitions 2
#      --verify` on CA-GrQc with its ids as they are (dense compaction)
#      and spread over 64 bits (sparse compaction), against MANIFEST.tsv;
#   3. `count --device gpu --partitions 4 --verify` (hash and range) of
#      rmat SCALES (default "20 22"; `gen rmat --edge-factor 16 --seed 1`)
#      against the whole-graph count, each bounded by VERIFY_TIMEOUT
#      seconds (--verify recounts every subtask on the host).
# Prepare with `scripts/gpu-partitioned.sh --prepare` (the same payload);
# run from the repository root on the GPU machine, DEV carried:
#   bash $DEV/src/scripts/gpu-partverify.sh
# Everything goes under $OUT; results.txt is the summary.
set -uo pipefail
. "$(dirname "$0")/lib/devcheck.sh"

devcheck_setup gpu-partverify
SCALES=${SCALES:-"20 22"}
VERIFY_TIMEOUT=${VERIFY_TIMEOUT:-300}

DATA=$DEV/data
want=$(awk -F'\t' '$1 == "ca-GrQc" {print $6}' "$DATA/MANIFEST.tsv")
gunzip -c "$DATA/CA-GrQc.txt.gz" >"$TMP/grqc.txt"
awk '/^#/ {next} {printf "%.0f %.0f\n", $1 * 1000003 + 1099511627776, $2 * 1000003 + 1099511627776}' "$TMP/grqc.txt" >"$TMP/grqc-sparse.txt"
for f in grqc.txt grqc-sparse.txt; do
	timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN" count --device gpu --json --progress none \
		--partitions 2 --verify "$TMP/$f" >"$OUT/sanitizer-$f.log" 2>&1
	rc=$?
	echo "compute-sanitizer memcheck -P 2 --verify $f rc=$rc: $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer-$f.log")" | tee -a "$RES"
	[ $rc = 0 ] || fail=1
	check "-P 2 --verify $f (memcheck)" "$(triangles <"$OUT/sanitizer-$f.log")" "$want"
done

for s in $SCALES; do
	f=$TMP/r$s.bin
	"$BIN" gen rmat --scale "$s" --edge-factor 16 --seed 1 -q -o "$f"
	whole=$(count "$f" | triangles)
	for sc in hash range; do
		got=$(timeout "$VERIFY_TIMEOUT" "$BIN" count --device gpu --json --progress none --log-level warn --partitions 4 --scheme $sc --verify "$f" 2>>"$OUT/count.err" | triangles)
		check "rmat $s -P 4 $sc --verify (done at $(elapsed) s)" "$got" "$whole"
	done
done
echo "done at $(elapsed) s, fail=$fail" | tee -a "$RES"
tail -n 5 "$OUT/count.err" >>"$RES" 2>/dev/null
exit $fail
