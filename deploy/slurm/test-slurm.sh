#!/usr/bin/env bash
# Runs deploy/slurm/trigrid.sbatch, unmodified, on a private one-node Slurm
# cluster and checks the exact triangle counts it prints and writes.
#
#   deploy/slurm/test-slurm.sh [--script FILE] [--binary FILE] [--timeout S] [--keep]
#
# It installs Debian's slurm-wlm and munge where they are missing (as root,
# with apt-get), writes a slurm.conf for this host alone under a temporary
# directory (every daemon on 127.0.0.1, on free ports, with its own munge
# socket and key, so an installed Slurm or munge is left alone), starts
# munged, slurmctld and slurmd, and submits the script with sbatch --wait.
# On the node as a CPU node:
#   - DRY_RUN=1: the head node's address is found and is not 127.0.1.1;
#   - testdata/ca-GrQc.txt.gz on 2 CPU workers (CPU_WORKERS_PER_NODE=2):
#     48,260 triangles, in the result file and on the job's stdout, both
#     workers joined under their own names and drained;
#   - the same from a shard store that trigrid partition wrote;
#   - a coordinator that cannot start (an unknown flag in COORDINATOR_ARGS):
#     the job fails at once, with the coordinator's log tail;
#   - ../shared/datasets/facebook_combined.txt (1,612,010 triangles), which
#     CI requires and a run elsewhere skips when it is absent;
# then on the node with two stand-in GPUs, ca-GrQc again with one worker
# per GPU and with one worker for both (WORKERS_PER=gpu, node; the workers
# count on the CPU: WORKER_ARGS=--device cpu). The counting jobs keep to
# loopback (TRIGRID_ADDR=127.0.0.1).
# Each job has --timeout seconds (default 240); one that runs longer is
# cancelled and the test fails with the logs. Only the daemons it started
# are stopped, on any exit. --script tests another batch script (an older
# one, say), --binary skips the build, --keep keeps the directory.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
script=$repo/deploy/slurm/trigrid.sbatch
binary=
timeout_s=240
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--script) script=$(realpath "$2"); shift 2 ;;
	--binary) binary=$(realpath "$2"); shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	*) echo "usage: $0 [--script FILE] [--binary FILE] [--timeout S] [--keep]" >&2; exit 2 ;;
	esac
done

log() { printf 'test-slurm: %s\n' "$*"; }
started=$SECONDS
tmp=
munged_pid=
ctld_pid=
slurmd_pid=
failed=1

dump_logs() {
	local f
	for f in "$tmp"/log/*.log "$tmp"/jobs/*.out "$tmp"/jobs/*.err "$tmp"/jobs/trigrid-*/*.log; do
		[ -s "$f" ] || continue
		echo "----- ${f#"$tmp"/} (last 60 lines)"
		tail -n 60 "$f"
	done
}
cleanup() {
	local rc=$?
	trap - EXIT
	set +e
	stop_cluster
	[ -n "$tmp" ] && [ "$failed" != 0 ] && dump_logs
	[ -n "$munged_pid" ] && stop_pid "$munged_pid"
	if [ -n "$tmp" ]; then
		if [ "$keep" = 1 ] || [ "$failed" != 0 ]; then
			log "kept $tmp"
		else
			rm -rf "$tmp"
		fi
	fi
	if [ "$failed" = 0 ]; then
		log "PASS in $((SECONDS - started)) s"
	else
		log "FAIL after $((SECONDS - started)) s"
		[ "$rc" -ne 0 ] || rc=1
	fi
	exit "$rc"
}
trap cleanup EXIT
fail() { log "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root: it installs packages and runs slurmd, which starts jobs as their users"
[ -r "$script" ] || fail "no batch script $script"

# Packages.
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null ||
	! command -v munged >/dev/null; then
	command -v apt-get >/dev/null || fail "no Slurm here and no apt-get to install slurm-wlm and munge"
	log "installing slurm-wlm and munge"
	apt-get update -qq
	apt-cache policy slurm-wlm munge | grep -E '^[a-z]|Candidate'
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
log "$(slurmctld -V), $(munged -V 2>&1 | head -n 1)"
for c in ip ss timeout; do command -v "$c" >/dev/null || fail "needs $c"; done

tmp=$(mktemp -d /tmp/trigrid-slurm.XXXXXX)
chmod 755 "$tmp" # munged wants every directory above its socket searchable
mkdir -p "$tmp"/{munge,log,jobs,dev}

if [ -z "$binary" ]; then
	export PATH=$PATH:/usr/local/go/bin
	log "building trigrid"
	(cd "$repo" && CGO_ENABLED=0 go build -o "$tmp/trigrid" ./cmd/trigrid)
	binary=$tmp/trigrid
fi
[ -x "$binary" ] || fail "no binary $binary"

# Free TCP and UDP ports on loopback, distinct from each other.
taken=" "
free_port() {
	local p
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 40000))
		case $taken in *" $p "*) continue ;; esac
		if [ -z "$(ss -Htanu "( sport = :$p )" 2>/dev/null)" ]; then
			taken="$taken$p "
			echo "$p"
			return
		fi
	done
	fail "no free port"
}
ctld_port=$(free_port)
slurmd_port=$(free_port)
grpc_port=$(free_port)
gossip_port=$(free_port)

