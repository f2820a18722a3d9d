#!/usr/bin/env bash
# Runs every fuzz target of the module (each func FuzzXxx in a _test.go
# file) for FUZZTIME each (default 30s), one after another, and stops at the
# first failure; the failing input is left under the package's
# testdata/fuzz/ for `go test` to replay. PKGS limits the packages searched
# (default: the whole module).
#
#   bash scripts/fuzz.sh                     # or: make fuzz
#   FUZZTIME=5m PKGS=./storage bash scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-30s}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
n=0
# inputs DIR: the number of files in DIR (0 when there is none).
inputs() { find "$1" -type f 2>/dev/null | wc -l || true; }
# shellcheck disable=SC2086 # PKGS is a list of packages
for pkg in $(go list ${PKGS:-./...}); do
  dir="$(go list -f '{{.Dir}}' "$pkg")"
  targets="$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)"
  for target in $targets; do
    echo "fuzz: $pkg $target ($fuzztime)"
    for try in 1 2; do
      before="$(inputs "$dir/testdata/fuzz/$target")"
      set +e
      go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$log"
      rc=${PIPESTATUS[0]}
      set -e
      [ "$rc" -eq 0 ] && break
      after="$(inputs "$dir/testdata/fuzz/$target")"
      # Go's fuzzing coordinator can fail a run whose time ran out while a
      # worker was busy ("context deadline exceeded", Go issue 75804):
      # no input failed and none was written. Such a run is tried once more;
      # any other failure, or one that wrote a failing input, stops here.
      if [ "$try" -eq 1 ] && [ "$after" -eq "$before" ] && grep -q '^    context deadline exceeded$' "$log" &&
        ! grep -q 'Failing input written' "$log"; then
        echo "fuzz: $target: the run's time ran out in Go's fuzzing coordinator (Go issue 75804), no input failed; once more"
        continue
      fi
      exit "$rc"
    done
    n=$((n + 1))
  done
done
if [ "$n" -eq 0 ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi
echo "fuzz: $n targets passed"
