#!/usr/bin/env python3
"""Checks `trigrid count --json` results against a datasets manifest.

Usage: manifest_check.py MANIFEST.tsv [RESULTS...]

MANIFEST.tsv is ../shared/datasets/MANIFEST.tsv: tab-separated, `#` lines
are comments, the file name in column 2 and the triangle count in column 6.
Each RESULTS file (stdin when none is given) holds one JSON object per line,
as `trigrid count --json` prints them; a line that is not JSON (a log line,
an error) is reported and counts as a failure. A result's file is matched by
its base name, with or without a trailing .gz, so gzipped copies of the
datasets match their manifest lines.

Prints one line per result (ok or FAIL, the kernel asked for and the one
that ran, the file, the count and the manifest's), then, per kernel, the
manifest's datasets it has no result for, and closes with
"N passed, M failed". Exits 1 when anything failed or is missing.
"""
import json
import os
import sys


def base(name):
    b = os.path.basename(name)
    return b[:-3] if b.endswith(".gz") else b


def read_manifest(path):
    want = {}
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            want[base(cols[1])] = int(cols[5])
    return want


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    want = read_manifest(argv[1])
    streams = [open(p) for p in argv[2:]] or [sys.stdin]
    passed = failed = 0
    seen = {}
    for s in streams:
        for line in s:
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                print(f"FAIL not a result: {line[:200]}")
                failed += 1
                continue
            name = base(r.get("file", "?"))
            asked = r.get("kernel_requested", r.get("kernel", "?"))
            seen.setdefault(asked, set()).add(name)
            got = r.get("triangles")
            w = want.get(name)
            ok = w is not None and got == w
            print(f"{'ok  ' if ok else 'FAIL'} {asked:8} ran {r.get('kernel', '?'):8} on {r.get('device', '?'):10} "
                  f"{name:24} {got} want {w}")
            if ok:
                passed += 1
            else:
                failed += 1
    for k in sorted(seen):
        for name in sorted(set(want) - seen[k]):
            print(f"FAIL {k:8} no result for {name}")
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
