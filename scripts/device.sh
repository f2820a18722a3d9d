#!/usr/bin/env bash
# scripts/device.sh SUITE [options]: the one entry point for the GPU
# machine's checks and timings (and, with prepare, for what they carry).
# `scripts/device.sh --help` lists the suites, `scripts/device.sh SUITE
# --help` their options. The suites live in scripts/lib/*.sh.
# shellcheck source-path=SCRIPTDIR
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELF=$ROOT/scripts/device.sh
# shellcheck source=lib/common.sh
. "$ROOT/scripts/lib/common.sh" || exit 2
# shellcheck source=lib/setup.sh
. "$ROOT/scripts/lib/setup.sh" || exit 2
# shellcheck source=lib/check.sh
. "$ROOT/scripts/lib/check.sh" || exit 2
# shellcheck source=lib/bench.sh
. "$ROOT/scripts/lib/bench.sh" || exit 2
# shellcheck source=lib/pervertex.sh
. "$ROOT/scripts/lib/pervertex.sh" || exit 2
# shellcheck source=lib/cluster.sh
. "$ROOT/scripts/lib/cluster.sh" || exit 2
# shellcheck source=lib/final.sh
. "$ROOT/scripts/lib/final.sh" || exit 2
# shellcheck source=lib/shards.sh
. "$ROOT/scripts/lib/shards.sh" || exit 2
# shellcheck source=lib/multigpu.sh
. "$ROOT/scripts/lib/multigpu.sh" || exit 2
# shellcheck source=lib/prepare.sh
. "$ROOT/scripts/lib/prepare.sh" || exit 2
# shellcheck source=lib/selftest.sh
. "$ROOT/scripts/lib/selftest.sh" || exit 2

SUITES="prepare check bench e2e partitions outofcore pervertex cluster shards multigpu final ab selftest"

usage() {
	cat <<'EOF'
usage: scripts/device.sh SUITE [options]        (scripts/device.sh SUITE --help: its options)

On the machine with Go (builds, copies, compresses; prints the carry list):
  prepare     .dev/bin (trigrid, gpu.test, pipeline.test, cmd.test; CGO_ENABLED=0) and
              .dev/data (../shared/datasets by MANIFEST.tsv), gzipped to fit the call
  selftest    bash -n and shellcheck of these scripts, then every suite with --dry-run
              and --dry-run=cpu (no GPU, no CUDA: the reference library); exits 1 on a fault

On the GPU machine (nvcc, python3, no Go), from the repository root; each builds
kernels/cuda/libtrigrid_cuda.so from scratch first:
  check       the Go device tests through the library, compute-sanitizer memcheck,
              every dataset through every device path and kernel against MANIFEST.tsv,
              tgdrv, make conformance (tools/twt)
  bench       trigrid bench kernels on rmat SCALES (22 23) and the datasets
  e2e         trigrid bench e2e --device gpu: rmat 22 binary, text and --per-vertex,
              rmat 23 whole, --partitions 4 and capped at CSR/4
  partitions  rmat SCALES whole and --partitions 4 (hash, range), rmat 20 -P 4 --verify,
              rmat 24 and 25 whole and -P 4
  outofcore   caps from CSR/64 to 2 x CSR (--partitions 0 and the whole graph) on rmat
              SCALES (23 24), each count exact; a cap below the least must say the least
  pervertex   tgdrv -local, the per-vertex device tests, memcheck and racecheck, bench
              kernels --modes total,vertex,edge, per-vertex and per-edge sums
  cluster     a coordinator and GPU worker(s) on this machine: rmat 20 from shards, from
              the file (P given and chosen), per vertex, against count --shards
  shards      rmat 23 from shards at the GPU's pace: count --shards against the whole
              graph's count (whole processes, the engine's breakdown, busy share), a
              coordinator and GPU worker's first job, decode and pinning benchmarks
  multigpu    on a machine of several GPUs: bench scale over 1, 2, 4, 8 GPUs and one worker
              with all (rmat 26, 27 shards), bench simulate against it, rmat 29 (30 on 8
              GPUs) streamed into shards and counted across the GPUs by two kernels, a GPU
              worker killed mid-job
  final       the release check in one call within --timeout (540 s): check, partitions,
              outofcore at CSR/4 and CSR/20, bench and e2e on rmat 22 and 23
  ab          one timing suite (--suite bench|e2e|outofcore|partitions|shards) for this tree and
              another build (prepare --ab REV), alternated --rounds times: a / b