# munge, on a socket and key of its own.
m=$tmp/munge
if [ ! -s "$m/munge.key" ]; then
	if command -v mungekey >/dev/null; then
		mungekey --create --keyfile="$m/munge.key"
	else
		dd if=/dev/urandom of="$m/munge.key" bs=1024 count=1 status=none
	fi
fi
chmod 600 "$m/munge.key"
munged --socket="$m/munge.socket" --key-file="$m/munge.key" --pid-file="$m/munged.pid" \
	--log-file="$tmp/log/munged.log" --seed-file="$m/munged.seed"
for _ in $(seq 50); do [ -s "$m/munged.pid" ] && break; sleep 0.1; done
[ -s "$m/munged.pid" ] || fail "munged did not start"
munged_pid=$(cat "$m/munged.pid")
munge --socket="$m/munge.socket" -n | unmunge --socket="$m/munge.socket" >/dev/null ||
	fail "munge cannot encode and decode a credential on $m/munge.socket"

# A one-node cluster: this host, its CPUs, 90% of its memory, and with
# start_cluster 2 two stand-in GPUs (character devices that are copies of
# /dev/null: the workers that get them count on the CPU, and task/none
# constrains no devices). Each start has its own state and job ids.
node=$(hostname -s)
topology=$(slurmd -C 2>/dev/null | sed -n '1s/.*\(CPUs=[0-9]* .*ThreadsPerCore=[0-9]*\).*/\1/p')
topology=${topology:-CPUs=$(nproc)}
mem=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 9 / 10 / 1024))
export SLURM_CONF=$tmp/slurm.conf
ctld_pid=
slurmd_pid=
first_job=1
start_cluster() {
	local gpus=$1 c=$tmp/cluster-$first_job gres="" i state
	mkdir -p "$c/state" "$c/spool"
	if [ "$gpus" -gt 0 ]; then
		gres="Gres=gpu:$gpus"
		for ((i = 0; i < gpus; i++)); do
			[ -e "$tmp/dev/gpu$i" ] || mknod "$tmp/dev/gpu$i" c 1 3 || touch "$tmp/dev/gpu$i"
		done
		printf 'AutoDetect=off\nNodeName=%s Name=gpu File=%s/dev/gpu[0-%d]\n' "$node" "$tmp" $((gpus - 1)) >"$tmp/gres.conf"
	else
		rm -f "$tmp/gres.conf"
	fi
	cat >"$SLURM_CONF" <<EOF
ClusterName=trigridtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$m/munge.socket
StateSaveLocation=$c/state
SlurmdSpoolDir=$c/spool
SlurmctldPidFile=$c/slurmctld.pid
SlurmdPidFile=$c/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
InactiveLimit=0
MailProg=/bin/true
KillWait=10
MinJobAge=60
FirstJobId=$first_job
GresTypes=gpu
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$node $topology RealMemory=$mem $gres State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
	log "starting slurmctld (port $ctld_port) and slurmd (port $slurmd_port), $gpus GPU(s), in $c"
	slurmctld -D -i -f "$SLURM_CONF" >>"$tmp/log/slurmctld.out" 2>&1 &
	ctld_pid=$!
	slurmd -D -f "$SLURM_CONF" -N "$node" >>"$tmp/log/slurmd.out" 2>&1 &
	slurmd_pid=$!
	for _ in $(seq 60); do
		state=$(timeout 10 sinfo -h -n "$node" -o %T 2>/dev/null || true)
		[ "$state" = idle ] && break
		sleep 1
	done
	[ "$state" = idle ] || { sinfo -N -l || true; fail "node $node not idle after 60 s (state: ${state:-none})"; }
	log "node $node idle ($topology, $mem MiB, $gpus GPU(s)), at $((SECONDS - started)) s"
	first_job=$((first_job + 100))
}
# stop_cluster cancels the jobs left, then stops slurmd and slurmctld.
stop_cluster() {
	local pid
	if [ -n "$ctld_pid" ] && kill -0 "$ctld_pid" 2>/dev/null; then
		# Jobs first: their steps outlive slurmd.
		timeout 20 squeue -h -o %i 2>/dev/null | xargs -r timeout 20 scancel 2>/dev/null || true
		for _ in $(seq 30); do
			[ -z "$(timeout 10 squeue -h -o %i 2>/dev/null || true)" ] && break
			sleep 1
		done
	fi
	for pid in $slurmd_pid $ctld_pid; do stop_pid "$pid"; done
	slurmd_pid=
	ctld_pid=
}
stop_pid() {
	kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.2; done
	kill -KILL "$1" 2>/dev/null || true
}

