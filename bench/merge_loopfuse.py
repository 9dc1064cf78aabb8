#!/usr/bin/env python3
"""Merge several bench_loopfuse outputs at one thread count (interleaved runs on a noisy
machine): per row, the median over runs of each variant's median time; then the ratios,
each kernel's geomeans and how far the automatic choice is from the best of the three.

    bench/merge_loopfuse.py run1.txt run2.txt ...
"""
import math
import re
import statistics
import sys

rows = {}  # (kernel, input) -> {"fused": [...], ...}
order = []
header = ""
for path in sys.argv[1:]:
    for line in open(path):
        if line.startswith("loop fusion,"):
            header = line.strip()
        m = re.match(r"\| (<[^>]+>) \| ([^|]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+|-) \| [^|]+ \| [^|]+ \| "
                     r"(\w+) ([\d.]+), [\d.]+x the best \|(.*)", line)
        if not m:
            continue
        key = (m.group(1), m.group(2).strip())
        if key not in rows:
            rows[key] = {"fused": [], "separate": [], "perfect": [], "auto": [], "pick": [], "bad": []}
            order.append(key)
        r = rows[key]
        r["fused"].append(float(m.group(3)))
        r["separate"].append(float(m.group(4)))
        if m.group(5) != "-":
            r["perfect"].append(float(m.group(5)))
        r["pick"].append(m.group(6))
        r["auto"].append(float(m.group(7)))
        if m.group(8).strip():
            r["bad"].append(m.group(8).strip())

print(f"{header.split(',')[1].strip()}, {len(sys.argv) - 1} runs merged (median per row over the runs' medians), ms\n")
print("| kernel | input | fused | separate | perfect nest | separate / fused | perfect / fused | auto |")
print("|---|---|---:|---:|---:|---:|---:|---|")
sep, perf, within = {}, {}, {}
for key in order:
    r = rows[key]
    f, s = statistics.median(r["fused"]), statistics.median(r["separate"])
    p = statistics.median(r["perfect"]) if r["perfect"] else None
    a = statistics.median(r["auto"])
    best = min(x for x in (f, s, p) if x is not None)
    picks = sorted(set(r["pick"]))
    sep.setdefault(key[0], []).append(s / f)
    if p is not None:
        perf.setdefault(key[0], []).append(p / f)
    within.setdefault(key[0], []).append(a / best <= 1.10)
    print(f"| {key[0]} | {key[1]} | {f:.3f} | {s:.3f} | {p:.3f} | {s / f:.2f}x | {p / f:.2f}x | "
          if p is not None else f"| {key[0]} | {key[1]} | {f:.3f} | {s:.3f} | - | {s / f:.2f}x | - | ", end="")
    print(f"{'/'.join(picks)} {a:.3f}, {a / best:.2f}x the best |" + (" " + " ".join(r["bad"]) if r["bad"] else ""))

geo = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
print("\n| kernel | fused vs separate (geomean) | fused vs perfect nest (geomean) | auto within 10% of the best |")
print("|---|---:|---:|---:|")
for k in sorted(sep):
    print(f"| {k} | {geo(sep[k]):.2f}x | {geo(perf[k]):.1f}x | {sum(within[k])}/{len(within[k])} |")
allw = [w for v in within.values() for w in v]
print(f"\nauto within 10% of the best of the three: {sum(allw)}/{len(allw)} inputs")
