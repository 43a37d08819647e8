#!/usr/bin/env python3
"""A model from the exact counts of `make bench COUNT=insn|c2c` (issue 18,
item 3): 16-byte pread() throughput against threads (1-64) projected for a
machine like seed 002's (a 64-vCPU KVM guest on a Threadripper 7975WX,
Zen 4, 32 cores), beside what the seed measured there.

Usage: bench_model.py [--ghz F] [--ipc I] [...] INSN_JSON C2C_JSON OUT_PREFIX

INSN_JSON and C2C_JSON are bench_count_report.py's count-insn.json and
count-c2c.json. Without C2C_JSON (a path that does not exist, or "-") the
model says so and projects without contention. Writes OUT_PREFIX.md,
OUT_PREFIX.json and OUT_PREFIX.png (the projection against threads beside
the seed's points), prints the markdown. Bad input: one line, exit 1.

The model (units: ns, reads per ns), for file system fs and column c
(base; the series with the switch on):

  one thread   t1   = I * CPI / f + t_b           I: user + kernel insns per read
  N threads    t(N) = t1 + (k_other + sum of k_l) * t_x
               P(N) = min(N, C) + (Y - 1) * max(0, N - C)
               X(N) = min(P(N) / t(N),  1 / (k_l * t_x * (1 + s * (N - 2))) for each l)

k_l: transfers per read on a shared line that every read writes (l: the
hot folio's struct page line, with its refcount and flags; i_rwsem where
the c2c report lists it): the larger of the count and the writes a read
makes to the line (WRITES_PER_READ), each of which finds the line in
another CPU's cache when N threads read at full speed; MTTCG interleaves
its vCPUs coarsely, so a count of transfers is a lower bound
(--as-counted: the count). k_other: the other transfers per read, as
counted. The min() is the bound analysis of
operational queueing (Lazowska et al., "Quantitative System Performance",
1984, ch. 5): a line that every read writes is one server; with s = 0,
throughput never passes 1 / (k_l * t_x). Every constant is an assumption,
stated with its source in CONSTANTS below, and each has a CLI override.
"""

import argparse
import json
import math
import re
import statistics
import sys
from pathlib import Path

# The constants of the machine (name, value, unit, where the number comes
# from). Each is an assumption; --name-with-dashes overrides it.
CONSTANTS = [
    ("ghz", 4.0, "GHz",
     "f: the Threadripper PRO 7975WX's base clock (AMD's specification: 4.0 GHz base, 5.3 GHz boost)."
     " Assumed for every busy thread; one thread alone may boost up to 1.3x higher."),
    ("ipc", 2.0, "insns/cycle",
     "IPC = 1/CPI of the read path. Assumption, no published figure: a hot syscall loop whose code and"
     " data stay in L1/L2, a third of Zen 4's 6-wide dispatch (AMD, Software Optimization Guide for AMD"
     " Family 19h Processors, pub. 56665). The counts table shows the IPC the seed's one-thread figure implies."),
    ("boundary_ns", 400.0, "ns",
     "t_b: the user/kernel boundary's cost beyond its instructions, per read: the seed's own figure for"
     " the default mitigations (TSA ~170 ns + SRSO ~230 ns). Its mitigations=off rows are projected with 0."),
    ("transfer_ns", 80.0, "ns",
     "t_x: one cache-line transfer between cores. AnandTech's core-to-core latency for Zen 4 (Ryzen 9"
     " 7950X review): 15-19 ns within a CCD, up to 79.5 ns across CCDs. The 7975WX has 4 CCDs: in a"
     " 64-thread run 48 of the other 63 threads sit on another CCD. Assumption: every transfer crosses."
     " On a 2-socket server use its cross-socket figure (Chips and Cheese, \"Core to Core Latency Data"
     " on Large Systems\", 2023)."),
    ("cores", 32, "cores",
     "C: physical cores (7975WX: 32 cores, 64 threads); the seed's 64 vCPUs use both SMT threads of each."
     " Assumption: up to C threads, one per core."),
    ("smt_yield", 1.25, "x",
     "Y: the work of two SMT threads of one core against one: Linus' figures quoted in the seed"
     " (Threadripper 3970X, 32 cores: 7.4-7.8M reads/s for one thread, 304M for 64 threads, 40 threads'"
     " worth = 32 x 1.25)."),
    ("contention_slope", 0.01, "per thread",
     "s: each further thread contending for a line that every read writes slows each transfer of it by"
     " s x t_x (queued requesters, retried cmpxchg). That write-shared lines degrade as threads are added"
     " is published (D. Vyukov, 1024cores, \"First things first\": LOCK XADD on one line; David,"
     " Guerraoui, Trigonakis, SOSP 2013); the value 0.01 is an assumption (64 threads: 1.62x per transfer)."),
]

