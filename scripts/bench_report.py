#!/usr/bin/env python3
"""Side-by-side report of `make bench`: base kernel against the series.

Usage: bench_report.py BASE_RESULTS SERIES_RESULTS OUT_PREFIX
Reads the "bench deferred-split" section of each guest's results, writes
OUT_PREFIX.json and OUT_PREFIX.md, prints the markdown.
"""

import json
import statistics
import sys
from pathlib import Path


def section(path, name):
    """The JSON lines of the guest's "bench NAME" section in results file PATH."""
    lines, inside = [], False
    for line in Path(path).read_text(errors="replace").splitlines():
        if line.split()[:3] == ["@@@", "begin", "bench"]:
            inside = line.split()[3:4] == [name]
        elif line.startswith("@@@ end bench"):
            inside = False
        elif inside and line.startswith("{"):
            lines.append(json.loads(line))
    return lines


def load(path):
    lines, guest = section(path, "deferred-split"), ""
    if not lines:
        sys.exit(f"{path}: no bench results (did the guest run the bench?)")
    out = {"guest": {}, "benches": {}, "micro": []}
    for r in lines:
        if r["bench"] == "guest":
            out["guest"] = r
            continue
        if r["bench"] == "unqueue":
            if r["kind"] != "micro":
                sys.exit(f"{path}: the unqueue_bench module failed to load (see the guest's dmesg)")
            out["micro"].append({k: v for k, v in r.items() if k not in ("bench", "kind")})
            continue
        b = out["benches"].setdefault(r["bench"], {"times": []})
        if r["kind"] == "counts":
            b["counts"] = {k: v for k, v in r.items() if k not in ("bench", "kind")}
        elif r["kind"] == "lruvec_lock":
            b["lruvec_lock"] = {k: v for k, v in r.items() if k not in ("bench", "kind")}
        else:
            b["times"].append(r["result"])
    for b in out["benches"].values():
        t = b.pop("times")
        for k in ("wall_s", "sys_s"):
            b[k] = statistics.median(x[k] for x in t)
            b[k + "_range"] = [min(x[k] for x in t), max(x[k] for x in t)]
        b["runs"] = len(t)
        b["workload"] = t[0]
    return out


def cell(bench, metric, value):
    """A median with the range of the runs, e.g. "2.1 (1.9-2.4)"."""
    key = "wall_s" if metric.startswith("wall") else "sys_s" if metric.startswith("sys") else None
    if key is None:
        return str(value)
    lo, hi = bench[key + "_range"]
    return f"{value} ({lo}-{hi})"


def lock_rows(b, s):
    """The lruvec lock rows, where both guests could time the lock."""
    lb, ls = b.get("lruvec_lock", {}), s.get("lruvec_lock", {})
    if not lb.get("locks") or not ls.get("locks"):
        return []
    return [("lruvec lock acquisitions (traced run)", lb["acquisitions"], ls["acquisitions"]),
            ("lruvec lock wait, ms (traced run)", round(lb["wait_ns"] / 1e6, 1),
             round(ls["wait_ns"] / 1e6, 1)),
            ("lruvec lock hold, ms (traced run)", round(lb["hold_ns"] / 1e6, 1),
             round(ls["hold_ns"] / 1e6, 1))]


def ratio(a, b):
    return round(b / a, 3) if a else None


