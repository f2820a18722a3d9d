# shellcheck shell=bash
# The shards suite: how counting from shards keeps pace with the GPU.
# rmat S (the first of SCALES, default 23) is partitioned -P SH_P (default
# 4, hash); then, each count checked against the published count:
#   counts   RUNS rounds of the whole-graph count of the binary file and of
#            `count --shards` alternated (fresh processes, whole-process wall
#            time), their ratio, the count phase and its GPU busy share
#            (the engine's breakdown in the JSON: fetch, decode, stage, wait,
#            upload, kernel); the CPU path of the same shards once
#   cluster  min(RUNS, 3) fresh clusters (a coordinator and CL_WORKERS (--workers) GPU
#            workers; --devices as SH_DEVICES): the first job from the
#            shards, submit to result, against the whole-graph count
#   micro    the store's decode on 1 and all cores (storage.test; the first
#            run in fresh memory, the next in memory the process reuses),
#            pinning host memory in place (gpu.test), when those binaries
#            are there
#   profile  one `count --shards` with --cpu-profile (OUT/shards.pprof) and
#            debug logs
# Sourced.

SH_PIDS=()

suite_shards() {
	shards_setup || return 1
	part counts shards_counts 30
	part cluster shards_cluster 30
	part micro shards_micro 30
	part profile shards_profile 20
}

# shards_ab: the counts and cluster parts, for one side of the ab suite.
shards_ab() {
	shards_setup || return 1
	shards_counts
	shards_cluster
}

# shards_setup: SH_G, SH_W, SH_S: rmat S and its count; SH_DIR its shards.
shards_setup() {
	local s
	read -r s _ <<<"$SCALES"
	rmat "$s" || return 1
	rmat_want "$s"
	SH_G=$G SH_W=$W SH_S=$s
	# shellcheck disable=SC2153 # SH_P is set by device.sh (defaults, --shard-p)
	SH_DIR=$GRAPHS/r$s.p$SH_P.shards
	SH_WHOLE=()
	shards_partition
}

# shards_partition: SH_DIR from SH_G (kept between calls of one machine).
shards_partition() {
	local rc t0
	[ "$DRY" != print ] && [ -s "$SH_DIR/manifest.json" ] && return 0
	rm -rf "$SH_DIR"
	t0=$(date +%s%N)
	CMD_T=240 tg partition --progress none -P "$SH_P" --scheme hash -o "$SH_DIR" "$SH_G" >"$LOGS/shards-partition.log" 2>&1
	rc=$?
	[ "$DRY" = print ] && return 0
	if [ $rc -ne 0 ]; then
		fail "shards: partition rmat $SH_S -P $SH_P" "$(rcmsg $rc): $(tail -3 "$LOGS/shards-partition.log" | tr '\n' ' ')"
		return 1
	fi
	say "     partitioned rmat $SH_S -P $SH_P in $(ms_since "$t0") ms: $(du -sh "$SH_DIR" | cut -f1)"
}

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# timed NAME JSON ARGS...: one fresh `count ARGS` into JSON, checked; sets
# WALL (seconds, whole process).
timed() {
	local name=$1 j=$2 t0 rc
	shift 2
	t0=$(date +%s%N)
	CMD_T=240 count "$j" "$@"
	rc=$?
	WALL=$(python3 -c "print(round(($(date +%s%N) - $t0) / 1e9, 4))")
	counted "$name" "$SH_W" "$j" $rc metric# "$WALL" unit s
}

