#!/usr/bin/env python3
"""`tessel graph` against NetworkX (and a NumPy PageRank) on real and generated graphs.

    graph_oracle.py TESSEL_TOOL DATA_DIR

Exit 0 when every check passes, 1 on a mismatch, 77 (ctest's skip) when NetworkX,
NumPy or SciPy is missing. Graphs from DATA_DIR/matrices are skipped with a message
when the folder is absent; the generated graphs always run.
"""
import math
import os
import random
import subprocess
import sys
import tempfile

try:
    import networkx as nx
    import numpy as np
    import scipy.io
except ImportError as e:
    print(f"skipped: {e} (NetworkX, NumPy and SciPy are needed)")
    sys.exit(77)

TOOL, DATA = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, expect=0):
    p = subprocess.run([TOOL, "graph", *args], capture_output=True, text=True)
    if p.returncode != expect:
        failures.append(f"tessel graph {' '.join(args)}: exit {p.returncode}, expected {expect}: {p.stderr.strip()}")
        print("FAIL:", failures[-1])
    return p


def read_tns(path):
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            v, x = line.split()
            out[int(v) - 1] = float(x)
    return out


def load(path):
    """The directed graph as tessel reads it: duplicate edges keep their smallest weight."""
    m = scipy.io.mmread(path).tocoo()
    g = nx.DiGraph()
    g.add_nodes_from(range(m.shape[0]))
    for i, j, w in zip(m.row.tolist(), m.col.tolist(), m.data.tolist()):
        if g.has_edge(i, j):
            g[i][j]["weight"] = min(g[i][j]["weight"], w)
        else:
            g.add_edge(i, j, weight=float(w))
    return g


def undirected(g):
    u = nx.Graph()
    u.add_nodes_from(g.nodes)
    u.add_edges_from((i, j) for i, j in g.edges if i != j)
    return u


def gap_pagerank(g, d=0.85, tol=1e-9):
    """Power iteration, GAP's definition with dangling vertices' rank spread evenly."""
    n = g.number_of_nodes()
    a = nx.to_scipy_sparse_array(g, nodelist=range(n), weight=None, format="csr")
    a.data[:] = 1.0
    out = np.asarray(a.sum(axis=1)).ravel()
    r = np.full(n, 1.0 / n)
    at = a.T.tocsr()
    for _ in range(1000):
        x = np.where(out > 0, r / np.where(out > 0, out, 1), 0.0)
        nxt = (1 - d) / n + d * (at @ x + r[out == 0].sum() / n)
        done = np.abs(nxt - r).sum() < tol
        r = nxt
        if done:
            break
    return r


def check_graph(name, path, sources, tmp, weighted_sssp=True):
    print(f"{name}: checking bfs, bfs-parents, sssp, pagerank, cc, tc, bc")
    g = load(path)
    n = g.number_of_nodes()
    for threads in ("1", "2"):
        for s in sources:
            out = os.path.join(tmp, "out.tns")
            run("bfs", path, "--source", str(s + 1), "-o", out, "--threads", threads)
            levels = {v: int(x) for v, x in read_tns(out).items()}
            expect = nx.single_source_shortest_path_length(g, s)
            check(levels == expect, f"{name} bfs from {s + 1} ({threads} threads)")
            run("bfs-parents", path, "--source", str(s + 1), "-o", out, "--threads", threads)
            parents = {v: int(x) - 1 for v, x in read_tns(out).items()}
            check(set(parents) == set(expect), f"{name} bfs-parents reaches the same vertices")
            bad = [v for v, p in parents.items()
                   if not (v == s and p == s) and not (g.has_edge(p, v) and expect.get(p) == expect[v] - 1)]
            check(not bad, f"{name} bfs-parents from {s + 1}: invalid parents of {bad[:5]}")
            if weighted_sssp:
                run("sssp", path, "--source", str(s + 1), "-o", out, "--threads", threads)
                dist = read_tns(out)
                ref = nx.single_source_bellman_ford_path_length(g, s)
                check(set(dist) == set(ref) and all(abs(dist[v] - ref[v]) <= 1e-9 * max(1, abs(ref[v])) for v in ref),
                      f"{name} sssp from {s + 1} ({threads} threads)")
        out = os.path.join(tmp, "pr.tns")
        run("pagerank", path, "-o", out, "--threads", threads)
        pr = read_tns(out)
        mine = gap_pagerank(g)
        check(len(pr) == n and max(abs(pr[v] - mine[v]) for v in range(n)) < 1e-6,
              f"{name} pagerank vs NumPy power iteration ({threads} threads)")
        ref = nx.pagerank(g, alpha=0.85, weight=None, tol=1e-12, max_iter=1000)
        check(max(abs(pr[v] - ref[v]) for v in range(n)) < 1e-6, f"{name} pagerank vs NetworkX ({threads} threads)")
        u = undirected(g)
        run("cc", path, "-o", out, "--threads", threads)
        labels = {v: int(x) - 1 for v, x in read_tns(out).items()}
        expect = {}
        for comp in nx.connected_components(u):
            m = min(comp)
            for v in comp:
                expect[v] = m
        check(labels == expect, f"{name} cc ({threads} threads)")
        p = run("tc", path, "--threads", threads)
        tri = sum(nx.triangles(u).values()) // 3
        check(p.stdout.strip() == str(tri), f"{name} tc: {p.stdout.strip()} vs NetworkX {tri} ({threads} threads)")
        # Betweenness from a batch of sources (hops; unnormalized; the DiGraph, so not halved).
        args = ["bc", path, "-o", out, "--threads", threads]
        for s in sources:
            args += ["--source", str(s + 1)]
        run(*args)
        bc = read_tns(out)
        ref = nx.betweenness_centrality_subset(g, sources, list(g.nodes), normalized=False, weight=None)
        check(len(bc) == n and all(abs(bc[v] - ref[v]) <= 1e-9 * max(1, abs(ref[v])) for v in range(n)),
              f"{name} bc from {[s + 1 for s in sources]} vs NetworkX ({threads} threads)")
        if n <= 600:  # exact: every vertex a source
            run("bc", path, "-o", out, "--threads", threads)
            bc = read_tns(out)
            ref = nx.betweenness_centrality(g, normalized=False, weight=None)
            check(all(abs(bc[v] - ref[v]) <= 1e-9 * max(1, abs(ref[v])) for v in range(n)),
                  f"{name} exact bc vs NetworkX ({threads} threads)")


