#!/usr/bin/env python3
"""Compare trigrid's clustering figures with NetworkX's on the datasets.

For every graph of MANIFEST.tsv it runs `trigrid count --json --per-vertex`
and checks, against NetworkX (Debian's python3-networkx):

  - the average clustering coefficient and the transitivity, to 1e-9;
  - every vertex's triangles (exactly) and local clustering (to 1e-12).

NetworkX sees the graph as trigrid cleans it: undirected, self-loops
dropped, and ids that appear only in self-loops not vertices (trigrid's
average runs over the vertices with at least one other edge; see
docs/formats.md, "Per-vertex and per-edge counts").

Usage: scripts/clustering-networkx.py [--trigrid BIN] [--datasets DIR] [NAME...]
Exit status 0 when every graph agrees, 1 otherwise.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile

import networkx as nx

TOL = 1e-9


def read_edges(path):
    """Yield (u, v) from a SNAP-style edge list: comments, a header line,
    spaces, tabs or commas, CRLF, gzip by magic bytes."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    with opener(path, "rt", newline=None) as f:
        for line in f:
            s = line.strip().replace(",", " ")
            if not s or s[0] in "#%":
                continue
            fields = s.split()
            if not fields[0].isdigit() or len(fields) < 2:
                continue  # a header line
            yield int(fields[0]), int(fields[1])


def networkx_figures(path):
    g = nx.Graph()
    g.add_edges_from(read_edges(path))
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    g.remove_nodes_from([x for x, d in g.degree() if d == 0])
    return g, nx.average_clustering(g), nx.transitivity(g), nx.triangles(g), nx.clustering(g)


def trigrid_figures(binary, path, tmp):
    out = os.path.join(tmp, "vertices.tsv")
    res = subprocess.run([binary, "count", "--json", "--progress", "none", "--device", "cpu",
                          "--per-vertex", out, path], check=True, capture_output=True, text=True)
    rep = json.loads(res.stdout)
    rows = {}
    with open(out) as f:
        header = f.readline().split()
        assert header == ["id", "degree", "triangles", "clustering"], header
        for line in f:
            i, d, t, c = line.split("\t")
            rows[int(i)] = (int(d), int(t), float(c))
    return rep, rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trigrid", default=None, help="trigrid binary (default: build ./cmd/trigrid)")
    ap.add_argument("--datasets", default=os.path.join(here, "..", "..", "shared", "datasets"))
    ap.add_argument("names", nargs="*", help="dataset names (default: all)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        binary = args.trigrid
        if binary is None:
            binary = os.path.join(tmp, "trigrid")
            subprocess.run(["go", "build", "-o", binary, "./cmd/trigrid"], check=True,
                           cwd=os.path.join(here, ".."), env=dict(os.environ, CGO_ENABLED="0"))
        ok = True
        print(f"{'graph':<16} {'vertices':>9} {'avg clustering (trigrid)':>26} {'NetworkX':>20} "
              f"{'|diff|':>9} {'transitivity diff':>18} per-vertex")
        with open(os.path.join(args.datasets, "MANIFEST.tsv")) as f:
            rows = [l.rstrip("\n").split("\t") for l in f if l.strip() and not l.startswith("#")]
        for name, file, *_ in rows:
            if args.names and name not in args.names:
                continue
            path = os.path.join(args.datasets, file)
            g, avg, trans, tri, clus = networkx_figures(path)
            rep, per = trigrid_figures(binary, path, tmp)
            d_avg = abs(rep["average_clustering"] - avg)
            d_trans = abs(rep["transitivity"] - trans)
            bad = []
            if len(per) != g.number_of_nodes():
                bad.append(f"{len(per)} vertices, NetworkX {g.number_of_nodes()}")
            for x, (d, t, c) in per.items():
                if x not in g or d != g.degree(x) or t != tri[x] or abs(c - clus[x]) > 1e-12:
                    bad.append(f"vertex {x}: trigrid {(d, t, c)}, NetworkX "
                               f"{(g.degree(x), tri.get(x), clus.get(x)) if x in g else 'absent'}")
                    break
            good = d_avg <= TOL and d_trans <= TOL and not bad
            ok &= good
            print(f"{name:<16} {len(per):>9} {rep['average_clustering']:>26.17f} {avg:>20.17f} "
                  f"{d_avg:>9.1e} {d_trans:>18.1e} {'equal' if not bad else bad[0]}"
                  f"{'' if good else '  MISMATCH'}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
