# shellcheck shell=bash
# The cluster suite: a coordinator and --workers GPU workers on this
# machine (loopback, gossip timing local), counting rmat SCALES (the first
# scale) exactly: from shards made by `trigrid partition -P 4` (the workers
# read them from the store), from the graph file (the coordinator cleans
# and partitions it, P given and P = 0 chosen from the workers' device
# memory), per vertex; and `trigrid count --shards` of the same shards in
# one process. Sourced.

CL_PIDS=()

cluster_stop() { stop_procs CL_PIDS; }

suite_cluster() {
	part cluster cluster_all 60
}

cluster_all() {
	local s dir addr gossip i sh j rc p ready=0 v
	read -r s _ <<<"$SCALES"
	rmat "$s" || return 1
	rmat_want "$s"
	dir=$WORK/cluster
	rm -rf "$dir"
	mkdir -p "$dir/state"
	addr=127.0.0.1:$PORT gossip=127.0.0.1:$((PORT + 1))
	sh=$dir/r$s.shards
	CMD_T=240 tg partition --progress none -P 4 --scheme hash -o "$sh" "$G" >"$LOGS/cluster-partition.log" 2>&1
	rc=$?
	if [ "$DRY" != print ] && [ $rc -ne 0 ]; then
		fail "cluster: partition rmat $s -P 4" "$(rcmsg $rc): $(tail -3 "$LOGS/cluster-partition.log" | tr '\n' ' ')"
		return 1
	fi
	j=$(jn "r$s count shards")
	CMD_T=240 count "$j" --shards "$sh"
	rc=$?
	counted "rmat $s count --shards (one process, -P 4)" "$W" "$j" $rc
	trap 'cluster_stop; on_signal' INT TERM
	cmdlog "$BIN" coordinator --listen "$addr" --gossip "$gossip" --state "$dir/state" --data-dir "$GRAPHS" --data-dir "$dir"
	if [ "$DRY" = print ]; then
		xrun "$BIN" coordinator --listen "$addr" --gossip "$gossip" --state "$dir/state" --data-dir "$GRAPHS" --data-dir "$dir" \
			--gossip-timing local --log-level warn
	else
		"$BIN" coordinator --listen "$addr" --gossip "$gossip" --state "$dir/state" --data-dir "$GRAPHS" --data-dir "$dir" \
			--gossip-timing local --log-level warn >"$LOGS/coordinator.log" 2>&1 &
		CL_PIDS+=($!)
	fi
	for i in $(seq "$CL_WORKERS"); do
		if [ "$DRY" = print ]; then
			xrun "$BIN" worker --join "$gossip" --device gpu --name "w$i" --gossip-timing local --log-level warn
		else
			cmdlog "$BIN" worker --join "$gossip" --device gpu --name "w$i" --gossip-timing local --log-level warn
			"$BIN" worker --join "$gossip" --device gpu --name "w$i" --gossip-timing local --log-level warn \
				>"$LOGS/worker-$i.log" 2>&1 &
			CL_PIDS+=($!)
		fi
	done
	if [ "$DRY" != print ]; then
		for _ in $(seq 60); do
			"$BIN" status --coordinator "$addr" >/dev/null 2>&1 && {
				ready=1
				break
			}
			sleep 0.5
		done
		if [ $ready = 0 ]; then
			fail "cluster: coordinator at $addr" "not answering after 30 s: $(tail -3 "$LOGS/coordinator.log" | tr '\n' ' ')"
			cluster_stop
			return 1
		fi
		ok "cluster: coordinator and $CL_WORKERS worker(s) started" "($addr)"
	fi
	cl_submit "rmat $s from shards, -P 4" --shards "$sh"
	cl_submit "rmat $s from the graph file, -P 4" -P 4 "$G"
	cl_submit "rmat $s from the graph file, P chosen from the workers' device memory" -P 0 "$G"
	v=$WORK/cluster-v$s.tsv
	rm -f "$v"
	cl_submit "rmat $s from shards, --per-vertex" --shards "$sh" --per-vertex "$v"
	[ "$DRY" = print ] || if [ -s "$v" ]; then
		check "cluster: rmat $s per-vertex triangles / 3" "$(sum3 "$v" 3)" "$W"
	else
		fail "cluster: rmat $s per-vertex file" "no $v"
	fi
	cluster_stop
	trap 'on_signal' INT TERM
	p=$(grep -cE 'level=(ERROR|error)|panic' "$LOGS"/worker-*.log "$LOGS/coordinator.log" 2>/dev/null | awk -F: '{ s += $NF } END { print s + 0 }')
	[ "$DRY" = print ] || say "     error lines in the coordinator's and workers' logs: $p"
}

# cl_submit NAME ARGS...: `submit --wait --json ARGS`, checked, timed.
cl_submit() {
	local name="cluster: $1" j rc t0 vals
	shift
	j=$(jn "$name")
	t0=$(date +%s%N)
	CMD_T=300 tg submit --coordinator "$addr" --wait --json "$@" >"$j" 2>"$j.err"
	rc=$?
	[ "$DRY" = print ] && {
		check "$name" "" "$W"
		return 0
	}
	if [ $rc -ne 0 ]; then
		fail "$name" "$(rcmsg $rc): $(tail -c 300 "$j.err" | tr '\n' ' ') $(tail -c 300 "$j" | tr '\n' ' ')"
		return 1
	fi
	mapfile -t vals < <(jget "$j" triangles seconds subtasks workers attempts requeued partitions)
	check "$name" "${vals[0]:-}" "$W" metric# "${vals[1]:-}" unit s data@ "$j"
	say "     ${vals[1]:-?} s in the coordinator ($((($(date +%s%N) - t0) / 1000000)) ms from submit to result), P=${vals[6]:-?}, ${vals[2]:-?} subtasks on ${vals[3]:-?} worker(s), ${vals[4]:-?} attempts, ${vals[5]:-?} requeued"
}