def main():
    base, series, prefix = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    report = {"guest": base["guest"], "base": base["benches"], "series": series["benches"],
              "ratio_series_over_base": {}}
    md = ["| bench | metric | base | series | series/base |", "|---|---|---:|---:|---:|"]
    for name, b in base["benches"].items():
        s = series["benches"][name]
        rows = [("list_lru lock round trips", b["counts"]["list_lru_lock"], s["counts"]["list_lru_lock"]),
                ("... with IRQs off (under the lruvec lock)", b["counts"]["list_lru_lock_irqs_off"],
                 s["counts"]["list_lru_lock_irqs_off"]),
                ("deferred_split_folio() calls", b["counts"]["deferred_split_folio"],
                 s["counts"]["deferred_split_folio"]),
                *lock_rows(b, s),
                (f"wall s (median, range; {b['runs']} runs)", b["wall_s"], s["wall_s"]),
                (f"sys s (median, range; {b['runs']} runs)", b["sys_s"], s["sys_s"])]
        report["ratio_series_over_base"][name] = {}
        for metric, x, y in rows:
            r = ratio(x, y)
            report["ratio_series_over_base"][name][metric] = r
            md.append(f"| {name} | {metric} | {cell(b, metric, x)} | {cell(s, metric, y)} "
                      f"| {'-' if r is None else r} |")
    g = base["guest"]
    md.append("")
    md.append(f"QEMU guest, {g.get('threads', '?')} vCPUs, perf config (no debug options, "
              f"{g.get('compiler') or 'compiler not recorded'}); "
              "base = 7.3.4 alone, series = the patched tree; one boot each, same guest. "
              "Counts are exact (kprobe events with hist triggers, one counting run); "
              "the lruvec lock times come from one more run with probes on "
              "_raw_spin_lock_irqsave()/_raw_spin_unlock_irqrestore() filtered on the "
              "lruvec locks (wait: time in the lock call; hold: lock to unlock), so they "
              "include the probes' own cost, which grows with the spinlocks taken inside "
              "a held section (the base's list_lru lock); "
              "times are the median (and range) of the untraced runs. Base and series "
              "run in separate boots: under TCG, times move by 10% or more between runs "
              "and boots, so only ratios well outside the ranges mean anything.")
    unqueue = [m for m in series["micro"] if m["case"] != "lruvec_relock"]
    relock = [m for m in series["micro"] if m["case"] == "lruvec_relock"]
    if unqueue:
        report["unqueue_micro"] = unqueue
        md += ["", "Rust `folio_batch_unqueue_deferred_split()` against the C loop it replaced, "
               "same batches of 31 charged folios with a zero refcount (unqueue_bench module, "
               "series kernel):", "",
               "| case | queued | C ns/batch | Rust ns/batch | Rust/C | C mean | Rust mean |",
               "|---|---|---:|---:|---:|---:|---:|"]
        for m in unqueue:
            m["ratio_rust_over_c"] = ratio(m["c_ns"], m["rust_ns"])
            md.append(f"| {m['case']} (order {m['order']}) | {'yes' if m['queued'] else 'no'} "
                      f"| {m['c_ns']} | {m['rust_ns']} | {m['ratio_rust_over_c']} "
                      f"| {m['c_mean_ns']} | {m['rust_mean_ns']} |")
        m = unqueue[0]
        md += ["", f"Medians of {m['rounds']} rounds; in each round both variants run once on "
               "the same batch, in alternating order; a sample of a case that does not queue is "
               f"{m['calls']} calls; the clock's own cost ({m['clock_ns']} ns) is taken off. "
               "When the folios are queued, C takes the list_lru lock once per folio and Rust "
               "once per run of folios of one node and memcg: those rows measure that, not "
               "only the language."]
    if relock:
        m = relock[0]
        m["ratio_rust_over_c"] = ratio(m["c_ns"], m["rust_ns"])
        report["lruvec_relock_micro"] = m
        md += ["", "The lruvec lock: `LruvecGuard` (lock, relock per folio, unlock) against the "
               "same locking in C (`folio_lruvec_relock_irqsave()`, as "
               f"`folio_batch_move_lru()` does it), one batch of {m['folios']} folios of one "
               "lruvec, same module:", "",
               "| case | C ns/batch | Rust ns/batch | Rust/C | C mean | Rust mean |",
               "|---|---:|---:|---:|---:|---:|",
               f"| lock + {m['folios'] - 1} relocks + unlock | {m['c_ns']} | {m['rust_ns']} "
               f"| {m['ratio_rust_over_c']} | {m['c_mean_ns']} | {m['rust_mean_ns']} |",
               "", f"Medians of {m['rounds']} rounds of {m['calls']} calls per variant, both "
               "variants in every round."]
    text = "\n".join(md) + "\n"
    Path(prefix + ".json").write_text(json.dumps(report, indent=1) + "\n")
    Path(prefix + ".md").write_text(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
