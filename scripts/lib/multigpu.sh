# shellcheck shell=bash
# The multigpu suite: the runs of a machine with several GPUs (the
# nvidia-h200-x2, -x4 and -x8 kinds), each part a separate process tree on
# this machine (loopback, gossip timing local):
#   scale     rmat SCALES partitioned once into shards, then bench scale
#             over 1, 2, 4, 8 GPUs (one worker a GPU) and one worker with
#             every GPU; speedup, efficiency, time IR and TEPS against the
#             targets
#   simulate  bench simulate --validate on each scale report, and its
#             predictions for 1, 2, 4 and 8 GPUs
#   big       rmat BIG_SCALES streamed from gen into partition within
#             --mem-limit, counted from the shards across every GPU by two
#             kernels, both exact
#   kill      a GPU worker killed (kill -9) mid-job: exact, requeued, the
#             time lost against a clean job
# With --dry-run=cpu two CPU workers stand in for the GPUs. Sourced.

MG_PIDS=()
MG_N=0
MG_WHAT=GPU

# mg_gpus: MG_N, the GPUs to use (--gpus, else every GPU nvidia-smi lists).
mg_gpus() {
	MG_WHAT=GPU
	if [ "$DRY" = cpu ]; then
		MG_N=${MG_GPUS:-2} MG_WHAT="CPU worker"
		return 0
	fi
	if [ -n "$MG_GPUS" ]; then
		MG_N=$MG_GPUS
	elif [ "$DRY" = print ]; then
		MG_N=4
	else
		MG_N=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
	fi
	if [ "$MG_N" -lt 1 ]; then
		fail "multigpu: GPUs" "none found (nvidia-smi -L)"
		return 1
	fi
	say "     $MG_N GPU(s)"
}

# mg_counts: the GPU counts measured: 1, 2, 4, 8 up to MG_N, then MG_N.
mg_counts() {
	local n out=""
	for n in 1 2 4 8; do [ "$n" -le "$MG_N" ] && out+="$n,"; done
	[[ ",$out" == *",$MG_N,"* ]] || out+="$MG_N,"
	echo "${out%,}"
}

# mg_devlist: 0,1,...,MG_N-1.
mg_devlist() { seq -s, 0 $((MG_N - 1)); }

# mg_device_args: bench scale's flags for one worker a GPU (CPU workers
# with --dry-run=cpu).
mg_device_args() {
	if [ "$DRY" = cpu ]; then
		echo "--device cpu --cores-per-worker 1"
	else
		echo "--device gpu --devices $(mg_devlist)"
	fi
}

suite_multigpu() {
	mg_gpus || return 1
	# Two kernels for the big graphs: wetric (auto) and trust on the GPUs,
	# two of the CPU's with --dry-run=cpu.
	MG_KERNELS="auto trust"
	if [ "$DRY" = cpu ]; then
		MG_KERNELS="auto merge"
		# The tiny graphs' partitioner within a limit any machine has.
		[ "$MG_MEMLIMIT" = 64GiB ] && MG_MEMLIMIT=512MiB
	fi
	part scale mg_scale 120
	part simulate mg_simulate 20
	part big mg_big 240
	part kill mg_kill 90
}

# mg_shards S: sets SH to rmat S's shards (-P SH_P hash), made once.
mg_shards() {
	local rc
	SH=$WORK/multigpu/r$1-P$SH_P.shards
	if [ "$DRY" != print ] && [ -f "$SH/manifest.json" ]; then return 0; fi
	mkdir -p "$WORK/multigpu"
	CMD_T=600 tg partition --progress none -P "$SH_P" --scheme hash -o "$SH" "$G" >"$LOGS/multigpu-partition-r$1.log" 2>&1
	rc=$?
	if [ "$DRY" != print ] && [ $rc -ne 0 ]; then
		fail "multigpu: partition rmat $1 -P $SH_P" "$(rcmsg $rc): $(tail -3 "$LOGS/multigpu-partition-r$1.log" | tr '\n' ' ')"
		return 1
	fi
}