# Writes per 16-byte read to a shared line that every read writes, by
# column; the hot folio's are exact counts (scripts/bench/results.md,
# "Writes to the hot folio per 16-byte read": page_ref tracepoints on its
# PFN plus 2 per folio_unlock()): base 2 (get and put of the refcount), 4
# on tmpfs and huge tmpfs (its folio lock too, in the same struct page
# line), the series with the switch on 0. i_rwsem: down_read() and
# up_read(), each an atomic add to sem->count (the seed: XFS_IOLOCK_SHARED,
# inode_lock_shared() in blkdev_read_iter()).
FOLIO = "hot folio"
RWSEM = "i_rwsem"
WRITES_PER_READ = {
    FOLIO: {"base": 2, "base/tmpfs": 4, "base/hugetmpfs": 4, "series-on": 0, "series": 0},
    RWSEM: {"base": 2, "series-on": 2, "series": 2},
}
# A top line of the c2c report moved by these is i_rwsem's count.
PAIRS = {FOLIO: "get and put", RWSEM: "down_read() and up_read()"}
RWSEM_RE = re.compile(r"rwsem|down_read|up_read|inode_lock_shared|xfs_ilock|xfs_iunlock")

THREADS = (1, 2, 4, 8, 16, 32, 64)

EQUATIONS = [
    "one thread: t1 = I / (IPC × f) + t_b, I = user + kernel instructions per read (`COUNT=insn`)",
    "N threads: t(N) = t1 + (k_other + Σ k_l) × t_x; P(N) = min(N, C) + (Y − 1) × max(0, N − C)",
    "X(N) = min(P(N) / t(N), 1 / (k_l × t_x × (1 + s × (N − 2))) for every line l), reads per ns",
    "k_l: transfers per read on a shared line that every read writes (the hot folio's `struct page` line:"
    " its refcount, and base tmpfs's folio lock; i_rwsem where the c2c report lists it); k_other: every"
    " other transfer per read, as counted",
]

# The seed's measurements: seed 002 (../shared/seeds/002_eee0bd133d42cbe5.txt
# next to this repository, its cover letter), the table "16-byte pread() at offset 0, each
# thread with its own fd, M reads/s: base / this series" (rows: ext4, tmpfs,
# XFS, block dev at 64 threads, with and without "mit=off"; "1 thread, any of
# them"), and for one thread with mitigations=off the sentence before it
# ("With mitigations=off it does 7.1-8.8M"; no base/series split given, so
# both columns). Ranges (low, high) as the seed gives them. The seed's
# machine: "64-vCPU KVM guest on a Threadripper 7975WX (Zen 4), 2G, no debug
# options; base is v7.3-rc7".
SEED_FILE = ("seeds/002_eee0bd133d42cbe5.txt, table \"16-byte pread() at offset 0, each thread with its own fd,"
             " M reads/s\"")
ONE = {1: ((1.6, 1.9), (1.7, 2.0))}  # "1 thread, any of them"
ONE_OFF = {1: ((7.1, 8.8), (7.1, 8.8))}
SEED = {
    "default": {
        "ext4": {**ONE, 64: ((15.0, 15.7), (68.9, 70.1))},
        "tmpfs": {**ONE, 64: ((1.6, 1.7), (71.0, 72.0))},
        "xfs": {**ONE, 64: ((11.3, 11.4), (20.4, 20.5))},
        "blockdev": {**ONE, 64: ((14.7, 14.7), (28.8, 28.9))},
    },
    "off": {
        "ext4": {**ONE_OFF, 64: ((17.2, 17.2), (217.0, 220.0))},
        "tmpfs": {**ONE_OFF, 64: ((1.8, 1.9), (230.0, 239.0))},
    },
}
MITIGATIONS = {"default": "default mitigations", "off": "mitigations=off (t_b = 0)"}
MIT_SHORT = {"default": "default mitigations", "off": "mitigations=off"}
VARIANTS = (("base", ("base",)), ("series", ("series-on", "series")))


