#!/usr/bin/env bash
# Regenerates api/pb from api/trigrid.proto. Needs protoc (Debian:
# apt-get install protobuf-compiler) and Go; the two Go plugins are
# installed at the pinned versions below into $(go env GOPATH)/bin. The
# committed code was generated with Debian 12's protoc 3.21.12, whose version
# the generated header records.
#
#   bash scripts/gen-proto.sh          # regenerate
#   bash scripts/gen-proto.sh -check   # fail if the committed code differs
set -euo pipefail

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.5.1

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

command -v protoc >/dev/null || { echo "gen-proto: protoc not found (apt-get install protobuf-compiler)" >&2; exit 1; }

bin=$(go env GOPATH)/bin
want_go="protoc-gen-go $PROTOC_GEN_GO_VERSION"
if [ "$("$bin/protoc-gen-go" --version 2>/dev/null || true)" != "$want_go" ]; then
	go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
fi
want_grpc="protoc-gen-go-grpc ${PROTOC_GEN_GO_GRPC_VERSION#v}"
if [ "$("$bin/protoc-gen-go-grpc" --version 2>/dev/null || true)" != "$want_grpc" ]; then
	go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
fi

out=api/pb
if [ "${1:-}" = "-check" ]; then
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
PATH="$bin:$PATH" protoc -I api \
	--go_out="$out" --go_opt=paths=source_relative \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
	api/trigrid.proto

if [ "${1:-}" = "-check" ]; then
	for f in trigrid.pb.go trigrid_grpc.pb.go; do
		if ! cmp -s "$out/$f" "api/pb/$f"; then
			echo "gen-proto: api/pb/$f is out of date; run scripts/gen-proto.sh" >&2
			exit 1
		fi
	done
	echo "gen-proto: api/pb is up to date"
fi