Results: OUT (default /tmp/trigrid-device/SUITE) holds four files: results.txt (an ok, FAIL,
SKIP or info line each), results.json (every result: name, status, counts got and want,
seconds), commands.txt (every command run) and logs.tar.gz (build, test, sanitizer and
cluster logs, as named in results.txt). Any count other than the expected one is a
FAIL; the exit status is 0 when all passed, 1 on any FAIL, 2 on a usage or set-up error,
3 when nothing failed but a part was skipped for time (final and ab).

Device call:
  here:  scripts/device.sh prepare        (prints the carry list: .dev/bin .dev/data)
  there: bash scripts/device.sh final     (OUT set by the call; carry .dev/bin and .dev/data)

Environment: RUNS (timed runs, default 5), SCALES (rmat scales, as --scales), OUT (as --out),
CUDA_ARCH (GPU generations the library is built for; default sm_90, the H200's);
TMPDIR (work space; graphs go to /dev/shm when it has room).
EOF
}

common_help() {
	cat <<'EOF'
options of the GPU machine's suites:
  --out DIR          results (OUT; default /tmp/trigrid-device/SUITE)
  --runs N           timed runs a measurement (RUNS; default 5)
  --scales "S ..."   rmat scales, gen rmat --edge-factor 16 --seed 1 (SCALES)
  --timeout S        the run's deadline in seconds: no command runs past it (default 570;
                     final 540); parts that cannot start in time are SKIPs
  --skip PARTS       comma-separated parts to leave out (the suite's help names them)
  --bin DIR          prepared binaries, gzipped or not (default .dev/bin)
  --data DIR         prepared datasets with MANIFEST.tsv (default .dev/data)
  --graphs DIR       generated graphs, kept between calls (default /dev/shm/trigrid-device
                     when it has 24 GiB free, else $TMPDIR/trigrid-device/graphs)
  --work DIR         unpacked binaries, datasets, JSON (default $TMPDIR/trigrid-device)
  --lib PATH         count through this libtrigrid_cuda.so instead of building one
  --dry-run          print every command instead of running it (no GPU needed)
  --dry-run=cpu      run every trigrid command for real on tiny graphs through the
                     plain-C reference library (built with gcc), check test binaries'
                     -test.run patterns with -test.list and make targets with make -n;
                     print the rest (nvcc, compute-sanitizer)
  -h, --help         this help
EOF
}

suite_help() {
	case $1 in
	prepare)
		cat <<'EOF'
scripts/device.sh prepare [--datasets DIR] [--ab REV] [--limit-mib N] [--dry-run]
  Run on the machine with Go. Builds with CGO_ENABLED=0 (stripped, -trimpath):
    .dev/bin/trigrid, .dev/bin/gpu.test (kernels/gpu), .dev/bin/pipeline.test (pipeline),
    .dev/bin/cmd.test (cmd/trigrid), .dev/bin/BUILD.txt;
  copies MANIFEST.tsv of --datasets and every file it lists into .dev/data; gzips the
  largest files until the carry is under --limit-mib; prints the carry list.
  --datasets DIR   default ../shared/datasets
  --ab REV         also .dev/ab: REV's trigrid and kernels/cuda, side b of the ab suite
  --limit-mib N    default: the 64 MiB a device call carries, less the working tree, less 2
EOF
		;;
	check)
		cat <<'EOF'