mg_scale() {
	local s j rc dir args first
	read -ra args <<<"$(mg_device_args)"
	for s in $SCALES; do
		rmat "$s" || continue
		rmat_want "$s"
		mg_shards "$s" || continue
		dir=$LOGS/scale-r$s
		j=$(jn "scale r$s")
		CMD_T=1200 tg bench scale --shards "$SH" --workers "$(mg_counts)" --repeat "$RUNS" "${args[@]}" \
			--progress none --json --out "$dir" >"$j" 2>"$j.err"
		rc=$?
		mg_report "rmat $s, one worker a GPU" "$j" $rc || continue
		first=$j
		# Every GPU in one worker: bench scale's worker on GPU 0, its
		# --devices widened by the flags it passes on.
		if [ "$DRY" != cpu ] && [ "$MG_N" -gt 1 ]; then
			j=$(jn "scale r$s one worker")
			CMD_T=600 tg bench scale --shards "$SH" --workers 1 --repeat "$RUNS" --device gpu --devices 0 \
				--progress none --json --out "$dir-one-worker" -- --devices "$(mg_devlist)" >"$j" 2>"$j.err"
			rc=$?
			mg_report "rmat $s, one worker with $MG_N GPUs" "$j" $rc && [ "$DRY" != print ] && mg_compare "$first" "$j"
		fi
	done
}

# mg_report NAME JSON RC: a bench scale report checked (its count against
# W) and said a row per worker count, with the issue's targets.
mg_report() {
	local name="multigpu: $1" j=$2 rc=$3 got
	if [ "$DRY" = print ]; then
		check "$name" "" "$W"
		return 0
	fi
	if [ "$rc" -ne 0 ]; then
		fail "$name" "$(rcmsg "$rc"): $(tail -c 400 "$j.err" | tr '\n' ' ')"
		return 1
	fi
	got=$(j1 "$j" triangles)
	check "$name" "$got" "$W" data@ "$j"
	python3 - "$j" <<'PY' | while IFS= read -r line; do say "     $line"; done
import json, sys
d = json.load(open(sys.argv[1]))
want = {2: 1.9, 4: 3.7, 8: 7.2}
for r in d["rows"]:
    n = r["workers"]
    aim = ""
    if n in want:
        aim = f"  (target {want[n]}x: {'met' if r['speedup'] >= want[n] else 'missed'})"
    print(f"{n} worker(s): job {r['job_s']:.3f} s (min {r['min_job_s']:.3f}), kernel {r['kernel_s']:.3f} s, "
          f"speedup {r['speedup']:.2f}x, efficiency {r['efficiency']:.2f}, IR {r['ir']:.3f}"
          f"{' (over 1.1)' if r['ir'] > 1.1 else ''}, {r['teps'] / 1e9:.2f} GTEPS{aim}")
PY
}

# mg_compare MANY ONE: the job time of MG_N workers of one GPU each (the
# report MANY) against one worker with every GPU (ONE).
mg_compare() {
	python3 - "$1" "$2" "$MG_N" <<'PY' | while IFS= read -r line; do say "     $line"; done
import json, sys
many, one, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
a = next((r["job_s"] for r in many["rows"] if r["workers"] == n), None)
b = one["rows"][0]["job_s"]
if a:
    print(f"{n} workers of one GPU: {a:.3f} s; one worker with {n} GPUs: {b:.3f} s ({b / a:.2f}x)")
PY
}

