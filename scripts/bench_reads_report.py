#!/usr/bin/python3
"""Report of the read benchmarks of `make bench` (seed 002).

Usage: bench_reads_report.py BASE_RESULTS SERIES_RESULTS OUT_PREFIX
Reads the "bench reads" section of each guest's results: the base kernel
ran each workload once ("base"), the series kernel with the lockless reads
on and off in the same boot. Writes OUT_PREFIX.json, OUT_PREFIX.md and
OUT_PREFIX.png (reads/s against threads), prints the markdown.
"""

import json
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
    out = {}
    for r in rows:
        res = r["result"]
        key = (r["workload"], r["fs"], res.get("threads", 1))
        out.setdefault(key, {})[r["mode"]] = res
    return out


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def fmt(v, scale=1e6, digits=2):
    return f"{v / scale:.{digits}f}" if v is not None else "-"


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: bench_reads_report.py BASE_RESULTS SERIES_RESULTS OUT_PREFIX")
    bguest, brows = load(sys.argv[1])
    sguest, srows = load(sys.argv[2])
    data = index(brows + srows)
    out = Path(sys.argv[3])

    md = [f"Read benchmarks (seed 002), {sguest.get('vcpus', '?')} vCPUs, "
          f"{sguest.get('seconds', '?')} s per point. base: 7.3.4; off/on: the series "
          "with /sys/kernel/debug/filemap/lockless_reads 0/1, same boot.", ""]

    md += ["16-byte pread() at offset 0, each thread its own fd, M reads/s:", "",
           "| fs | threads | base | off | on | on/off | on/base |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for (w, fs, n), m in sorted(data.items()):
        if w != "small":
            continue
        v = {k: m.get(k, {}).get("ops_per_s") for k in MODES}
        md.append(f"| {fs} | {n} | {fmt(v['base'])} | {fmt(v['off'])} | {fmt(v['on'])} | "
                  f"{ratio(v['on'], v['off'])} | {ratio(v['on'], v['base'])} |")

    md += ["", "Writes to the hot folio per 16-byte read, one thread (reference count "
           "changes from the page_ref tracepoints on its PFN, plus 2 per folio_unlock() "
           "call):", "", "| fs | base | off | on |", "|---|---:|---:|---:|"]
    for (w, fs, n), m in sorted(data.items()):
        if w != "mechanism":
            continue
        cells = []
        for k in MODES:
            r = m.get(k)
            cells.append(f"{(r['ref_ops'] + r['lock_ops']) / r['reads']:.2f}"
                         if r and r["reads"] else "-")
        md.append(f"| {fs} | " + " | ".join(cells) + " |")

    md += ["", "Other workloads, MiB/s (refault: reads/s):", "",
           "| workload | fs | threads | base | off | on | on/off | on/base |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for (w, fs, n), m in sorted(data.items()):
        if w in ("small", "mechanism"):
            continue
        key = "ops_per_s" if w == "refault" else "mib_per_s"
        v = {k: m.get(k, {}).get(key) for k in MODES}
        md.append(f"| {w} | {fs} | {n} | {fmt(v['base'], 1, 0)} | {fmt(v['off'], 1, 0)} | "
                  f"{fmt(v['on'], 1, 0)} | {ratio(v['on'], v['off'])} | "
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
            pts = sorted((n, m[mode]["ops_per_s"] / 1e6) for (w, f, n), m in data.items()
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