shards_counts() {
	local r jw js ratio vals busy
	for r in $(seq "$RUNS"); do
		jw=$(jn "shards whole $r")
		js=$(jn "shards shards $r")
		if [ $((r % 2)) = 1 ]; then
			timed "shards: rmat $SH_S whole, whole process" "$jw" "$SH_G"
			local ww=$WALL
			timed "shards: rmat $SH_S --shards -P $SH_P, whole process" "$js" --shards "$SH_DIR"
		else
			timed "shards: rmat $SH_S --shards -P $SH_P, whole process" "$js" --shards "$SH_DIR"
			local ws=$WALL
			timed "shards: rmat $SH_S whole, whole process" "$jw" "$SH_G"
			ww=$WALL WALL=$ws
		fi
		[ "$DRY" = print ] && continue
		SH_WHOLE+=("$ww")
		ratio=$(python3 -c "print(round($WALL / $ww, 3))" 2>/dev/null)
		rec info "shards: --shards / whole, whole process" metric# "$ratio" unit x
		mapfile -t vals < <(jget "$js" seconds.count seconds.kernel engine.busy_share engine.kernel_share \
			engine.seconds.fetch engine.seconds.decode engine.seconds.stage engine.seconds.wait \
			engine.seconds.upload engine.loaders device_memory.idle_share)
		busy=${vals[2]:-}
		[ -n "$busy" ] || busy=$(python3 -c "print(round(1 - ${vals[10]:-1}, 3))" 2>/dev/null)
		rec info "shards: GPU busy share of the count phase" metric# "$busy" unit x
		rec info "shards: --shards count phase" metric# "${vals[0]:-}" unit s
		say "     round $r: whole $(f3 "$ww") s, --shards $(f3 "$WALL") s (x$ratio); count phase $(f3 "${vals[0]:-}") s, kernel $(f3 "${vals[1]:-}") s, busy $(f3 "$busy") (kernel $(f3 "${vals[3]:-}")); ${vals[9]:-?} loaders: fetch $(f3 "${vals[4]:-}"), decode $(f3 "${vals[5]:-}"), stage $(f3 "${vals[6]:-}"); waited $(f3 "${vals[7]:-}"), upload $(f3 "${vals[8]:-}") s"
	done
	js=$(jn "shards cpu")
	CMD_T=240 COUNT_DEVICE=cpu count "$js" --shards "$SH_DIR"
	counted "shards: rmat $SH_S --shards -P $SH_P on the CPU" "$SH_W" "$js" $?
}

shards_stop() { stop_procs SH_PIDS; }

# shards_ready URL: waits (up to 30 s) for a worker's /readyz.
shards_ready() {
	python3 - "$1" <<'EOF'
import sys, time, urllib.request
for _ in range(120):
    try:
        if urllib.request.urlopen(sys.argv[1], timeout=1).status == 200:
            sys.exit(0)
    except Exception:
        pass
    time.sleep(0.25)
sys.exit(1)
EOF
}