mg_simulate() {
	local s rep j rc
	for s in $SCALES; do
		rep=$LOGS/scale-r$s/scale.json
		if [ "$DRY" != print ] && [ ! -f "$rep" ]; then
			skip "multigpu: simulate rmat $s" "no bench scale report ($rep)"
			continue
		fi
		j=$(jn "simulate validate r$s")
		tg bench simulate --validate "$rep" --tolerance 0.15 --json >"$j" 2>"$j.err"
		rc=$?
		if [ "$DRY" = print ]; then
			:
		elif [ $rc -eq 0 ]; then
			ok "multigpu: bench simulate predicts rmat $s's measured jobs within 15%" "" data@ "$j"
		elif [ "$DRY" = cpu ] && grep -q tolerance "$j.err"; then
			# Jobs of milliseconds on tiny graphs are not held to 15%.
			ok "multigpu: bench simulate --validate rmat $s ran" "($(grep -o '[0-9.]*% off' "$j.err" | head -1) on tiny CPU jobs)"
		else
			fail "multigpu: bench simulate --validate rmat $s" "$(rcmsg $rc): $(tail -c 400 "$j.err" | tr '\n' ' ')"
		fi
		rmat "$s" || continue
		mg_shards "$s" || continue
		j=$(jn "simulate r$s")
		tg bench simulate --shards "$SH" --workers 1,2,4,8 --cost-model "$rep" --json --out "$LOGS/simulate-r$s" \
			>"$j" 2>"$j.err"
		rc=$?
		[ "$DRY" = print ] && continue
		if [ $rc -ne 0 ]; then
			fail "multigpu: bench simulate rmat $s for 1-8 GPUs" "$(rcmsg $rc): $(tail -c 400 "$j.err" | tr '\n' ' ')"
			continue
		fi
		ok "multigpu: bench simulate rmat $s for 1, 2, 4, 8 GPUs" "($LOGS/simulate-r$s)" data@ "$j"
		python3 - "$j" <<'PY' | while IFS= read -r line; do say "     $line"; done
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    print(f"predicted {r['workers']} worker(s): makespan {r['makespan_s']:.3f} s, efficiency {r['efficiency']:.2f}, IR {r['ir']:.3f}")
PY
	done
}

# mg_start N: a coordinator on 127.0.0.1:PORT and N workers, worker i on
# GPU i - 1 (the CPU with --dry-run=cpu); sets MG_ADDR and MG_PIDS.
mg_start() {
	local n=$1 dir=$WORK/multigpu/cluster gossip i dev ready=0
	MG_ADDR=127.0.0.1:$PORT gossip=127.0.0.1:$((PORT + 1))
	rm -rf "$dir"
	mkdir -p "$dir/state"
	trap 'mg_stop; on_signal' INT TERM
	if [ "$DRY" = print ]; then
		xrun "$BIN" coordinator --listen "$MG_ADDR" --gossip "$gossip" --state "$dir/state" --data-dir "$WORK/multigpu" \
			--gossip-timing local --log-level warn
	else
		cmdlog "$BIN" coordinator --listen "$MG_ADDR" --gossip "$gossip" --state "$dir/state" --data-dir "$WORK/multigpu"
		"$BIN" coordinator --listen "$MG_ADDR" --gossip "$gossip" --state "$dir/state" --data-dir "$WORK/multigpu" \
			--gossip-timing local --log-level warn >>"$LOGS/multigpu-coordinator.log" 2>&1 &
		MG_PIDS+=($!)
	fi
	for i in $(seq "$n"); do
		if [ "$DRY" = cpu ]; then dev=(--device cpu --cores 1); else dev=(--device gpu --devices $((i - 1))); fi
		if [ "$DRY" = print ]; then
			xrun "$BIN" worker --join "$gossip" "${dev[@]}" --name "g$i" --gossip-timing local --log-level warn
		else
			cmdlog "$BIN" worker --join "$gossip" "${dev[@]}" --name "g$i"
			"$BIN" worker --join "$gossip" "${dev[@]}" --name "g$i" --gossip-timing local --log-level warn \
				>>"$LOGS/multigpu-worker-$i.log" 2>&1 &
			MG_PIDS+=($!)
		fi
	done
	[ "$DRY" = print ] && return 0
	for _ in $(seq 120); do
		if "$BIN" status --coordinator "$MG_ADDR" --json 2>/dev/null | python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    o = json.loads(line) if line.strip() else {}
    n += "worker" in o and o.get("state") != "lost"
sys.exit(0 if n >= int(sys.argv[1]) else 1)' "$n" 2>/dev/null; then
			ready=1
			break
		fi
		sleep 0.5
	done
	if [ $ready = 0 ]; then
		fail "multigpu: a coordinator and $n worker(s)" "not all connected after 60 s: $(tail -3 "$LOGS/multigpu-coordinator.log" | tr '\n' ' ')"
		mg_stop
		return 1
	fi
	ok "multigpu: a coordinator and $n worker(s) started" "($MG_ADDR)"
}

