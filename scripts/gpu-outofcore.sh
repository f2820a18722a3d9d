#!/usr/bin/env bash
# Out-of-core counts on a GPU machine: every graph counted under device
# memory caps from 1/64 of its CSR (8 bytes per vertex + 4 per edge) to
# twice it, with P chosen by the device's accounting (--partitions 0); each
# count is compared with the uncapped count (itself compared with
# MANIFEST.tsv for the datasets). A cap below the least that fits must be
# an error stating that least, and the stated least must then count
# exactly.
#   scripts/gpu-outofcore.sh BIN LIB GRAPH...
# WHOLE=1 counts the whole graph (`count --device-mem-limit CAP`, no
# --partitions), which counts in blocks, P chosen as --partitions 0 does,
# when the cap cannot hold the graph whole.
# Prints one line per run (cap, P, count and total seconds, triangles, ok)
# and, per graph, the count phase's throughput against the uncapped run.
# Exits 1 when any run miscounts or fails above its stated least.
set -uo pipefail
BIN=$1 LIB=$2
shift 2
DIVS=${DIVS:-"64 20 8 4 2 1 0.5"}
MANIFEST=${MANIFEST:-}
bad=0
field() { python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$1"; }
for g in "$@"; do
	base=$("$BIN" count --device gpu --cuda-lib "$LIB" --json --progress none --log-level warn "$g") || { echo "$g: uncapped run failed"; bad=1; continue; }
	tri=$(echo "$base" | field 'r["triangles"]')
	csr=$(echo "$base" | field '8*(r["vertices"]+1)+4*r["edges"]')
	bcount=$(echo "$base" | field 'r["seconds"]["count"]')
	btotal=$(echo "$base" | field 'r["seconds"]["total"]')
	name=$(basename "$g")
	if [ -n "$MANIFEST" ]; then
		w=$(awk -v f="$name" -F'\t' '$2 == f { print $6 }' "$MANIFEST")
		if [ -n "$w" ] && [ "$w" != "$tri" ]; then echo "$name: uncapped $tri, MANIFEST $w: WRONG"; bad=1; fi
	fi
	echo "$name: CSR $csr bytes, $tri triangles; uncapped count ${bcount}s total ${btotal}s"
	for d in $DIVS; do
		cap=$(python3 -c "print(int($csr / $d))")
		for round in 1 2 3; do
			parts="--partitions 0"
			[ -n "${WHOLE:-}" ] && parts=""
			out=$(timeout 120 "$BIN" count --device gpu --cuda-lib "$LIB" --json --progress none --log-level error \
				$parts --device-mem-limit "$cap" "$g" 2>&1)
			rc=$?
			if [ $rc -eq 0 ]; then
				got=$(echo "$out" | field 'r["triangles"]')
				line=$(echo "$out" | field '"P=%d count %.3fs total %.3fs" % (r.get("partition", {}).get("p", 1), r["seconds"]["count"], r["seconds"]["total"])')
				c=$(echo "$out" | field 'r["seconds"]["count"]')
				ok=ok
				[ "$got" = "$tri" ] || { ok=WRONG; bad=1; }
				printf '  cap CSR/%-4s %12d bytes  %s  %s triangles  count throughput %.2f of uncapped  %s\n' "$d" "$cap" "$line" "$got" \
					"$(python3 -c "print($bcount / $c if $c > 0 else 0)")" "$ok"
				break
			fi
			least=$(echo "$out" | grep -oE '(the least that fits is (about )?|needs at least )[0-9]+' | grep -oE '[0-9]+$' | head -1)
			if [ -z "$least" ] || [ "$least" -le "$cap" ]; then
				echo "  cap CSR/$d $cap bytes: FAILED: $(echo "$out" | tail -1)"
				bad=1
				break
			fi
			echo "  cap CSR/$d $cap bytes: below the stated least $least"
			cap=$least
		done
	done
done
exit $bad
