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
n=0
for pkg in $(go list ${PKGS:-./...}); do
  dir="$(go list -f '{{.Dir}}' "$pkg")"
  targets="$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)"
  for target in $targets; do
    echo "fuzz: $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
    n=$((n + 1))
  done
done
if [ "$n" -eq 0 ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi
echo "fuzz: $n targets passed"