# submit NAME [VAR=VALUE...] [sbatch options] -- [script arguments] runs
# one job with sbatch --wait, from $tmp/jobs and with VAR=VALUE in its
# environment, and cancels it if it has not ended within the time bound.
submit() {
	local name=$1 id rc=0 state
	shift
	local vars=() opts=()
	while [[ $1 =~ ^[A-Z_]+= ]]; do vars+=("$1"); shift; done
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	log "job $name: ${vars[*]:+${vars[*]} }sbatch --wait ${opts[*]:+${opts[*]} }${script#"$repo"/} $*"
	id=$(cd "$tmp/jobs" && env "${vars[@]}" timeout -k 10 "$timeout_s" sbatch --wait --parsable --job-name="$name" \
		--output="$tmp/jobs/$name-%j.out" --error="$tmp/jobs/$name-%j.err" --time=$(((timeout_s + 59) / 60 + 1)) \
		"${opts[@]}" "$script" "$@") || rc=$?
	# sbatch --wait outlives a SIGTERM: timeout kills it 10 s later (137).
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		id=$(timeout 20 squeue -h --name="$name" -o '%i %T' 2>/dev/null || true)
		log "job $name still running after ${timeout_s} s (${id:-gone}): cancelling it"
		timeout 20 squeue -h --name="$name" -o %i 2>/dev/null | xargs -r timeout 20 scancel || true
		fail "job $name did not end within ${timeout_s} s"
	fi
	id=${id%%;*}
	state=$(timeout 20 scontrol show job "$id" -o 2>/dev/null | sed -n 's/.*JobState=\([^ ]*\).*ExitCode=\([^ ]*\).*/\1 \2/p')
	log "job $name ($id) ended: ${state:-unknown}, sbatch --wait status $rc"
	job_id=$id
	job_out=$tmp/jobs/$name-$id.out
	job_err=$tmp/jobs/$name-$id.err
	if [ "${expect_failure:-0}" = 1 ]; then
		if [ "$rc" -eq 0 ] || [ "${state%% *}" != FAILED ]; then
			fail "job $name: ${state:-no state}, want FAILED"
		fi
	elif [ "$rc" -ne 0 ] || [ "${state%% *}" != COMPLETED ]; then
		fail "job $name: ${state:-no state}"
	fi
}

