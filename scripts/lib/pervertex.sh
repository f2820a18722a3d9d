# shellcheck shell=bash
# The pervertex suite: per-vertex and per-edge counts on the device
# (tg_count_local); sourced.
#   tests:    tgdrv -local on the text datasets (per vertex and per edge,
#             whole entry by entry against a CPU count, and P = 3 hash), the
#             kernels/gpu DeviceLocal tests (rmat up to --local-max-scale),
#             the CLI's per-vertex tests through the device;
#   memcheck: compute-sanitizer memcheck (P = 3) and racecheck (whole) of
#             tgdrv -local on CA-GrQc;
#   bench:    bench kernels --modes total,vertex,edge --kernels
#             auto,polak,wetric on soc-Epinions1 and rmat SCALES;
#   counts:   rmat SCALES counted with --per-vertex (and the first scale
#             --per-edge too), whole and -P 3: the per-vertex triangles sum
#             to 3 x the count, the per-edge support too; bench e2e of the
#             last scale total, --per-vertex, --per-vertex --per-edge.

suite_pervertex() {
	part tests pv_tests 60
	part memcheck pv_memcheck 30
	part bench pv_bench 30
	part counts pv_counts 30
}

pv_tests() {
	local files rc log=$LOGS/tgdrv-local.log
	mapfile -t files < <(dataset_files text)
	if [ ${#files[@]} -gt 0 ]; then
		CMD_T=180 xrun "$TGDRV" -lib "$LIB" -local -runs 1 -p 3 "${files[@]}" >"$log" 2>&1
		rc=$?
		if [ "$DRY" != print ]; then
			if [ $rc -eq 0 ] && tail -1 "$log" | grep -q '^PASS'; then
				ok "tgdrv -local -p 3 on ${#files[@]} datasets" "($(grep -cE 'per (vertex|edge) +whole ok .*P=3 hash: ok' "$log") per-vertex and per-edge checks ok)"
			else
				fail "tgdrv -local -p 3 on ${#files[@]} datasets" "$(rcmsg $rc) (tgdrv-local.log)"
				grep -vE ' ok |^device|identical' "$log" | head -15 | sed 's/^/     /' | tee -a "$RES"
			fi
		fi
	fi
	testbin "kernels/gpu DeviceLocal tests" gpu.test kernels/gpu 'DeviceLocal' 240 TRIGRID_LOCAL_MAX_SCALE="$LOCAL_MAX_SCALE"
	testbin "cmd/trigrid per-vertex through the device" cmd.test cmd/trigrid 'PerVertexThroughDevice|CountThroughDevice' 180 TRIGRID_PV_SCALE=14
}

pv_memcheck() {
	local grqc
	grqc=$(dataset CA-GrQc.txt)
	[ -n "$grqc" ] || {
		skip "compute-sanitizer of tgdrv -local" "no CA-GrQc.txt among the datasets"
		return 0
	}
	sanitize memcheck "tgdrv -local CA-GrQc -p 3" "$ROOT" "$TGDRV" -lib "$LIB" -local -runs 1 -p 3 "$grqc"
	sanitize racecheck "tgdrv -local CA-GrQc whole" "$ROOT" "$TGDRV" -lib "$LIB" -local -runs 1 -p 1 "$grqc"
}

pv_bench() {
	local saved_m=$MODES saved_k=$KERNELS
	MODES=${MODES:-total,vertex,edge}
	KERNELS=${KERNELS:-auto,polak,wetric}
	# soc-Epinions1 alone of the datasets.
	bench_kernels_with "$(dataset soc-Epinions1.txt)"
	MODES=$saved_m KERNELS=$saved_k
}

# sum3 FILE COLUMN: the sum of a TSV column (after its header) over 3, or
# "not a multiple of 3: SUM".
sum3() {
	awk -F'\t' -v c="$2" 'NR > 1 { s += $c } END { if (s % 3) printf "not a multiple of 3: %.0f", s; else printf "%.0f", s / 3 }' "$1"
}

pv_counts() {
	local s first=1 p j rc v e flags
	for s in $SCALES; do
		rmat "$s" || continue
		rmat_want "$s"
		for p in 1 3; do
			v=$WORK/v$s-p$p.tsv e=$WORK/e$s-p$p.tsv
			flags=(--per-vertex "$v")
			[ $first = 1 ] && flags+=(--per-edge "$e")
			j=$(jn "r$s pv p$p")
			rm -f "$v" "$e"
			CMD_T=240 count "$j" --partitions $p "${flags[@]}" "$G"
			rc=$?
			counted "rmat $s gpu -P $p --per-vertex" "$W" "$j" $rc
			[ "$DRY" = print ] && continue
			if [ -s "$v" ]; then
				check "rmat $s gpu -P $p per-vertex triangles / 3" "$(sum3 "$v" 3)" "$W"
			else
				fail "rmat $s gpu -P $p per-vertex file" "no $v"
			fi
			if [ $first = 1 ]; then
				if [ -s "$e" ]; then
					check "rmat $s gpu -P $p per-edge support / 3" "$(sum3 "$e" 3)" "$W"
				else
					fail "rmat $s gpu -P $p per-edge file" "no $e"
				fi
			fi
			rm -f "$v" "$e"
		done
		first=0
	done
	# Whole processes of the last scale: totals, per vertex, per edge too.
	[ -n "${G:-}" ] || return 0
	e2e "rmat $s total" "$W" "$G"
	e2e "rmat $s --per-vertex" "$W" "$G" -- --per-vertex "$WORK/pv.bin"
	e2e "rmat $s --per-vertex --per-edge" "$W" "$G" -- --per-vertex "$WORK/pv.bin" --per-edge "$WORK/pe.bin"
	rm -f "$WORK/pv.bin" "$WORK/pe.bin"
}