mg_stop() {
	stop_procs MG_PIDS
	trap 'on_signal' INT TERM
}

# mg_submit NAME JSON ARGS...: `submit --wait --json ARGS` into JSON; sets
# MG_GOT (its triangles) and MG_SEC (the coordinator's job seconds).
mg_submit() {
	local name=$1 j=$2 rc vals
	shift 2
	MG_GOT="" MG_SEC=""
	CMD_T=900 tg submit --coordinator "$MG_ADDR" --wait --json "$@" >"$j" 2>"$j.err"
	rc=$?
	[ "$DRY" = print ] && return 0
	if [ $rc -ne 0 ]; then
		fail "$name" "$(rcmsg $rc): $(tail -c 300 "$j.err" | tr '\n' ' ') $(tail -c 300 "$j" | tr '\n' ' ')"
		return 1
	fi
	mapfile -t vals < <(jget "$j" triangles seconds)
	MG_GOT=${vals[0]:-} MG_SEC=${vals[1]:-}
}

mg_big() {
	local b bigs sh rc k j got1="" name
	bigs=$BIG_SCALES
	if [ "$MG_BIG_AUTO" = 1 ]; then
		bigs=29
		[ "$MG_N" -ge 8 ] && bigs="29 30"
	fi
	for b in $bigs; do
		# The published count only: the graph is streamed, never a file
		# to count on the CPU (tiny scales with --dry-run=cpu have none).
		W=""
		[ "$(gscale "$b")" = "$b" ] && W=$(rmat_known "$b")
		sh=$WORK/multigpu/r$b-big.shards
		rm -rf "$sh"
		mkdir -p "$WORK/multigpu"
		# Streamed: gen's pairs go straight into the partitioner, so no
		# file of 8 bytes a pair is written (69 GB at rmat 29).
		# shellcheck disable=SC2016 # expanded by the inner bash
		CMD_T=1500 xrun bash -c '"$1" gen rmat --scale "$2" --edge-factor 16 --seed 1 -q -o - |
			"$1" partition - --progress log -P "$3" --scheme hash --mem-limit "$4" -o "$5"' \
			mg-big "$BIN" "$(gscale "$b")" "$SH_P" "$MG_MEMLIMIT" "$sh" >"$LOGS/multigpu-big-r$b.log" 2>&1
		rc=$?
		if [ "$DRY" != print ] && [ $rc -ne 0 ]; then
			fail "multigpu: rmat $b streamed into partition -P $SH_P --mem-limit $MG_MEMLIMIT" \
				"$(rcmsg $rc): $(tail -3 "$LOGS/multigpu-big-r$b.log" | tr '\n' ' ')"
			continue
		fi
		[ "$DRY" = print ] || ok "multigpu: rmat $b partitioned within --mem-limit $MG_MEMLIMIT" "(-P $SH_P)"
		mg_start "$MG_N" || continue
		got1=""
		for k in $MG_KERNELS; do
			name="multigpu: rmat $b from shards on $MG_N $MG_WHAT(s), --kernel $k"
			j=$(jn "big r$b $k")
			mg_submit "$name" "$j" --shards "$sh" --kernel "$k" || continue
			[ "$DRY" = print ] && {
				check "$name" "" "$W"
				continue
			}
			if [ -n "$W" ]; then
				check "$name" "$MG_GOT" "$W" metric# "$MG_SEC" unit s data@ "$j"
			elif [ -n "$got1" ]; then
				check "$name (against auto's)" "$MG_GOT" "$got1" metric# "$MG_SEC" unit s data@ "$j"
			else
				ok "$name" "$MG_GOT triangles (no published count: the next kernel must agree)" metric# "$MG_SEC" unit s data@ "$j"
			fi
			[ -n "$got1" ] || got1=$MG_GOT
			say "     whole job from the shards: $(f3 "$MG_SEC") s"
		done
		mg_stop
		rm -rf "$sh"
	done
}