def fail(msg):
    sys.exit(f"bench_model: {msg}")


class Parser(argparse.ArgumentParser):
    def error(self, message):
        fail(message)


def arguments(argv):
    p = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, value, unit, source in CONSTANTS:
        p.add_argument("--" + name.replace("_", "-"), type=type(value), default=value,
                       help=f"{unit}, default {value}: {source}")
    p.add_argument("--c2c-vcpus", help="the c2c run to use (default: the most vCPUs)")
    p.add_argument("--as-counted", action="store_true",
                   help="transfers on the shared lines as counted, without the writes-per-read floor")
    p.add_argument("insn")
    p.add_argument("c2c")
    p.add_argument("out")
    a = p.parse_args(argv)
    for name, *_ in CONSTANTS:
        v = getattr(a, name)
        if not math.isfinite(v) or v < 0 or (v == 0 and name in ("ghz", "ipc", "cores")) \
                or (name == "smt_yield" and v < 1):
            fail(f"--{name.replace('_', '-')} {v}: out of range")
    return a


def read_json(path):
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        fail(f"{path}: not JSON ({e})")
    if not isinstance(data, dict):
        fail(f"{path}: not a bench_count_report.py report (a JSON object)")
    return data


def number(v, path, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        fail(f"{path}: {what} is {v!r}, not a count")
    return float(v)


def rows(data, key, path):
    out = data.get(key)
    if not isinstance(out, list) or not all(isinstance(r, dict) for r in out):
        fail(f"{path}: no \"{key}\" list: not a count-{key}.json of bench_count_report.py")
    return [r for r in out if r.get("workload") == "small"]


def insn_counts(path):
    """{fs: {column: instructions per read, user + kernel}} of the 16-byte reads."""
    out = {}
    for r in rows(read_json(path), "insn", path):
        fs = str(r.get("fs"))
        cols = r.get("columns")
        if not isinstance(cols, dict):
            fail(f"{path}: small/{fs}: no columns")
        for col, v in cols.items():
            if not isinstance(v, dict):
                fail(f"{path}: small/{fs}/{col}: not an object")
            where = f"small/{fs}/{col}"
            out.setdefault(fs, {})[col] = (number(v.get("user_per_op"), path, f"{where} user_per_op")
                                           + number(v.get("kernel_per_op"), path, f"{where} kernel_per_op"))
    if not out:
        fail(f"{path}: no 16-byte read (\"small\") rows: nothing to model")
    return out


def rwsem_lines(top):
    return [t for t in top or [] if isinstance(t, dict)
            and RWSEM_RE.search(f"{t.get('what', '')} {t.get('pcs', '')}")]


def c2c_counts(path, vcpus=None):
    """{fs: {"vcpus": v, column: {transfers, folio, rwsem, rwsem_pcs}}} of the
    16-byte reads at the run with the most vCPUs (or `vcpus`)."""
    by_fs = {}
    for r in rows(read_json(path), "c2c", path):
        by_fs.setdefault(str(r.get("fs")), {})[str(r.get("vcpus"))] = r
    out = {}
    for fs, runs in by_fs.items():
        v = vcpus if vcpus is not None else max(runs, key=lambda x: int(x) if x.isdigit() else 0)
        if v not in runs:
            continue
        r, entry = runs[v], {"vcpus": v}
        cols, top = r.get("columns"), r.get("top") or {}
        if not isinstance(cols, dict) or not isinstance(top, dict):
            fail(f"{path}: small/{fs}/{v} vCPUs: no columns")
        for col, c in cols.items():
            where = f"small/{fs}/{v} vCPUs/{col}"
            if not isinstance(c, dict):
                fail(f"{path}: {where}: not an object")
            lines = rwsem_lines(top.get(col))
            entry[col] = dict(transfers=number(c.get("transfers"), path, f"{where} transfers"),
                              folio=number(c.get("folio"), path, f"{where} folio"),
                              rwsem=sum(number(t.get("per_op"), path, f"{where} top per_op") for t in lines),
                              rwsem_pcs="; ".join(str(t.get("pcs", "")) for t in lines))
        out[fs] = entry
    return out


def writes_per_read(line, col, fs):
    w = WRITES_PER_READ[line]
    return w.get(f"{col}/{fs}", w.get(col, 0))


def per_read(fs, col, insns, c2c, as_counted):
    """The counts the model uses for one column: instructions, the shared
    lines every read writes {line: (counted, used)}, the other transfers."""
    entry = {"insns": insns, "lines": {}, "other": 0.0, "transfers": None, "c2c_vcpus": None}
    c = (c2c or {}).get(fs, {}).get(col)
    if c is None:
        return entry
    entry["transfers"], entry["c2c_vcpus"] = c["transfers"], c2c[fs]["vcpus"]
    counted = {FOLIO: c["folio"]}
    if c["rwsem"] > 0:  # only where the report lists it
        counted[RWSEM] = c["rwsem"]
        entry["rwsem_pcs"] = c["rwsem_pcs"]
    for line, k in counted.items():
        entry["lines"][line] = (k, k if as_counted else max(k, writes_per_read(line, col, fs)))
    entry["other"] = max(0.0, c["transfers"] - sum(counted.values()))
    return entry


def project(insns, lines, other, n, k):
    """M reads/s of n threads, and the line that caps it (None if the CPUs
    do). insns per read; lines {name: transfers per read}; other transfers
    per read; k: the constants (ghz, ipc, boundary_ns, transfer_ns, cores,
    smt_yield, contention_slope)."""
    t1 = insns / (k["ipc"] * k["ghz"]) + k["boundary_ns"]
    if n == 1:
        return 1e3 / t1, None
    t = t1 + (other + sum(lines.values())) * k["transfer_ns"]
    x = (min(n, k["cores"]) + (k["smt_yield"] - 1) * max(0, n - k["cores"])) / t
    by = None
    for name, kl in lines.items():
        if kl > 0 and k["transfer_ns"] > 0:
            cap = 1 / (kl * k["transfer_ns"] * (1 + k["contention_slope"] * (n - 2)))
            if cap < x:
                x, by = cap, name
    return x * 1e3, by


def implied_ipc(insns, measured, k):
    """The IPC at which one thread does the seed's one-thread figure."""
    if not measured:
        return None
    ns = 1e3 / statistics.mean(measured) - k["boundary_ns"]
    return insns / (ns * k["ghz"]) if ns > 0 else None


def model(insn, c2c, k, as_counted):
    counts, table = {}, []
    for fs in sorted(insn):
        for variant, cols in VARIANTS:
            col = next((c for c in cols if c in insn[fs]), None)
            if col is not None:
                e = per_read(fs, col, insn[fs][col], c2c, as_counted)
                counts.setdefault(fs, {})[variant] = dict(column=col, **e)
        for mit in MITIGATIONS:
            kk = dict(k, boundary_ns=0.0) if mit == "off" else k
            for n in THREADS:
                row = {"fs": fs, "mitigations": mit, "boundary_ns": kk["boundary_ns"], "threads": n}
                for variant, _ in VARIANTS:
                    e = counts.get(fs, {}).get(variant)
                    seed = SEED[mit].get(fs, {}).get(n)
                    measured = list(seed[0 if variant == "base" else 1]) if seed else None
                    if e is None:
                        row[variant] = dict(projected=None, capped_by=None, measured=measured, ratio=None)
                        continue
                    x, by = project(e["insns"], {l: u for l, (_, u) in e["lines"].items()}, e["other"], n, kk)
                    row[variant] = dict(projected=x, capped_by=by, measured=measured,
                                        ratio=x / statistics.mean(measured) if measured else None)
                    if by and measured:
                        row[variant]["seed_ns_per_transfer"] = 1e3 / statistics.mean(measured) / e["lines"][by][1]
                table.append(row)
        for variant in counts.get(fs, {}):
            seed = SEED["default"].get(fs, {}).get(1)
            e = counts[fs][variant]
            e["seed_implied_ipc"] = implied_ipc(e["insns"], seed and seed[0 if variant == "base" else 1], k)
    return counts, table


def reason(cell, row, e, k):
    """Why a projection is off from the seed, in a clause."""
    mit_k = dict(k, boundary_ns=row["boundary_ns"])
    if row["threads"] == 1:
        ipc = implied_ipc(e["insns"], cell["measured"], mit_k)
        if ipc is None:
            return "the seed's one-thread figure is below the assumed boundary cost alone"
        return (f"one thread shares nothing, so it is the cost per instruction: the seed's figure means IPC "
                f"{ipc:.2f} at {k['ghz']:g} GHz after a {row['boundary_ns']:g} ns boundary (assumed {k['ipc']:g})")
    if cell["capped_by"]:
        kl = e["lines"][cell["capped_by"]][1]
        ns = 1e3 / statistics.mean(cell["measured"]) / kl
        if cell["ratio"] < 1:
            return (f"the model caps it on the {cell['capped_by']} line at {kl:g} transfers per read of "
                    f"{k['transfer_ns']:g} ns; the seed's rate means {ns:.0f} ns per transfer: a line that many "
                    "CPUs queue for is often handed to one on the same CCD or core (15-19 ns, not the "
                    f"cross-CCD figure), and one read's {PAIRS[cell['capped_by']]} may run back to back "
                    "without losing it")
        if cell["capped_by"] == FOLIO and row["fs"] in ("tmpfs", "hugetmpfs"):
            return ("the folio lock serialises more than its transfers: base tmpfs sleeps on it, and its "
                    "waiters are woken one at a time (a wake-up costs microseconds, not a line transfer)")
        return (f"the {cell['capped_by']} line costs more than {kl:g} transfers of {k['transfer_ns']:g} ns per read "
                "(queued requesters, retried cmpxchg)")
    if e["transfers"] is None:
        return "no c2c counts for it: the model has no contention"
    if cell["ratio"] > 1:
        return ("it is CPU-bound in the model: a shared line the c2c run did not see move (MTTCG's coarse "
                "interleaving gives lower bounds), the SMT yield, or the clock under an all-core load")
    return "the cost per read is over-estimated: IPC, the clock (up to 5.3 GHz boost) or the boundary cost"


def disagreement(counts, table, k):
    """Per variant: the spread of projection/seed and the furthest cell, with
    its likely reason."""
    out = []
    for variant, _ in VARIANTS:
        cells = [(r, r[variant]) for r in table if r[variant]["ratio"] is not None]
        if not cells:
            out.append(f"{variant}: no cell with both a projection and a seed figure.")
            continue
        ratios = [c["ratio"] for _, c in cells]
        r, c = max(cells, key=lambda rc: abs(math.log(rc[1]["ratio"])))
        lo, hi = c["measured"]
        out.append(
            f"{variant}: projection/seed {min(ratios):.2f}-{max(ratios):.2f} over {len(cells)} cells; furthest "
            f"{r['fs']} at {r['threads']} thread{'s' if r['threads'] > 1 else ''} ({MIT_SHORT[r['mitigations']]}),"
            f" {c['projected']:.2f} against {fmt_range(lo, hi)} M/s ({c['ratio']:.2f}x), likely because "
            f"{reason(c, r, counts[r['fs']][variant], k)}.")
    implied = sorted(c["seed_ns_per_transfer"] for r in table for v, _ in VARIANTS
                     for c in [r[v]] if c.get("seed_ns_per_transfer") and c["ratio"] < 1)
    if implied:
        slow = k["transfer_ns"] * (1 + k["contention_slope"] * (THREADS[-1] - 2))
        out.append(f"Where a line caps the model below the seed, the seed's figures mean {implied[0]:.0f}-"
                   f"{implied[-1]:.0f} ns per transfer (the model: {k['transfer_ns']:g} ns, {slow:.0f} at"
                   f" {THREADS[-1]} threads; `--transfer-ns`, `--contention-slope`).")
    for r in table:
        b, s_ = r["base"], r["series"]
        if (b["capped_by"] and s_["capped_by"] and b["projected"] == s_["projected"]
                and b["measured"] and s_["measured"]
                and statistics.mean(b["measured"]) < 0.75 * statistics.mean(s_["measured"])):
            out.append(f"On {r['fs']} at {r['threads']} threads ({MIT_SHORT[r['mitigations']]}) the model caps base"
                       f" and series alike (one line at {counts[r['fs']]['series']['lines'][s_['capped_by']][1]:g}"
                       f" transfers per read), but the seed's base does"
                       f" {statistics.mean(b['measured']) / statistics.mean(s_['measured']):.2f}x the series' rate:"
                       " the transfers of base's two shared lines add up rather than queue apart.")
    return out


def fmt_seed(v):
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def fmt_range(lo, hi):
    return fmt_seed(lo) if lo == hi else f"{fmt_seed(lo)}-{fmt_seed(hi)}"


def fmt(v, digits=2):
    return "-" if v is None else f"{v:,.{digits}f}"


def markdown(args, k, counts, table, notes, verdict):
    md = ["Projected 16-byte `pread()` throughput, M reads/s, on a machine like seed 002's (a 64-vCPU KVM"
          " guest on a Threadripper 7975WX, Zen 4, 32 cores), from the counts of `make bench COUNT=insn` and"
          " `COUNT=c2c` (`scripts/bench_model.py`), beside what the seed measured there (" + SEED_FILE + ").", ""]
    for n in notes:
        md += [f"**{n}**", ""]
    md += ["Model (ns; per file system, for base and for the series with the switch on):", ""]
    md += [f"- {e};" for e in EQUATIONS]
    md += ["- k_l used: " + ("the count (`--as-counted`)." if args.as_counted else
                             "the count, or where higher the read's writes to the line (base 2, base tmpfs and"
                             " huge tmpfs 4, series on 0; i_rwsem 2): MTTCG interleaves its vCPUs coarsely, so"
                             " a count is a lower bound of what truly concurrent CPUs move."),
           "", "A cell capped by a line (the second term of the min) is marked *.", "",
           "| constant | value | source (each an assumption) |", "|---|---:|---|"]
    for name, _, unit, source in CONSTANTS:
        md.append(f"| {name} | {k[name]:g} {unit} | {source} |")
    md += ["", "Per read (insns: `COUNT=insn`, median of the rounds; transfers: `COUNT=c2c`, counted / used):", "",
           "| fs | column | insns | transfers, all | hot folio line | i_rwsem | other | c2c vCPUs |"
           " seed's 1 thread implies IPC |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for fs in sorted(counts):
        for e in counts[fs].values():
            lines = {l: f"{cu[0]:.3f} / {cu[1]:g}" for l, cu in e["lines"].items()}
            other = fmt(e["other"], 3) if e["transfers"] is not None else "-"
            md.append(f"| {fs} | {e['column']} | {e['insns']:,.1f} | {fmt(e['transfers'], 3)} |"
                      f" {lines.get(FOLIO, '-')} | {lines.get(RWSEM, '-')} | {other} |"
                      f" {e['c2c_vcpus'] or '-'} | {fmt(e.get('seed_implied_ipc'))} |")
    for fs in sorted({r["fs"] for r in table}):
        for mit in MITIGATIONS:
            if mit == "off" and fs not in SEED["off"]:
                continue
            md += ["", f"### {fs}, {MITIGATIONS[mit]}", "",
                   "| threads | base | seed base | base/seed | series (on) | seed series | series/seed |",
                   "|---:|---:|---:|---:|---:|---:|---:|"]
            for r in (r for r in table if r["fs"] == fs and r["mitigations"] == mit):
                line = f"| {r['threads']} |"
                for variant, _ in VARIANTS:
                    c = r[variant]
                    seed = fmt_range(*c["measured"]) if c["measured"] else "-"
                    line += f" {fmt(c['projected'])}{'*' if c['capped_by'] else ''} | {seed} | {fmt(c['ratio'])} |"
                md.append(line)
    md += ["", "**Where the model and the seed disagree.** " + " ".join(verdict), ""]
    return "\n".join(md)


def plot(table, out):
    """OUT.png: projected reads/s against threads per file system (default
    mitigations, log scales), base and series, and the seed's measured
    ranges at the thread counts it gives. One line on stderr without
    matplotlib (python3-matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench_model: no matplotlib (python3-matplotlib): no PNG", file=sys.stderr)
        return
    rows = [r for r in table if r["mitigations"] == "default"]
    fss = sorted({r["fs"] for r in rows})
    if not fss:
        return
    fig, axes = plt.subplots(1, len(fss), figsize=(4 * len(fss), 3.5), squeeze=False)
    for ax, fs in zip(axes[0], fss):
        for (variant, _), color in zip(VARIANTS, ("k", "r")):
            pts = [(r["threads"], r[variant]["projected"]) for r in rows
                   if r["fs"] == fs and r[variant]["projected"] is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color + "-", label=f"{variant}, projected")
            seed = [(r["threads"], r[variant]["measured"]) for r in rows
                    if r["fs"] == fs and r[variant]["measured"]]
            for n, (lo, hi) in seed:
                ax.errorbar([n], [(lo + hi) / 2], yerr=[[(hi - lo) / 2], [(hi - lo) / 2]], fmt=color + "o",
                            capsize=3, label=f"{variant}, seed" if n == seed[0][0] else None)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"16-byte reads, {fs}")
        ax.set_xlabel("threads")
        ax.set_ylabel("M reads/s")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main(argv=None):
    args = arguments(sys.argv[1:] if argv is None else argv)
    k = {name: getattr(args, name) for name, *_ in CONSTANTS}
    insn = insn_counts(args.insn)
    notes, c2c = [], None
    if args.c2c == "-" or not Path(args.c2c).exists():
        notes.append(f"No c2c counts ({args.c2c}): no cache-line transfers per read, so this models every "
                     "thread at its one-thread cost with no contention: base's folio refcount and XFS's and the "
                     "block device's i_rwsem, which limit them at 64 threads, are not in it (`make bench COUNT=c2c`).")
    else:
        c2c = c2c_counts(args.c2c, args.c2c_vcpus)
        if not c2c:
            at = f" at {args.c2c_vcpus} vCPUs" if args.c2c_vcpus else ""
            fail(f"{args.c2c}: no 16-byte read (\"small\") rows{at}")
    for fs in sorted(insn):
        for variant, cols in VARIANTS:
            if not any(c in insn[fs] for c in cols):
                notes.append(f"No {variant} instruction count for {fs}: its column is empty.")
            elif c2c is not None and not any(c in c2c.get(fs, {}) for c in cols):
                notes.append(f"No c2c count for {fs} {variant}: it is modelled without contention.")
            elif c2c is not None and fs in ("xfs", "blockdev") and \
                    not any(c2c[fs].get(c, {}).get("rwsem") for c in cols):
                notes.append(f"The c2c top lines of {fs} {variant} name no i_rwsem (down_read/up_read), which"
                             " the seed says every read there takes: the model has no i_rwsem line for it.")
    counts, table = model(insn, c2c, k, args.as_counted)
    verdict = disagreement(counts, table, k)
    text = markdown(args, k, counts, table, notes, verdict)
    out = {
        "model": EQUATIONS,
        "assumptions": {name: dict(value=k[name], unit=unit, source=source) for name, _, unit, source in CONSTANTS},
        "writes_per_read": WRITES_PER_READ,
        "as_counted": args.as_counted,
        "inputs": {"insn": args.insn, "c2c": None if c2c is None else args.c2c},
        "notes": notes,
        "seed": SEED_FILE,
        "counts": {fs: {v: dict(e, lines={l: dict(counted=cu[0], used=cu[1]) for l, cu in e["lines"].items()})
                        for v, e in cols.items()} for fs, cols in counts.items()},
        "projection": table,
        "disagreement": verdict,
    }
    try:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out + ".md").write_text(text)
        Path(args.out + ".json").write_text(json.dumps(out, indent=1) + "\n")
    except OSError as e:
        fail(f"{args.out}: {e.strerror}")
    plot(table, args.out + ".png")
    print(text, end="")


if __name__ == "__main__":
    main()