# check_count TRIANGLES WORKERS: the last job's result file and stdout say
# TRIANGLES; each of the WORKERS joined under its name, and all drained.
check_count() {
	local want=$1 result=$tmp/jobs/trigrid-$job_id.json workers=$2
	[ -s "$result" ] || fail "no result file $result"
	grep -q "\"triangles\":${want}[,}]" "$result" || fail "result file $result: want $want triangles, have: $(cat "$result")"
	grep -q "\"triangles\":${want}[,}]" "$job_out" || fail "job's stdout $job_out: no \"triangles\":$want"
	local dir=$tmp/jobs/trigrid-$job_id name
	for name in $workers; do
		grep -q "\"msg\":\"worker joined\".*\"worker\":\"$name\"" "$dir/coordinator.log" ||
			fail "worker $name did not join (coordinator.log)"
	done
	local stopped
	stopped=$(grep -c '"msg":"worker stopped"' "$dir/workers.log" || true)
	[ "$stopped" -eq "$(echo "$workers" | wc -w)" ] || fail "$stopped worker(s) drained, want $(echo "$workers" | wc -w) (workers.log)"
	grep -q 'workers drained' "$job_err" || fail "$job_err: the workers' step did not end cleanly"
	grep -q 'coordinator stopped' "$job_err" || fail "$job_err: the coordinator's step did not end cleanly"
	log "$want triangles, workers $workers joined and drained"
}

export TRIGRID=$binary GRPC_PORT=$grpc_port GOSSIP_PORT=$gossip_port
start_cluster 0
ca=$repo/testdata/ca-GrQc.txt.gz

# The address the script finds by itself (a dry run: nothing listens).
submit dryrun DRY_RUN=1 -- "$ca"
addr=$(sed -n 's/.* at \([0-9.]*\) (\(.*\))$/\1/p' "$job_err" | head -n 1)
log "head address found: ${addr:-none} ($(sed -n 's/.* at [0-9.]* (\(.*\))$/\1/p' "$job_err" | head -n 1))"
[[ $addr =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "dry run: no head address in $job_err"
[ "$addr" != 127.0.1.1 ] || fail "dry run: the head address is 127.0.1.1"

# The counting jobs keep to loopback.
export TRIGRID_ADDR=127.0.0.1
submit cpu CPU_WORKERS_PER_NODE=2 -- "$ca" 4
check_count 48260 "$node-cpu0 $node-cpu1"

# A shard store (a directory) instead of a graph file.
"$TRIGRID" partition "$ca" -o "$tmp/jobs/ca.shards" -P 3 >"$tmp/log/partition.log" 2>&1 ||
	fail "trigrid partition: $(tail -n 5 "$tmp/log/partition.log")"
submit shards CPU_WORKERS_PER_NODE=2 -- "$tmp/jobs/ca.shards"
check_count 48260 "$node-cpu0 $node-cpu1"

# A coordinator that cannot start fails the job at once, saying why.
expect_failure=1 submit badcoord COORDINATOR_ARGS=--no-such-flag -- "$ca"
if ! grep -q "the coordinator's step ended before it answered" "$job_err" ||
	! grep -q 'unknown flag: --no-such-flag' "$job_err"; then
	fail "job badcoord: no clear message in $job_err"
fi
log "a coordinator that cannot start: the job failed, with its log tail"

fb=$repo/../shared/datasets/facebook_combined.txt
if [ -r "$fb" ]; then
	submit facebook CPU_WORKERS_PER_NODE=2 -- "$(realpath "$fb")" 4
	check_count 1612010 "$node-cpu0 $node-cpu1"
elif [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; then
	fail "no $fb (CI is set: the datasets are required)"
else
	log "no $fb: skipping it"
fi

# GPU nodes: one worker per GPU, then one per node.
stop_cluster
start_cluster 2
submit gpu WORKER_ARGS="--device cpu --cores 1" --gpus-per-node=2 -- "$ca" 4
check_count 48260 "$node-gpu0 $node-gpu1"

submit node WORKERS_PER=node WORKER_ARGS="--device cpu" --gpus-per-node=2 -- "$ca"
check_count 48260 "$node"
failed=0