scripts/device.sh check [--max-scale N] [common options]
  parts (for --skip): datasets, tests, memcheck, conformance
  datasets     every MANIFEST.tsv dataset: count --device gpu whole, --verify, -P 3 hash
               --verify, -P 2 range --verify; bench kernels --runs 1 (every kernel);
               tgdrv -p 3 (preprocessing, every kernel, a P = 3 partition)
  tests        kernels/gpu (every test; rmat up to --max-scale), pipeline (Device|Staged),
               cmd/trigrid (Device|Fallback) test binaries through the library
  memcheck     compute-sanitizer memcheck of counts (64-bit ids, CA-GrQc whole, -P 2
               --verify dense and sparse ids, -P 3 capped), of tgdrv and of the staging,
               pieces, ranges, streaming and device-split tests
  conformance  make -C kernels/cuda conformance (tools/twt random and check on the text
               datasets), and twt's CPU counts against MANIFEST.tsv
  --max-scale N   TRIGRID_MAX_SCALE of the kernels/gpu device tests (default 20)
EOF
		;;
	bench)
		cat <<'EOF'
scripts/device.sh bench [--modes M] [--kernels K] [--no-datasets] [common options]
  trigrid bench kernels --runs RUNS --json on rmat SCALES (default "22 23") and the
  datasets: median CUDA-event ms of every kernel; every count against the published one.
  --modes M       bench kernels --modes (total, vertex, edge; default total)
  --kernels K     bench kernels --kernels (default every kernel)
  --no-datasets   rmat only
  parts: bench
EOF
		;;
	e2e)
		cat <<'EOF'
scripts/device.sh e2e [--device gpu|cpu] [common options]
  trigrid bench e2e --runs RUNS --json (fresh processes, medians of every phase, whole
  process, CPU time, host peak) of SCALES "A B" (default "22 23"): rmat A binary, text and
  --per-vertex; rmat B whole, --partitions 4 and --partitions 0 capped at CSR/4 (GPU only).
  --device D     what bench e2e passes to count (default gpu; cpu times the host's path)
  parts: e2e
EOF
		;;
	partitions)
		cat <<'EOF'
scripts/device.sh partitions [--verify-scale S] [--big-scales "S ..."] [common options]
  rmat SCALES (default "22 23") whole and --partitions 4 (hash, range: the device split);
  rmat --verify-scale (default 20; "" none) -P 4 --verify, both schemes; --big-scales
  (default "24 25"; "" none) whole and -P 4 hash (graphs of scale 25 up are removed after).
  parts: partitions
EOF
		;;
	outofcore)
		cat <<'EOF'
scripts/device.sh outofcore [--divs "D ..."] [--paths "P ..."] [--with-datasets] [common options]
  every graph (rmat SCALES, default "23 24") under caps of CSR/D (CSR: 8 bytes a vertex +
  4 an edge), P chosen by the device's accounting; each count equals the published one; a
  cap below the least that fits must be an error stating it, and that least must count.
  --divs "D ..."    default "64 20 8 4 2 1 0.5"
  --paths "P ..."   blocks (--partitions 0), whole (count chooses ranges or blocks), ranges
                    (--row-ranges on), stream (--partitions 0 --row-stream on);
                    default "blocks whole"
  --with-datasets   the MANIFEST.tsv datasets too
  parts: outofcore
EOF
		;;
	pervertex)
		cat <<'EOF'
scripts/device.sh pervertex [--local-max-scale N] [--modes M] [--kernels K] [common options]
  parts: tests (tgdrv -local -p 3 on the text datasets, kernels/gpu DeviceLocal, cmd/trigrid
  per-vertex through the device), memcheck (memcheck -p 3 and racecheck of tgdrv -local on
  CA-GrQc), bench (bench kernels --modes total,vertex,edge --kernels auto,polak,wetric on
  soc-Epinions1 and rmat SCALES, default "20 22"), counts (--per-vertex, and --per-edge on the
  first scale, whole and -P 3: sums over 3 equal the count; bench e2e total, --per-vertex,
  --per-vertex --per-edge of the last scale)
  --local-max-scale N   TRIGRID_LOCAL_MAX_SCALE of the DeviceLocal tests (default 18)
EOF
		;;
	cluster)
		cat <<'EOF'
