#!/usr/bin/env bash
# Static checks that CI runs beside go vet and gofmt:
#   - staticcheck (honnef.co/go/tools) at a pinned version, every check on;
#   - deadcode (golang.org/x/tools) at a pinned version: no function of a
#     non-test package is unreachable from the binary, its tests and its
#     examples, and none outside the test-support packages (internal/test*)
#     and scripts/deadcode-testonly.txt is reached only from tests;
#   - the generated protobuf code is what scripts/gen-proto.sh makes.
# The tools are installed into $(go env GOPATH)/bin when missing or at
# another version.
#
#   bash scripts/lint.sh
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION=v0.8.2
DEADCODE_VERSION=v0.52.0   # golang.org/x/tools

bin=$(go env GOPATH)/bin
export PATH="$bin:$PATH"

if [ "$(staticcheck -version 2>/dev/null | awk '{print $3}' | tr -d '()')" != "${STATICCHECK_VERSION#v}" ]; then
	go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi
# deadcode has no version flag: the installed binary's module version is
# read from its build info.
if [ "$(go version -m "$bin/deadcode" 2>/dev/null | awk '$1 == "mod" {print $3}')" != "$DEADCODE_VERSION" ]; then
	go install "golang.org/x/tools/cmd/deadcode@$DEADCODE_VERSION"
fi

status=0
echo "lint: staticcheck $STATICCHECK_VERSION"
staticcheck ./... || status=1

echo "lint: deadcode $DEADCODE_VERSION"
# allowed FILE NAME: whether scripts/deadcode-testonly.txt lists NAME of
# FILE (an entry TYPE.* lists every method of TYPE).
allowed=$(sed -n 's/^\([^#][^:]*\): \([A-Za-z0-9_.*]*\).*/\1 \2/p' scripts/deadcode-testonly.txt)
is_allowed() {
	local file=$1 name=$2 f n
	while read -r f n; do
		[ "$f" = "$file" ] || continue
		case $n in
		*.\*) [ "${name#"${n%\*}"}" != "$name" ] && return 0 ;;
		*) [ "$n" = "$name" ] && return 0 ;;
		esac
	done <<<"$allowed"
	return 1
}
filter() {
	while read -r pos _ _ name; do
		[ -n "$pos" ] || continue
		is_allowed "${pos%%:*}" "$name" || echo "$pos unreachable func: $name"
	done
}
unreachable=$(deadcode -test ./... 2>&1 | filter)
if [ -n "$unreachable" ]; then
	echo "lint: unreachable even from tests:"; echo "$unreachable"; status=1
fi
# Test-support packages and the functions scripts/deadcode-testonly.txt
# names (with its reasons) are left out.
testonly=$(deadcode ./... 2>&1 | grep -v '^internal/test' | filter)
if [ -n "$testonly" ]; then
	echo "lint: reached only from tests (move into a _test.go file or delete):"; echo "$testonly"; status=1
fi

echo "lint: generated protobuf code"
if command -v protoc >/dev/null; then
	bash scripts/gen-proto.sh -check || status=1
else
	echo "lint: protoc not found (apt-get install protobuf-compiler)" >&2; status=1
fi
exit $status
