#!/usr/bin/env bash
# scripts/gpu-e2e.sh (build, conformance of every device path against the
# datasets and the CPU, the device preprocessing tests with the input
# staged and not, compute-sanitizer on the staged upload, whole-process
# timings) with an earlier build timed beside the current one, in one call
# on a GPU machine. Prepare on a machine with Go:
#   DEV=.dev/stage scripts/gpu-stage.sh --prepare REV
# (REV: the git revision built as $DEV/trigrid-before). Knobs: those of
# gpu-e2e.sh; DEV defaults to .dev/stage.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export DEV=${DEV:-$ROOT/.dev/stage}

if [ "${1:-}" = "--prepare" ]; then
	set -e
	bash scripts/gpu-e2e.sh --prepare
	tmp=$(mktemp -d)
	git worktree add -q --detach "$tmp/src" "${2:?the revision to compare with}"
	(cd "$tmp/src" && CGO_ENABLED=0 go build -ldflags='-s -w' -o "$DEV/trigrid-before" ./cmd/trigrid)
	git worktree remove --force "$tmp/src"
	rm -rf "$tmp"
	du -sh "$DEV"
	exit 0
fi

[ -x "$DEV/trigrid-before" ] && export BEFORE=${BEFORE:-$DEV/trigrid-before}
exec bash scripts/gpu-e2e.sh