def write_mtx(path, n, edges, symmetric=False):
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate real {'symmetric' if symmetric else 'general'}\n")
        f.write(f"{n} {n} {len(edges)}\n")
        for i, j, w in edges:
            f.write(f"{i + 1} {j + 1} {w!r}\n")


def generated(tmp):
    rng = random.Random(30)
    n = 300
    # Negative weights without negative cycles: w = c + p(i) - p(j) with c > 0.
    p = [rng.uniform(0, 5) for _ in range(n)]
    edges = []
    for _ in range(1500):
        i, j = rng.randrange(n), rng.randrange(n)
        edges.append((i, j, round(rng.uniform(0.1, 3) + p[i] - p[j], 6)))
    path = os.path.join(tmp, "weighted.mtx")
    write_mtx(path, n, edges)
    check(any(w < 0 for _, _, w in edges), "the generated graph has negative weights")
    check_graph("generated weighted digraph", path, [0, 17], tmp)
    # R-MAT from the tool's generator (skewed degrees, duplicates, self-loops).
    rmat = os.path.join(tmp, "rmat.mtx")
    subprocess.run([TOOL, "generate", "rmat:9,8", "-o", rmat], check=True, capture_output=True)
    check_graph("R-MAT scale 9", rmat, [0, 5], tmp)


def bad_input(tmp):
    print("bad input: exit 2 and no output file")
    out = os.path.join(tmp, "never.tns")
    cyc = os.path.join(tmp, "cycle.mtx")
    write_mtx(cyc, 4, [(0, 1, 1.0), (1, 2, -2.0), (2, 1, 1.0), (2, 3, 1.0)])
    p = run("sssp", cyc, "--source", "1", "-o", out, expect=2)
    check("negative" in p.stderr and not os.path.exists(out), "sssp negative cycle: message, no file")
    p = run("bfs", cyc, "--source", "5", "-o", out, expect=2)
    check("out of range" in p.stderr and not os.path.exists(out), "bfs source out of range")
    p = run("bc", cyc, "--source", "1", "--source", "0", "-o", out, expect=2)
    check("out of range" in p.stderr and not os.path.exists(out), "bc source out of range")
    p = run("sssp", cyc, "--source", "1", "--source", "2", "-o", out, expect=2)
    check("only bc" in p.stderr and not os.path.exists(out), "several sources are for bc only")
    run("bogus", cyc, "-o", out, expect=2)
    run("bfs", os.path.join(tmp, "missing.mtx"), "-o", out, expect=2)
    rect = os.path.join(tmp, "rect.mtx")
    with open(rect, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n3 4 1\n1 2 1.0\n")
    p = run("cc", rect, "-o", out, expect=2)
    check("square" in p.stderr and not os.path.exists(out), "non-square matrix refused")


with tempfile.TemporaryDirectory() as tmp:
    generated(tmp)
    bad_input(tmp)
    mats = os.path.join(DATA, "matrices")
    if not os.path.isdir(mats):
        print(f"{mats} not found: real graphs skipped")
    else:
        for name, sources in (("karate", [0, 33]), ("ca-GrQc", [0, 1000])):
            path = os.path.join(mats, name + ".mtx")
            if os.path.exists(path):
                check_graph(name, path, sources, tmp)
            else:
                print(f"{path} not found: skipped")

print(f"{len(failures)} failure(s)" if failures else "all graph checks passed")
sys.exit(1 if failures else 0)
