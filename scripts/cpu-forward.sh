#!/usr/bin/env bash
# Device call (CPU only): the host's clean and order phases (compaction,
# then the degree-order forward graph) of two trigrid binaries, in
# alternation, on one generated graph. The binaries come built:
#   .dev/hostfwd/trigrid-old  .dev/hostfwd/trigrid-new
# Usage: bash scripts/cpu-forward.sh [SCALE] [RUNS]
# Results in $OUT: runs.tsv (binary, run, clean, order, triangles),
# summary.txt (medians, machine), and one CPU profile per binary.
set -euo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
# Run from the repository root.
SCALE=${1:-23}
RUNS=${2:-5}
BIN=${BIN:-.dev/hostfwd}
G=/tmp/rmat$SCALE.bin
field() { sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p" <<<"$1"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "thp: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
} >"$OUT/summary.txt"
"$BIN/trigrid-new" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 -o "$G" >>"$OUT/summary.txt"
printf 'binary\trun\tclean\torder\ttriangles\n' >"$OUT/runs.tsv"
for i in $(seq "$RUNS"); do
  for b in old new; do
    j=$("$BIN/trigrid-$b" count --device cpu --json --progress none "$G")
    printf '%s\t%s\t%s\t%s\t%s\n' "$b" "$i" "$(field "$j" clean)" "$(field "$j" order)" "$(field "$j" triangles)" >>"$OUT/runs.tsv"
  done
done
for b in old new; do
  "$BIN/trigrid-$b" --cpu-profile "$OUT/$b.prof" count --device cpu --json --progress none "$G" >/dev/null
  c=$(awk -v b=$b '$1 == b {print $3}' "$OUT/runs.tsv" | median)
  o=$(awk -v b=$b '$1 == b {print $4}' "$OUT/runs.tsv" | median)
  t=$(awk -v b=$b '$1 == b {print $5}' "$OUT/runs.tsv" | sort -u | tr '\n' ' ')
  echo "$b: clean median $c s, order median $o s, triangles $t" >>"$OUT/summary.txt"
done
cat "$OUT/summary.txt" "$OUT/runs.tsv"