shards_cluster() {
	local r n i dir addr gossip j rc t0 wall vals whole ratio devs=()
	n=$((RUNS < 3 ? RUNS : 3))
	[ -n "$SH_DEVICES" ] && devs=(--devices "$SH_DEVICES")
	trap 'shards_stop; on_signal' INT TERM
	for r in $(seq "$n"); do
		dir=$WORK/shards-cluster-$r
		rm -rf "$dir"
		mkdir -p "$dir/state"
		addr=127.0.0.1:$PORT gossip=127.0.0.1:$((PORT + 1))
		if [ "$DRY" = print ]; then
			xrun "$BIN" coordinator --listen "$addr" --gossip "$gossip" --state "$dir/state" --data-dir "$GRAPHS" --gossip-timing local
			xrun "$BIN" worker --join "$gossip" --device gpu "${devs[@]}" --name w1 --gossip-timing local --metrics 127.0.0.1:$((PORT + 2))
			tg submit --coordinator "$addr" --wait --json --shards "$SH_DIR"
			check "shards: cluster first job" "" "$SH_W"
			continue
		fi
		cmdlog "$BIN" coordinator --listen "$addr" --gossip "$gossip" --state "$dir/state" --data-dir "$GRAPHS"
		"$BIN" coordinator --listen "$addr" --gossip "$gossip" --state "$dir/state" --data-dir "$GRAPHS" \
			--gossip-timing local --log-level warn >"$LOGS/shards-coordinator-$r.log" 2>&1 &
		SH_PIDS+=($!)
		for i in $(seq "$CL_WORKERS"); do
			cmdlog "$BIN" worker --join "$gossip" --device gpu "${devs[@]}" --name "w$i" --metrics "127.0.0.1:$((PORT + 1 + i))"
			"$BIN" worker --join "$gossip" --device gpu "${devs[@]}" --name "w$i" --gossip-timing local --log-level warn \
				--metrics "127.0.0.1:$((PORT + 1 + i))" >"$LOGS/shards-worker-$r-$i.log" 2>&1 &
			SH_PIDS+=($!)
		done
		for i in $(seq "$CL_WORKERS"); do
			shards_ready "http://127.0.0.1:$((PORT + 1 + i))/readyz" || {
				fail "shards: cluster $r: worker $i" "not ready after 30 s: $(tail -3 "$LOGS/shards-worker-$r-$i.log" | tr '\n' ' ')"
				shards_stop
				return 1
			}
		done
		j=$(jn "shards cluster $r")
		t0=$(date +%s%N)
		CMD_T=120 tg submit --coordinator "$addr" --wait --json --progress none --shards "$SH_DIR" >"$j" 2>"$j.err"
		rc=$?
		wall=$(python3 -c "print(round(($(date +%s%N) - $t0) / 1e9, 4))")
		shards_stop
		if [ $rc -ne 0 ]; then
			fail "shards: cluster first job ($CL_WORKERS worker(s))" "$(rcmsg $rc): $(tail -c 300 "$j.err" | tr '\n' ' ')"
			continue
		fi
		mapfile -t vals < <(jget "$j" triangles seconds per_worker.0.busy_seconds per_worker.0.kernel_seconds \
			per_worker.0.upload_seconds per_worker.0.decode_seconds per_worker.0.fetch_seconds per_worker.0.wall_seconds)
		check "shards: cluster first job, submit to result ($CL_WORKERS worker(s))" "${vals[0]:-}" "$SH_W" metric# "$wall" unit s data@ "$j"
		whole=$(printf '%s\n' "${SH_WHOLE[@]}" | sort -n | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }')
		if [ -n "$whole" ]; then
			ratio=$(python3 -c "print(round($wall / $whole, 3))")
			rec info "shards: cluster first job / whole count" metric# "$ratio" unit x
		fi
		say "     cluster $r: submit to result $(f3 "$wall") s (x${ratio:-?} the whole count's median $(f3 "$whole")), job $(f3 "${vals[1]:-}") s; worker 1 busy $(f3 "${vals[2]:-}"), kernel $(f3 "${vals[3]:-}"), upload $(f3 "${vals[4]:-}"), decode $(f3 "${vals[5]:-}"), fetch $(f3 "${vals[6]:-}"), wall $(f3 "${vals[7]:-}") s"
	done
	trap 'on_signal' INT TERM
}

shards_micro() {
	local out
	if [ -x "$TB/storage.test" ] || [ "$DRY" = print ]; then
		out=$LOGS/shards-decode.log
		(cd "$ROOT/storage" && CMD_T=120 xrun env TRIGRID_BENCH_SHARDS="$SH_DIR" "$TB/storage.test" -test.run '^$' \
			-test.bench '^BenchmarkDecodeStore$' -test.benchtime 1x -test.count 3 -test.cpu "1,$(nproc)") >"$out" 2>&1
		[ "$DRY" = print ] || grep -E '^Benchmark|^(ok|FAIL)' "$out" | sed 's/^/     /' | tee -a "$RES"
	fi
	if [ -x "$TB/gpu.test" ] || [ "$DRY" = print ]; then
		out=$LOGS/shards-register.log
		(cd "$ROOT/kernels/gpu" && CMD_T=120 xrun env TRIGRID_CUDA_LIB="$LIB" "$TB/gpu.test" -test.run '^$' \
			-test.bench '^BenchmarkRegister$' -test.benchtime 3x) >"$out" 2>&1
		[ "$DRY" = print ] || grep -E '^Benchmark|^(ok|FAIL)' "$out" | sed 's/^/     /' | tee -a "$RES"
	fi
}

shards_profile() {
	local j
	j=$(jn "shards profile")
	CMD_T=120 tg count --device gpu --json --progress none --log-level debug --cpu-profile "$OUT/shards.pprof" \
		--shards "$SH_DIR" >"$j" 2>"$LOGS/shards-profile.log"
	counted "shards: rmat $SH_S --shards, profiled" "$SH_W" "$j" $?
	[ "$DRY" = print ] || cp "$j" "$LOGS/shards-profile.json"
}