scripts/device.sh cluster [--workers N] [--port N] [common options]
  rmat S (the first of SCALES, default 20) partitioned -P 4; a coordinator on 127.0.0.1:PORT
  (gossip PORT+1, --data-dir the graphs' folder) and N workers --device gpu; submit --wait:
  from the shards, from the file with -P 4 and with -P 0 (P from the workers' device
  memory), from the shards --per-vertex (sum over 3); count --shards in one process too.
  --workers N   GPU workers (default 1; several share the one GPU)
  --port N      coordinator gRPC port (default 17000)
  parts: cluster
EOF
		;;
	shards)
		cat <<'EOF'
scripts/device.sh shards [--shard-p P] [--workers N] [--devices LIST] [--port N] [common options]
  rmat S (the first of SCALES, default 23) partitioned -P P (default 4, hash), then:
  counts   RUNS rounds of count of the binary file and count --shards alternated (fresh
           processes, whole-process wall time), their ratio, the count phase and its GPU
           busy share (the engine's breakdown: fetch, decode, stage, wait, upload, kernel);
           count --device cpu --shards once
  cluster  min(RUNS, 3) fresh clusters of a coordinator and N GPU workers (default 1;
           --devices passed to each): the first job from the shards, submit to result
  micro    the shards' decode on 1 and all cores (storage.test BenchmarkDecodeStore, once in
           fresh memory, twice in reused), pinning host memory (gpu.test BenchmarkRegister),
           when the binaries are there
  profile  one count --shards with --cpu-profile (OUT/shards.pprof) and debug logs
  Every count against the published one. parts: counts, cluster, micro, profile
EOF
		;;
	multigpu)
		cat <<'EOF'
scripts/device.sh multigpu [--gpus N] [--shard-p P] [--big-scales "S ..."] [--mem-limit SIZE]
                           [--port N] [common options]
  For the machines of several GPUs (nvidia-h200-x2, -x4, -x8); every part a coordinator
  and workers as separate processes on this machine. Each count against the published one
  (the big graphs without one: the two kernels against each other).
  scale     rmat SCALES (default "26 27") partitioned once (-P P, default 8, hash), then
            bench scale --shards --repeat RUNS over 1, 2, 4, 8 GPUs up to N (one worker a
            GPU) and one worker with every GPU: job time, speedup, efficiency, time IR and
            TEPS against the targets (2 GPUs 1.9x, 4 3.7x, 8 7.2x, IR 1.1); the reports
            (scale.json, CSV, plots) in logs.tar.gz
  simulate  bench simulate --validate on each report (15%), and its predictions for 1, 2,
            4 and 8 GPUs from the shards
  big       --big-scales (default rmat 29, and 30 on 8 GPUs) streamed from gen into
            partition -P P --mem-limit SIZE (default 64GiB), then a coordinator and N GPU
            workers count the shards with --kernel auto and --kernel trust; job seconds
  kill      the first scale's shards on N workers (2 at least): a clean job, then one with
            worker g1 killed (kill -9) a third of the clean time in: exact, requeued, the
            time lost
  --gpus N        GPUs to use (default: every GPU nvidia-smi lists)
  --mem-limit S   the partitioner's peak resident memory for the big graphs
  --port N        coordinator gRPC port (default 17000)
  parts: scale, simulate, big, kill (one call may not hold them all: --skip the rest)
EOF
		;;
	final)
		cat <<'EOF'
scripts/device.sh final [common options] [--max-scale N] [--divs] [--paths] [--verify-scale]
                        [--big-scales] [--modes] [--kernels]
  The release check in one call, within --timeout (default 540 s): the parts, in order,
  datasets (check), partitions (SCALES "22 23" -P 4 hash and range, rmat 18 -P 4 --verify),
  outofcore (--divs "4 20", --paths "blocks whole"), tests (check), bench, e2e, memcheck
  (check), conformance (check). A part is started only with its least time left; one left
  out is a SKIP and the exit status is then 3 (1 on any FAIL). Options as those suites'.
EOF
		;;
	ab)
		cat <<'EOF'
