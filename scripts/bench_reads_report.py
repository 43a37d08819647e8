#!/usr/bin/python3
"""Report of the read benchmarks of `make bench` (seed 002).

Usage: bench_reads_report.py BASE_RESULTS SERIES_RESULTS OUT_PREFIX
Reads the "bench reads" section of each guest's results: the base kernel
ran each workload ("base"), the series kernel with the lockless reads on
and off in the same boot, every point ROUNDS times (the two modes of a
point back to back, in alternating order). Each cell is the median over
the rounds; "on/off range" is the lowest and highest on/off ratio of
single rounds. Writes OUT_PREFIX.json,
OUT_PREFIX.md and OUT_PREFIX.png (reads/s against threads), prints the
markdown.
"""

import json
import statistics
import sys
from pathlib import Path

from bench_report import section

MODES = ("base", "off", "on")


def load(path):
    rows, guest = [], {}
    for r in section(path, "reads"):
        if r["bench"] == "guest":
            guest = r
        else:
            rows.append(r)
    if not rows:
        sys.exit(f"{path}: no read bench results (did the guest run them?)")
    return guest, rows


def index(rows):
    """{(workload, fs, threads): {mode: [result of each round]}}"""
    out = {}
    for r in rows:
        res = dict(r["result"], round=r.get("round", 1))
        key = (r["workload"], r["fs"], res.get("threads", 1))
        out.setdefault(key, {}).setdefault(r["mode"], []).append(res)
    return out


def median(results, key):
    vals = [r[key] for r in results or [] if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def spread(m, key):
    """The lowest and highest on/off ratio of single rounds."""
    off = {r["round"]: r[key] for r in m.get("off", [])}
    rs = [r[key] / off[r["round"]] for r in m.get("on", []) if off.get(r["round"])]
    return f"{min(rs):.2f}-{max(rs):.2f}" if rs else "-"


def fmt(v, scale=1e6, digits=2):
    return f"{v / scale:.{digits}f}" if v is not None else "-"


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: bench_reads_report.py BASE_RESULTS SERIES_RESULTS OUT_PREFIX")
    bguest, brows = load(sys.argv[1])
    sguest, srows = load(sys.argv[2])
    data = index(brows + srows)
    out = Path(sys.argv[3])

    rounds = sguest.get("rounds", 1)
    md = [f"Read benchmarks (seed 002), {sguest.get('vcpus', '?')} vCPUs, "
          f"{sguest.get('seconds', '?')} s per point, median of {rounds} rounds. "
          "base: 7.3.4; off/on: the series with /sys/kernel/debug/filemap/lockless_reads "
          "0/1, same boot; on/off range: the lowest and highest ratio of single rounds.", ""]

    md += ["16-byte pread() at offset 0, each thread its own fd, M reads/s:", "",
           "| fs | threads | base | off | on | on/off | on/off range | on/base |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (w, fs, n), m in sorted(data.items()):
        if w != "small":
            continue
        v = {k: median(m.get(k), "ops_per_s") for k in MODES}
        md.append(f"| {fs} | {n} | {fmt(v['base'])} | {fmt(v['off'])} | {fmt(v['on'])} | "
                  f"{ratio(v['on'], v['off'])} | {spread(m, 'ops_per_s')} | "
                  f"{ratio(v['on'], v['base'])} |")

    for w, what in (("mechanism", "16-byte read"), ("mechanism64k", "64K read of a large folio")):
        large = w == "mechanism64k"
        md += ["", f"Writes to the hot folio per {what}, one thread, all rounds (reference "
               "count changes from the page_ref tracepoints on its PFN, plus 2 per "
               "folio_unlock() call)" + ("; folio order: of the folio read, in every round"
                                         if large else "") + ":", "",
               "| fs | base | off | on |" + (" folio order |" if large else ""),
               "|---|---:|---:|---:|" + ("---:|" if large else "")]
        for (wl, fs, n), m in sorted(data.items()):
            if wl != w:
                continue
            cells = []
            if large:
                orders = sorted({r["folio_order"] for rs in data.get(("folio", fs, 1), {}).values()
                                 for r in rs})
                cells_tail = [f"{orders[0]}" if len(orders) == 1 else
                              f"{orders[0]}-{orders[-1]}" if orders else "-"]
            else:
                cells_tail = []
            for k in MODES:
                rs = m.get(k, [])
                reads = sum(r["reads"] for r in rs)
                writes = sum(r["ref_ops"] + r["lock_ops"] for r in rs)
                cells.append(f"{writes / reads:.2f}" if reads else "-")
            md.append(f"| {fs} | " + " | ".join(cells + cells_tail) + " |")

    md += ["", "Other workloads, MiB/s (refault: reads/s):", "",
           "| workload | fs | threads | base | off | on | on/off | on/off range | on/base |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (w, fs, n), m in sorted(data.items()):
        if w in ("small", "mechanism", "mechanism64k", "folio"):
            continue
        key = "ops_per_s" if w == "refault" else "mib_per_s"
        v = {k: median(m.get(k), key) for k in MODES}
        md.append(f"| {w} | {fs} | {n} | {fmt(v['base'], 1, 0)} | {fmt(v['off'], 1, 0)} | "
                  f"{fmt(v['on'], 1, 0)} | {ratio(v['on'], v['off'])} | {spread(m, key)} | "
                  f"{ratio(v['on'], v['base'])} |")

    text = "\n".join(md) + "\n"
    out.with_suffix(".md").write_text(text)
    out.with_suffix(".json").write_text(json.dumps(
        {"guest": sguest, "base_guest": bguest,
         "rows": [{"workload": w, "fs": fs, "threads": n, **m}
                  for (w, fs, n), m in sorted(data.items())]}, indent=1) + "\n")
    print(text)

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib (python3-matplotlib): no PNG", file=sys.stderr)
        return
    fss = sorted({fs for (w, fs, n) in data if w == "small"})
    fig, axes = plt.subplots(1, len(fss), figsize=(4 * len(fss), 3.5), squeeze=False)
    for ax, fs in zip(axes[0], fss):
        for mode, style in zip(MODES, ("k--", "b-o", "r-o")):
            pts = sorted((n, median(m[mode], "ops_per_s") / 1e6)
                         for (w, f, n), m in data.items()
                         if w == "small" and f == fs and mode in m)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=mode)
        ax.set_title(f"16-byte reads, {fs}")
        ax.set_xlabel("threads")
        ax.set_ylabel("M reads/s")
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out.with_suffix(".png"), dpi=100)


if __name__ == "__main__":
    main()