mg_kill() {
	local s j t0 rc vals victim lost wait_ms n=$MG_N
	read -r s _ <<<"$SCALES"
	[ "$n" -ge 2 ] || n=2 # one to kill, one to finish
	rmat "$s" || return 1
	rmat_want "$s"
	mg_shards "$s" || return 1
	mg_start "$n" || return 1
	j=$(jn "kill r$s clean")
	mg_submit "multigpu: rmat $s on $n workers, clean" "$j" --shards "$SH" || {
		mg_stop
		return 1
	}
	local clean=$MG_SEC
	[ "$DRY" = print ] || check "multigpu: rmat $s on $n workers, clean" "$MG_GOT" "$W" metric# "$clean" unit s
	j=$(jn "kill r$s killed")
	if [ "$DRY" = print ]; then
		tg submit --coordinator "$MG_ADDR" --wait --json --shards "$SH"
		xrun kill -KILL WORKER1
		check "multigpu: rmat $s with a worker killed mid-job" "" "$W"
		mg_stop
		return 0
	fi
	# The kill comes a third of the clean job's time in.
	wait_ms=$(awk -v c="${clean:-1}" 'BEGIN { printf "%d", c * 1000 / 3 }')
	t0=$(date +%s%N)
	cmdlog "$BIN" submit --coordinator "$MG_ADDR" --wait --json --shards "$SH"
	timeout -k 10 900 "$BIN" submit --coordinator "$MG_ADDR" --wait --json --shards "$SH" >"$j" 2>"$j.err" &
	local sub=$!
	sleep "$(awk -v m="$wait_ms" 'BEGIN { printf "%.3f", m / 1000 }')"
	# MG_PIDS: the coordinator, then worker 1.
	victim=${MG_PIDS[1]}
	cmdlog kill -KILL "$victim"
	kill -KILL "$victim" 2>/dev/null
	wait "$sub"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "multigpu: rmat $s with a worker killed mid-job" "$(rcmsg $rc): $(tail -c 300 "$j.err" | tr '\n' ' ')"
		mg_stop
		return 1
	fi
	mapfile -t vals < <(jget "$j" triangles seconds requeued attempts)
	check "multigpu: rmat $s with worker g1 killed (kill -9) $wait_ms ms in" "${vals[0]:-}" "$W" metric# "${vals[1]:-}" unit s data@ "$j"
	lost=$(awk -v a="${vals[1]:-0}" -v b="${clean:-0}" 'BEGIN { printf "%.3f", a - b }')
	say "     job $(f3 "${vals[1]:-}") s against $(f3 "$clean") s clean: $lost s lost; ${vals[2]:-?} subtask(s) requeued, ${vals[3]:-?} attempts ($((($(date +%s%N) - t0) / 1000000)) ms from submit to result)"
	if [ "$DRY" != cpu ] && [ "${vals[2]:-0}" = 0 ]; then
		fail "multigpu: the killed worker's subtasks requeued" "none requeued: the kill came after its last subtask (a larger first scale gives a longer job)"
	fi
	mg_stop
}
