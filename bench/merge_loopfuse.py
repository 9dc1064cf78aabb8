#!/usr/bin/env python3
"""Merge several bench_loopfuse outputs at one thread count (interleaved runs on a noisy
machine): per row, the median over runs of each variant's median time; then the ratios,
each kernel's geomeans and how far the automatic choice is from the best variant (the
median of each run's own ratio).
Columns are found by the table's header, so older outputs (without the per-row column
or T's traffic) merge too.

    bench/merge_loopfuse.py run1.txt run2.txt ...
"""
import math
import re
import statistics
import sys

TIMES = {"fused": "fused", "per row": "fused per row", "separate": "separate", "perfect": "perfect nest",
         "traffic": "T traffic"}
rows = {}  # (kernel, input) -> {"fused": [...], ...}
order = []
header = ""
for path in sys.argv[1:]:
    cols = None
    for line in open(path):
        if line.startswith("loop fusion,"):
            header = line.strip()
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if cells[:1] == ["kernel"] and cells[1] != "input":
            cols = None  # a summary table
        elif cells[:2] == ["kernel", "input"]:
            # each time's column: the first whose title starts with its name there
            cols = {name: next((k for k, c in enumerate(cells) if c.startswith(title)), None)
                    for name, title in TIMES.items()}
            cols = {name: k for name, k in cols.items() if k is not None}
            cols["auto"] = cells.index("auto")
            continue
        if not cols or len(cells) < 3 or not cells[0].startswith("<"):
            continue
        key = (cells[0], cells[1])
        if key not in rows:
            rows[key] = {name: [] for name in list(TIMES) + ["auto", "off", "pick", "bad"]}
            order.append(key)
        r = rows[key]
        for name in TIMES:
            if name in cols and cells[cols[name]] != "-":
                r[name].append(float(cells[cols[name]]))
        m = re.match(r"(\w+) ([\d.]+), ([\d.]+)x the best", cells[cols["auto"]])
        r["pick"].append(m.group(1))
        r["auto"].append(float(m.group(2)))
        r["off"].append(float(m.group(3)))  # within its run: the same minutes for every variant
        r["bad"] += [c for c in cells[cols["auto"] + 1:] if c]

med = lambda v: statistics.median(v) if v else None
geo = lambda v: f"{math.exp(sum(map(math.log, v)) / len(v)):.2f}x" if v else "-"
fmt = lambda x: "-" if x is None else f"{x:.3f}"
print(f"{header.split(',')[1].strip()}, {len(sys.argv) - 1} runs merged (median per row over the runs' medians), ms\n")
print("| kernel | input | fused | fused per row | separate | perfect nest | separate / fused | ceiling | perfect / fused | auto |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
sep, ceil, perf, offs = {}, {}, {}, {}
for key in order:
    r = rows[key]
    f, row, s, p, t, a = (med(r[n]) for n in ("fused", "per row", "separate", "perfect", "traffic", "auto"))
    # How far the automatic choice is from the best: the median over the runs of each
    # run's own ratio (a slow run slows every variant of that run alike; the medians of
    # separate variants may come from different runs).
    off = statistics.median(r["off"])
    c = s / (s - t) if t is not None and s > t else None
    sep.setdefault(key[0], []).append(s / f)
    if c is not None:
        ceil.setdefault(key[0], []).append(c)
    if p is not None:
        perf.setdefault(key[0], []).append(p / f)
    offs.setdefault(key[0], []).append(off)
    print(f"| {key[0]} | {key[1]} | {fmt(f)} | {fmt(row)} | {fmt(s)} | {fmt(p)} | {s / f:.2f}x | "
          f"{'-' if c is None else f'{c:.2f}x'} | {'-' if p is None else f'{p / f:.2f}x'} | "
          f"{'/'.join(sorted(set(r['pick'])))} {a:.3f}, {off:.2f}x the best |" + (" " + " ".join(r["bad"]) if r["bad"] else ""))

print("\n| kernel | fused vs separate (geomean) | ceiling (geomean) | fused vs perfect nest (geomean) | "
      "auto within 10% of the best | auto over the best (geomean, worst) |")
print("|---|---:|---:|---:|---:|---:|")
for k in sorted(sep):
    print(f"| {k} | {geo(sep[k])} | {geo(ceil.get(k, []))} | {geo(perf.get(k, []))} | {sum(o <= 1.10 for o in offs[k])}/{len(offs[k])} | "
          f"{geo(offs[k])}, {max(offs[k]):.2f}x |")
allo = [o for v in offs.values() for o in v]
print(f"\nauto within 10% of the best: {sum(o <= 1.10 for o in allo)}/{len(allo)} inputs")
# "Within 10%" read as a target: the geomean over the inputs at most 1.10x the best, and
# every input at most 1.10 / 0.8 = 1.375x (at least 0.8 of the target speed).
print(f"auto over the best: geomean {geo(allo)} (target 1.10x at most), worst {max(allo):.2f}x (1.375x at most)")
