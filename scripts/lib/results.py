#!/usr/bin/env python3
"""JSON helpers of scripts/device.sh (python3 only, no packages).

  results.py get FILE PATH...            one line per PATH (a.b.0.c), "" when absent
  results.py benchrows FILE RECORDS SUITE SIDE [GRAPH=WANT]...
                                         `trigrid bench kernels --json` rows: an ok or
                                         FAIL line each (ok: bench's own check passed and
                                         the count is GRAPH's WANT), a record each
  results.py testlist LISTFILE PATTERN   FAIL lines for each alternative of a -test.run
                                         PATTERN's first level that matches no test
  results.py finalize RECORDS OUT SUITE MODE MACHINE
                                         OUT/results.json from the records
  results.py abtable RECORDS             medians of each side's metric, side a / side b
"""
import json
import os
import re
import statistics
import sys


def load(path):
    with open(path) as f:
        text = f.read().strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        # Several JSON documents, one a line.
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def lookup(doc, path):
    for key in path.split("."):
        if isinstance(doc, list):
            try:
                doc = doc[int(key)]
            except (ValueError, IndexError):
                return None
        elif isinstance(doc, dict):
            if key not in doc:
                return None
            doc = doc[key]
        else:
            return None
    return doc


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def cmd_get(args):
    path, keys = args[0], args[1:]
    try:
        doc = load(path)
    except (OSError, ValueError):
        doc = None
    for k in keys:
        print(fmt(lookup(doc, k)) if doc is not None else "")


def record(out, **kv):
    out.write(json.dumps(kv, separators=(",", ":")) + "\n")


def cmd_benchrows(args):
    path, records, suite, side = args[:4]
    wants = dict(a.split("=", 1) for a in args[4:])
    try:
        rows = load(path) or []
    except (OSError, ValueError) as e:
        print(f"FAIL bench kernels: no JSON rows in {path}: {e}")
        return
    seen = set()
    with open(records, "a") as rec:
        for r in rows:
            g = r.get("graph", "?")
            seen.add(g)
            mode = r.get("mode") or "total"
            name = f"bench kernels {g} {r.get('kernel')} {mode}"
            want = wants.get(g)
            got = r.get("triangles")
            ok = bool(r.get("ok")) and want is not None and str(got) == str(want)
            why = ""
            if not r.get("ok"):
                why = f" (bench: {r.get('error') or 'count differs from the CPU count ' + str(r.get('want'))})"
            elif want is None:
                why = " (no expected count)"
            line = (f"{'ok  ' if ok else 'FAIL'} {name}: ran {r.get('ran')} {got} triangles"
                    + ("" if ok else f", want {want}{why}")
                    + f"; median {r.get('median_ms', 0):.3f} ms of {r.get('runs')} (min {r.get('min_ms', 0):.3f}, max {r.get('max_ms', 0):.3f}, wall {r.get('wall_ms', 0):.3f})")
            print(line)
            kv = dict(suite=suite, name=name, status="ok" if ok else "fail", got=got, want=int(want) if want and want.isdigit() else want,
                      metric=r.get("median_ms"), unit="ms", data=r)
            if side:
                kv["side"] = side
            record(rec, **kv)
    for g, w in wants.items():
        if g not in seen:
            print(f"FAIL bench kernels {g}: no row (want {w})")
            kv = dict(suite=suite, name=f"bench kernels {g}", status="fail", want=w, detail="no row")
            if side:
                kv["side"] = side
            with open(records, "a") as rec:
                record(rec, **kv)


