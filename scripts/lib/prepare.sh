# shellcheck shell=bash
# The prepare suite, run on a machine with Go (and git); sourced.
#
# Writes what a device call carries besides the working tree:
#   .dev/bin   trigrid and the test binaries gpu.test (kernels/gpu),
#              pipeline.test and cmd.test (cmd/trigrid), CGO_ENABLED=0,
#              stripped; BUILD.txt (revision, Go, date);
#   .dev/data  MANIFEST.tsv of --datasets and every file it lists;
#   .dev/ab    with --ab REV: REV's trigrid and kernels/cuda (cuda.tar.gz).
# Then compresses (gzip -9, largest first) until the whole is under
# --limit-mib (default: what the working tree leaves of the call's 64
# MiB, less 2), and prints the carry list and the command to run.

suite_prepare() {
	local dev=$ROOT/.dev bin data total limit f rc rev name file n=0 missing=0 tree
	bin=$dev/bin data=$dev/data
	# A call carries 64 MiB with the working tree: what the tree leaves,
	# less 2 MiB for the files written until the call.
	tree=$(cd "$ROOT" && git ls-files -co --exclude-standard -z 2>/dev/null | xargs -0 stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
	[ -n "$LIMIT_MIB" ] || LIMIT_MIB=$(((64 * 1048576 - tree) / 1048576 - 2))
	limit=$((LIMIT_MIB * 1024 * 1024))
	if [ "$DRY" != "" ]; then
		printf '+ %s\n' "rm -rf .dev/bin .dev/data" \
			"CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o .dev/bin/trigrid ./cmd/trigrid" \
			"CGO_ENABLED=0 go test -c -trimpath -ldflags='-s -w' -o .dev/bin/gpu.test ./kernels/gpu" \
			"CGO_ENABLED=0 go test -c -trimpath -ldflags='-s -w' -o .dev/bin/pipeline.test ./pipeline" \
			"CGO_ENABLED=0 go test -c -trimpath -ldflags='-s -w' -o .dev/bin/cmd.test ./cmd/trigrid" \
			"cp $DATASETS/MANIFEST.tsv and the files it lists to .dev/data" \
			"gzip -9 the largest files until .dev/bin + .dev/data${AB_REV:+ + .dev/ab} < $LIMIT_MIB MiB"
		[ -n "$AB_REV" ] && printf '+ %s\n' "git archive $AB_REV | build .dev/ab/trigrid, tar .dev/ab/cuda.tar.gz"
		return 0
	fi
	command -v go >/dev/null || die "prepare needs Go (it runs on the machine with Go, not on the GPU machine)"
	cd "$ROOT" || die "no $ROOT"
	rm -rf "$bin" "$data"
	mkdir -p "$bin" "$data" || die "cannot create $bin and $data"
	rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	git diff --quiet HEAD 2>/dev/null || rev="$rev with uncommitted changes"
	echo "built from $rev by $(go version | cut -d' ' -f3) at $(date -u '+%Y-%m-%d %H:%M') UTC" >"$bin/BUILD.txt"
	echo "building trigrid and the test binaries ($rev)"
	gobuild "$ROOT" "$bin/trigrid" build ./cmd/trigrid || return 1
	gobuild "$ROOT" "$bin/gpu.test" test ./kernels/gpu || return 1
	gobuild "$ROOT" "$bin/pipeline.test" test ./pipeline || return 1
	gobuild "$ROOT" "$bin/cmd.test" test ./cmd/trigrid || return 1
	if [ -f "$DATASETS/MANIFEST.tsv" ]; then
		cp "$DATASETS/MANIFEST.tsv" "$data/"
		while IFS=$'\t' read -r name file _; do
			case $name in '#'* | '') continue ;; esac
			if [ -f "$DATASETS/$file" ]; then
				cp "$DATASETS/$file" "$data/" && n=$((n + 1))
			else
				echo "prepare: $DATASETS/MANIFEST.tsv lists $file, which is not there"
				missing=$((missing + 1))
			fi
		done <"$DATASETS/MANIFEST.tsv"
		echo "datasets: $n copied from $DATASETS$([ $missing -gt 0 ] && echo ", $missing missing")"
	else
		echo "prepare: no $DATASETS/MANIFEST.tsv: the dataset checks will be skipped"
	fi
	CARRY=(.dev/bin .dev/data)
	if [ -n "$AB_REV" ]; then
		prepare_ab || return 1
		CARRY+=(.dev/ab)
	fi
	# Compress the largest files first until the carry fits.
	total=$(du -cb "${CARRY[@]/#/$ROOT/}" | tail -1 | cut -f1)
	while [ "$total" -gt "$limit" ]; do
		f=$(find "${CARRY[@]/#/$ROOT/}" -type f ! -name '*.gz' ! -name '*.tar.gz' ! -name BUILD.txt ! -name MANIFEST.tsv ! -name REV -printf '%s %p\n' |
			sort -rn | head -1 | cut -d' ' -f2-)
		[ -n "$f" ] || break
		gzip -9 "$f" || die "gzip $f failed"
		total=$(du -cb "${CARRY[@]/#/$ROOT/}" | tail -1 | cut -f1)
	done
	rc=0
	if [ "$total" -gt "$limit" ]; then
		echo "prepare: the carry is $((total / 1048576)) MiB, above --limit-mib $LIMIT_MIB even compressed"
		rc=1
	fi
	echo
	(cd "$ROOT" && du -sh "${CARRY[@]}" | sed 's/^/  /')
	echo "  total $((total / 1048576)) MiB ($total bytes; limit $LIMIT_MIB MiB: the working tree takes $((tree / 1048576)) MiB of the call's 64)"
	echo
	echo "carry: [$(printf '"%s", ' "${CARRY[@]}" | sed 's/, $//')]"
	echo "then, on the GPU machine, from the repository root:"
	if [ -n "$AB_REV" ]; then
		echo "  bash scripts/device.sh ab --suite bench"
	else
		echo "  bash scripts/device.sh final        # or check, bench, e2e, outofcore, partitions, pervertex, cluster"
	fi
	return $rc
}