scripts/device.sh ab --suite bench|e2e|outofcore|partitions|shards [--rounds N] [--ab-dir DIR]
                     [that suite's options] [common options]
  The suite for side a (this tree: .dev/bin and kernels/cuda) and side b (--ab-dir, default
  .dev/ab, made by `prepare --ab REV`: REV's trigrid, its kernels/cuda built here),
  --rounds times (default 2; a then b, then b then a); every count checked on both sides;
  then each row's median metric (kernel ms, whole-process s, count s) on each side, a / b.
EOF
		;;
	selftest)
		cat <<'EOF'
scripts/device.sh selftest [--prepared] [--suites "S ..."] [--out DIR]
  Without a GPU: bash -n and shellcheck (when installed) of device.sh and lib/*.sh; every
  suite's --help; every suite with --dry-run (commands printed) and with --dry-run=cpu (its
  trigrid commands run on tiny graphs through the reference library, test patterns checked
  against the test binaries, make targets with make -n), none may FAIL; a wrong expected
  count must FAIL; an unknown option must be refused. Builds its own binaries (needs Go)
  unless --prepared (use .dev/bin and .dev/data).
  --suites "S ..."   default every suite
EOF
		;;
	*) return 1 ;;
	esac
}

# allowed SUITE OPTION: whether SUITE takes OPTION.
allowed() {
	local common=" --out --runs --scales --timeout --skip --bin --data --graphs --work --lib --dry-run "
	local s=$1 o=" $2 "
	case $s in
	prepare) [[ " --datasets --ab --limit-mib --dry-run " == *"$o"* ]] ;;
	selftest) [[ " --prepared --suites --out --keep " == *"$o"* ]] ;;
	check) [[ "$common --max-scale " == *"$o"* ]] ;;
	bench) [[ "$common --modes --kernels --no-datasets " == *"$o"* ]] ;;
	e2e) [[ "$common --device " == *"$o"* ]] ;;
	partitions) [[ "$common --verify-scale --big-scales " == *"$o"* ]] ;;
	outofcore) [[ "$common --divs --paths --with-datasets " == *"$o"* ]] ;;
	pervertex) [[ "$common --local-max-scale --modes --kernels " == *"$o"* ]] ;;
	cluster) [[ "$common --workers --port " == *"$o"* ]] ;;
	shards) [[ "$common --shard-p --workers --devices --port " == *"$o"* ]] ;;
	multigpu) [[ "$common --gpus --shard-p --big-scales --mem-limit --port " == *"$o"* ]] ;;
	final) [[ "$common --max-scale --divs --paths --verify-scale --big-scales --modes --kernels " == *"$o"* ]] ;;
	ab) [[ "$common --suite --rounds --ab-dir --max-scale --divs --paths --verify-scale --big-scales --modes --kernels --no-datasets --device --with-datasets --shard-p --workers --devices --port " == *"$o"* ]] ;;
	*) return 1 ;;
	esac
}

defaults() {
	local s=$1
	DRY=""
	RUNS=${RUNS:-}
	SCALES=${SCALES:-}
	TIMEOUT=""
	SKIP_PARTS=""
	BIN_DIR=$ROOT/.dev/bin
	DATA_DIR=$ROOT/.dev/data
	GRAPHS="" WORK="" USER_LIB=""
	MAX_SCALE=20 LOCAL_MAX_SCALE=18
	MODES="" KERNELS="" BENCH_DATASETS=1
	E2E_DEVICE=gpu
	VERIFY_SCALE=20 BIG_SCALES="24 25"
	DIVS="64 20 8 4 2 1 0.5" PATHS="blocks whole" SWEEP_DATASETS=0
	CL_WORKERS=1 PORT=17000
	SH_P=4 SH_DEVICES=""
	MG_GPUS="" MG_MEMLIMIT=64GiB MG_BIG_AUTO=0
	AB_SUITE="" ROUNDS=2 AB_DIR=$ROOT/.dev/ab
	DATASETS=$(cd "$ROOT/.." && pwd)/shared/datasets AB_REV="" LIMIT_MIB=""
	ST_PREPARED=0 ST_SUITES="" ST_KEEP=0
	case $s in
	final)
		DIVS="4 20" BIG_SCALES="" VERIFY_SCALE=18
		;;
	multigpu)
		BIG_SCALES="" MG_BIG_AUTO=1 SH_P=8
		;;
	esac
}

scales_default() {
	local s=$1
	[ "$s" = ab ] && s=$AB_SUITE
	case $s in
	outofcore) echo "23 24" ;;
	pervertex) echo "20 22" ;;
	cluster) echo "20" ;;
	shards) echo "23" ;;
	multigpu) echo "26 27" ;;
	*) echo "22 23" ;;
	esac
}

# parse SUITE ARGS...: the options into their variables.
parse() {
	local s=$1 o v eq
	shift
	while [ $# -gt 0 ]; do
		o=$1
		v="" eq=0
		case $o in
		-h | --help)
			suite_help "$s"
			[ "$s" = prepare ] || [ "$s" = selftest ] || {
				echo
				common_help
			}
			exit 0
			;;
		--dry-run)
			DRY=print
			shift
			continue
			;;
		--dry-run=*)
			DRY=${o#--dry-run=}
			[ "$DRY" = print ] || [ "$DRY" = cpu ] || die "--dry-run=$DRY: print or cpu"
			shift
			continue
			;;
		--*=*) v=${o#*=} o=${o%%=*} eq=1 ;;
		esac
		allowed "$s" "$o" || die "$s takes no option $o (scripts/device.sh $s --help)"
		case $o in
		--no-datasets | --with-datasets | --prepared | --keep) ;;
		*)
			if [ $eq = 0 ]; then
				[ $# -ge 2 ] || die "$o needs a value"
				v=$2
				shift
			fi
			;;
		esac
		shift
		case $o in
		--out) OUT=$v ;;
		--runs) RUNS=$v ;;
		--scales) SCALES=$v ;;
		--timeout) TIMEOUT=$v ;;
		--skip) SKIP_PARTS=$v ;;
		--bin) BIN_DIR=$(realpath -m "$v") ;;
		--data) DATA_DIR=$(realpath -m "$v") ;;
		--graphs) GRAPHS=$(realpath -m "$v") ;;
		--work) WORK=$(realpath -m "$v") ;;
		--lib) USER_LIB=$(realpath -m "$v") ;;
		--max-scale) MAX_SCALE=$v ;;
		--local-max-scale) LOCAL_MAX_SCALE=$v ;;
		--modes) MODES=$v ;;
		--kernels) KERNELS=$v ;;
		--no-datasets) BENCH_DATASETS=0 ;;
		--device) E2E_DEVICE=$v ;;
		--verify-scale) VERIFY_SCALE=$v ;;
		--big-scales)
			BIG_SCALES=$v
			MG_BIG_AUTO=0
			;;
		--gpus) MG_GPUS=$v ;;
		--mem-limit) MG_MEMLIMIT=$v ;;
		--divs) DIVS=$v ;;
		--paths) PATHS=$v ;;
		--with-datasets) SWEEP_DATASETS=1 ;;
		--workers) CL_WORKERS=$v ;;
		--port) PORT=$v ;;
		--shard-p) SH_P=$v ;;
		--devices) SH_DEVICES=$v ;;
		--suite) AB_SUITE=$v ;;
		--rounds) ROUNDS=$v ;;
		--ab-dir) AB_DIR=$(realpath -m "$v") ;;
		--datasets) DATASETS=$(realpath -m "$v") ;;
		--ab) AB_REV=$v ;;
		--limit-mib) LIMIT_MIB=$v ;;
		--prepared) ST_PREPARED=1 ;;
		--suites) ST_SUITES=$v ;;
		--keep) ST_KEEP=1 ;;
		esac
	done
	number() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 $2: not a whole number"; }
	[ -z "$RUNS" ] || number --runs "$RUNS"
	[ -z "$TIMEOUT" ] || number --timeout "$TIMEOUT"
	number --max-scale "$MAX_SCALE"
	number --local-max-scale "$LOCAL_MAX_SCALE"
	number --workers "$CL_WORKERS"
	number --port "$PORT"
	number --shard-p "$SH_P"
	[ -z "$MG_GPUS" ] || number --gpus "$MG_GPUS"
	[[ -z $SH_DEVICES || $SH_DEVICES =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--devices $SH_DEVICES: GPU indexes like 0,1"
	number --rounds "$ROUNDS"
	[ -z "$LIMIT_MIB" ] || number --limit-mib "$LIMIT_MIB"
	local x
	for x in $SCALES $BIG_SCALES $VERIFY_SCALE; do number "scale" "$x"; done
	for x in $DIVS; do
		if ! [[ $x =~ ^[0-9]+(\.[0-9]+)?$ ]] || [ "$x" = 0 ]; then die "--divs $x: a positive number"; fi
	done
	for x in $PATHS; do case $x in blocks | whole | ranges | stream) ;; *) die "--paths $x: blocks, whole, ranges or stream" ;; esac done
	case $E2E_DEVICE in gpu | cpu) ;; *) die "--device $E2E_DEVICE: gpu or cpu" ;; esac
	if [ "$s" = ab ]; then
		case $AB_SUITE in bench | e2e | outofcore | partitions | shards) ;; *) die "ab needs --suite bench, e2e, outofcore, partitions or shards" ;; esac
	fi
	local parts
	case $s in
	check) parts="datasets tests memcheck conformance" ;;
	pervertex) parts="tests memcheck bench counts" ;;
	shards) parts="counts cluster micro profile" ;;
	multigpu) parts="scale simulate big kill" ;;
	final) parts="datasets partitions outofcore tests bench e2e memcheck conformance" ;;
	ab) parts=$AB_SUITE ;;
	*) parts=$s ;;
	esac
	for x in ${SKIP_PARTS//,/ }; do
		[[ " $parts " == *" $x "* ]] || die "--skip $x: $s has the parts $parts"
	done
}

main() {
	local suite=${1:-}
	case $suite in
	"" | -h | --help | help)
		usage
		[ -n "$suite" ] && exit 0
		exit 2
		;;
	esac
	shift
	[[ " $SUITES " == *" $suite "* ]] || die "no suite $suite (one of: $SUITES; scripts/device.sh --help)"
	SUITE=$suite
	ARGS_TEXT="$*"
	defaults "$suite"
	parse "$suite" "$@"
	[ -n "$SCALES" ] || SCALES=$(scales_default "$suite")
	if [ -z "$RUNS" ]; then
		RUNS=5
		[ "$DRY" = cpu ] && RUNS=1
	fi
	[ -n "$TIMEOUT" ] || { [ "$suite" = final ] && TIMEOUT=540 || TIMEOUT=570; }
	[ "$DRY" = cpu ] && TIMEOUT=3600
	DEADLINE=$((START + TIMEOUT))
	case $suite in
	prepare)
		suite_prepare
		exit $?
		;;
	selftest)
		suite_selftest
		exit $?
		;;
	esac
	command -v python3 >/dev/null || die "python3 is needed (results, JSON)"
	cd "$ROOT" || die "no $ROOT"
	device_setup
	local tools=()
	case $suite in
	check | final)
		tools=(tgdrv)
		[[ ",$SKIP_PARTS," == *",conformance,"* ]] || tools+=(twt)
		;;
	pervertex) tools=(tgdrv) ;;
	esac
	[ "$suite" = ab ] && ab_setup
	build_lib "${tools[@]}"
	[ "$suite" = ab ] && wait_other_lib
	"suite_$suite"
	say "done at $(elapsed) s: $OKS ok, $FAILS failed, $SKIPS skipped"
	finalize
	[ -n "${AUTO_WORK:-}" ] && rm -rf "${AUTO_WORK:?}"
	if [ "$FAILS" -gt 0 ]; then
		exit 1
	elif [ "$SKIPS" -gt 0 ] && { [ "$suite" = final ] || [ "$suite" = ab ]; }; then
		exit 3
	fi
	exit 0
}

main "$@"