def split_top(pattern):
    """The alternatives of a regexp's top level (| outside parentheses)."""
    out, depth, cur = [], 0, ""
    for ch in pattern:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "|" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def cmd_testlist(args):
    listfile, pattern = args
    with open(listfile) as f:
        names = [l.strip() for l in f if l.strip().startswith(("Test", "Benchmark", "Fuzz", "Example"))]
    first = pattern.split("/")[0]  # -test.run matches subtests level by level
    bad = 0
    for alt in split_top(first):
        try:
            rx = re.compile(alt)
        except re.error as e:
            print(f"FAIL -test.run {pattern!r}: {alt!r} is not a regexp: {e}")
            bad += 1
            continue
        if not any(rx.search(n) for n in names):
            print(f"FAIL -test.run {pattern!r}: {alt!r} matches no test of {len(names)}")
            bad += 1
    if not names:
        print("FAIL the test binary lists no tests")
        bad += 1
    if not bad:
        print(f"ok   -test.run {pattern!r}: every alternative matches a test of {len(names)}")


def parse_records(path):
    recs = []
    if not os.path.exists(path):
        return recs
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line, strict=False)
            except ValueError as e:
                r = {"name": f"records.jsonl line {n}", "status": "fail", "detail": f"unreadable record: {e}: {line[:200]}"}
            for k in [k for k in r if k.endswith("@")]:
                p = r.pop(k)
                try:
                    r[k[:-1]] = load(p)
                except (OSError, ValueError) as e:
                    r[k[:-1] + "_error"] = f"{p}: {e}"
            data = r.get("data")
            if isinstance(data, list) and len(data) == 1:
                r["data"] = data = data[0]
            # bench e2e rows: their medians, phase by phase, as seconds.
            if isinstance(data, dict) and "whole_process_s" in data and "seconds" not in r:
                r["seconds"] = {k[:-2]: v for k, v in data.items() if k.endswith("_s")}
            recs.append(r)
    return recs


def cmd_finalize(args):
    records, out, suite, mode, machine = args
    recs = parse_records(records)
    count = lambda s: sum(1 for r in recs if r.get("status") == s)
    fails, skips = count("fail"), count("skip")
    if mode:
        status = "dry-run" if fails == 0 else "fail"
    else:
        status = "fail" if fails else ("incomplete" if skips else "ok")
    mach = {}
    if machine and os.path.exists(machine):
        with open(machine) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    mach[k] = v
    doc = {
        "suite": suite,
        "status": status,
        "dry_run": mode or None,
        "ok": count("ok"),
        "failed": fails,
        "skipped": skips,
        "elapsed_s": max([r.get("at_s", 0) for r in recs] or [0]),
        "machine": mach,
        "results": recs,
    }
    tmp = os.path.join(out, ".results.json.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(out, "results.json"))
    print(f"{status}: {count('ok')} ok, {fails} failed, {skips} skipped")


def cmd_abtable(args):
    recs = parse_records(args[0])
    by = {}
    order = []
    for r in recs:
        if r.get("side") not in ("a", "b") or not isinstance(r.get("metric"), (int, float)):
            continue
        if r["name"] not in by:
            order.append(r["name"])
        by.setdefault(r["name"], {}).setdefault(r["side"], []).append(r["metric"])
        by[r["name"]]["unit"] = r.get("unit", "")
    if not order:
        print("no timings to compare")
        return
    w = max(len(n) for n in order)
    print(f"{'':{w}}  {'a (this tree)':>14}  {'b (other)':>14}  {'a/b':>6}  runs")
    for n in order:
        a, b = by[n].get("a", []), by[n].get("b", [])
        ma = statistics.median(a) if a else float("nan")
        mb = statistics.median(b) if b else float("nan")
        ratio = ma / mb if a and b and mb else float("nan")
        u = by[n]["unit"]
        print(f"{n:{w}}  {ma:>11.4f} {u:<2}  {mb:>11.4f} {u:<2}  {ratio:>6.3f}  {len(a)}/{len(b)}")


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmd, args = sys.argv[1], sys.argv[2:]
    fn = {"get": cmd_get, "benchrows": cmd_benchrows, "testlist": cmd_testlist,
          "finalize": cmd_finalize, "abtable": cmd_abtable}.get(cmd)
    if fn is None:
        print(f"results.py: unknown command {cmd}", file=sys.stderr)
        sys.exit(2)
    fn(args)


if __name__ == "__main__":
    main()