# gobuild ROOT OUT build|test PKG: one static, stripped Go binary.
gobuild() {
	local log
	log=$(mktemp)
	if [ "$3" = build ]; then
		(cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$2" "$4") >"$log" 2>&1
	else
		(cd "$1" && CGO_ENABLED=0 go test -c -trimpath -ldflags='-s -w' -o "$2" "$4") >"$log" 2>&1
	fi || {
		echo "prepare: go $3 $4 failed:"
		sed 's/^/  /' "$log" | head -30
		rm -f "$log"
		return 1
	}
	rm -f "$log"
	echo "  $(basename "$2"): $(du -h "$2" | cut -f1)"
}

# prepare_ab: .dev/ab from AB_REV (git archive: committed files only).
prepare_ab() {
	local ab=$ROOT/.dev/ab tmp full
	full=$(git -C "$ROOT" rev-parse --verify "$AB_REV^{commit}" 2>/dev/null) || {
		echo "prepare: --ab $AB_REV is not a commit"
		return 1
	}
	rm -rf "$ab"
	mkdir -p "$ab"
	tmp=$(mktemp -d)
	git -C "$ROOT" archive "$full" | tar -xf - -C "$tmp" || {
		rm -rf "$tmp"
		echo "prepare: git archive $AB_REV failed"
		return 1
	}
	echo "building side b from $AB_REV ($full)"
	gobuild "$tmp" "$ab/trigrid" build ./cmd/trigrid || {
		rm -rf "$tmp"
		return 1
	}
	tar -czf "$ab/cuda.tar.gz" -C "$tmp/kernels" cuda
	echo "$AB_REV ($(git -C "$ROOT" log -1 --format='%h %s' "$full" | cut -c1-72))" >"$ab/REV"
	rm -rf "$tmp"
}
