#!/usr/bin/env python3
"""The report of `make bench COUNT=insn|c2c`: the tcg-bench plugin's regions
(plugin.json, one line per region) paired with the guest's runs (the
"bench": "count" lines of results.txt, in the same order), as tables of
base, series with the lockless reads off, and series with them on; where
there is a series-c boot, the series kernel built with the C
implementations instead of the Rust ones (CONFIG_PAGE_RCU_FREE_RUST=n,
CONFIG_DEFERRED_SPLIT_RUST=n), in columns "series (C)" next to the
series' and their ratio Rust/C.

Usage: bench_count_report.py [--need-both] OUT_PREFIX RUN_DIR...

Each RUN_DIR is a copy of a boot's run directory (results.txt,
plugin.json, guest.txt, <program>.nm) named <variant>-<count>[-<vcpus>],
variant base, series or series-c: base-insn, series-insn, series-c-insn,
base-c2c-2, series-c2c-4, series-c-c2c-2, ...

insn: instructions per operation, user and kernel, summed over all vCPUs
(interrupts, softirqs and the work other vCPUs do for the runs included),
the median of the rounds and their spread ((max - min) / median of the
total), flagged above 0.5%. c2c: cache-line transfers per operation, those
on the hot folio's struct page lines, and the lines that moved most with
the instructions that moved them. Writes OUT_PREFIX.md and OUT_PREFIX.json
(c2c also OUT_PREFIX.png: transfers per read by file system), prints the
tables. A RUN_DIR whose runs and regions do not pair one to one
is left out, with a line saying why; --need-both (make bench) then fails
unless both base and series are left, so that the page keeps its section
(series-c is optional).

insn also: the unqueue_bench module's lines ("bench": "unqueue", after the
counted regions, which they are not part of) as instructions per folio of
the Rust folio_batch_unqueue_deferred_split() against the C one: guest ns
over the 2^shift ns per instruction of `-icount shift=N` (the shift read
from guest.txt; without it, in guest ns).
"""

import bisect
import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

SPREAD_LIMIT = 0.5  # percent
USER_TOP = 1 << 47
VMEMMAP = 0xFFFFEA0000000000
UNITS = {
    "small": "16-byte read",
    "large": "64K read",
    "seq": "1 MiB read (cold)",
    "lockstep": "16-byte read, in turn",
    "dontneed": "hot 16-byte read; 1 drop per 256 x threads",
    "refault": "4K read + drop",
    "free": "16K folio freed",
    "partial": "PMD folio freed",
}
ORDER = ["small", "lockstep", "large", "seq", "dontneed", "refault", "free", "partial"]
PROGRAM = {"free": "deferred_split_bench", "partial": "deferred_split_bench"}


def _cxxfilt():
    for name in ("llvm-cxxfilt", "llvm-cxxfilt-22", "llvm-cxxfilt-19"):
        path = shutil.which(name)
        if path:
            return path
    return None


_DEMANGLED = {}


def short_generics(name, limit=24):
    """A demangled name with generic arguments longer than `limit`
    characters written <…> (a Rust closure's full type is hundreds)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(name):
        if ch == "<":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
            if depth == 0:
                inner = name[start:i + 1]
                out.append(inner if len(inner) <= limit else "<…>")
                continue
        if depth == 0:
            out.append(ch)
    return "".join(out) if depth == 0 else name


def demangle(names):
    """Rust (v0, legacy) names demangled with llvm-cxxfilt and shortened;
    the others, or all without llvm-cxxfilt, as they are."""
    todo = sorted({n for n in names if n.startswith(("_R", "_ZN")) and n not in _DEMANGLED})
    tool = _cxxfilt() if todo else None
    if tool:
        try:
            out = subprocess.run([tool], input="\n".join(todo) + "\n", capture_output=True,
                                 text=True, check=True, timeout=30).stdout.splitlines()
        except (OSError, subprocess.SubprocessError):
            out = []
        if len(out) == len(todo):
            for raw, dem in zip(todo, out):
                _DEMANGLED[raw] = short_generics(dem.strip()) if dem.strip() != raw else raw
    return {n: _DEMANGLED.get(n, n) for n in names}


class NmSymbols:
    """User text and data symbols of a workload program (nm output)."""

    def __init__(self, path):
        self.text, self.data = [], []
        if path.exists():
            for line in path.read_text().splitlines():
                f = line.split()
                if len(f) != 3:
                    continue
                try:
                    addr = int(f[0], 16)
                except ValueError:
                    continue
                (self.text if f[1] in "tTwW" else self.data if f[1] in "dDbBrR" else []).append((addr, f[2]))
        self.text.sort()
        self.data.sort()

    @staticmethod
    def _find(syms, addr):
        i = bisect.bisect_right(syms, (addr, "\uffff"))
        if i == 0:
            return ""
        base, name = syms[i - 1]
        return f"{name}+{addr - base:#x}"

    def sym(self, addr):
        return self._find(self.text, addr)

    def data_sym(self, addr):
        return self._find(self.data, addr)


def count_records(results):
    """The guest's "bench": "count" lines, in order (not the unqueue_bench
    module's "bench": "unqueue" lines: they are no run of a region)."""
    out = []
    for line in results.read_text(errors="replace").splitlines():
        if not line.startswith('{"bench": "count"'):
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            out.append({"bench": "count", "broken": line})
    return out


def unqueue_records(results):
    """The unqueue_bench module's lines ("bench": "unqueue": "kind" micro,
    one per case, or failed), in order; a line that does not parse is
    "kind": "broken"."""
    out = []
    if not results.exists():
        return out
    for line in results.read_text(errors="replace").splitlines():
        if not line.startswith('{"bench": "unqueue"'):
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            r = {"bench": "unqueue", "kind": "broken", "line": line}
        out.append(r if isinstance(r, dict) else {"bench": "unqueue", "kind": "broken", "line": line})
    return out


def regions(path):
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


def pair(records, regs):
    """Pairs the records of runs that finished (a result with "ops") with
    the complete regions, strictly in order: each finished run opened and
    closed exactly one region. A run that died leaves a broken record and,
    if it got past its start marker, an incomplete region (closed by the
    next run's reset marker); both are left out. Different numbers of
    finished runs and complete regions, or a pair whose op counts differ,
    leave the whole boot out (the error is returned): pairing by op count
    alone could swap runs of the same size (the on and off runs of one
    workload)."""
    done = [r for r in records if isinstance(r.get("result"), dict) and r["result"].get("ops") is not None]
    full = [g for g in regs if g.get("complete")]
    if len(done) != len(full):
        return f"{len(done)} finished runs but {len(full)} complete regions of the plugin: cannot pair them"
    for r, g in zip(done, full):
        if g.get("ops") != r["result"]["ops"]:
            return (f"run {r.get('workload')}-{r.get('fs')} {r.get('mode')} round {r.get('round')}: "
                    f"{r['result']['ops']} ops, its region {g.get('ops')}")
    for r, g in zip(done, full):
        r["region"] = g
    return None


def column(variant, mode):
    """The column of a run: base; series-off, series-on, series (the
    deferred split workloads, mode all); of the series built with the C
    implementations (variant series-c) c-off, c-on, c."""
    if variant == "base":
        return variant
    name = "c" if variant == "series-c" else variant
    return f"{name}-{mode}" if mode in ("on", "off") else name


# The columns in table order: each of series-c's next to the series' of the
# same mode. Old reports (no series-c run) keep their four.
COLUMNS = ("base", "series-off", "c-off", "series-on", "c-on", "series", "c")
C_COLUMNS = ("c-off", "c-on", "c")
LABELS = {"c-off": "series (C) off", "c-on": "series (C) on", "c": "series (C)"}
SHORT = {"c-off": "C off", "c-on": "C on", "c": "C"}
# (Rust column, C column, mode): the pairs of the Rust/C ratios.
RUST_C = (("series-off", "c-off", "off"), ("series-on", "c-on", "on"), ("series", "c", "all"))
C_NOTE = ("series (C): the series kernel built with the C implementations instead of the Rust ones"
          " (CONFIG_PAGE_RCU_FREE_RUST=n: the C deferred free engine, mm/rcu_free.c;"
          " CONFIG_DEFERRED_SPLIT_RUST=n: the C batch unqueue), same boot and workloads as the"
          " series'.")


def label(col):
    """A column's name in a table header."""
    return LABELS.get(col, col)


def short(col):
    """A column's name inside a cell: base, off, on, series, C off, C on, C."""
    return SHORT.get(col, col.replace("series-", ""))


def ratio(a, b):
    """a / b, or None where b is missing or not positive."""
    return None if a is None or not b or b <= 0 else a / b


LEFT_OUT = []  # boots left out by load(), with why: in the report too


def checks(runs):
    """What says a run was not what its label says: the switch read back
    after an on/off run, an off run that copied without a reference, a
    heat that did not make the pages hot, a 64K run whose folio was not
    PMD-sized. One line each."""
    out = []
    for run in runs:
        for r, reg in paired(run):
            name = f"{run['dir'].name} {r['workload']}-{r['fs']} {r['mode']} round {r['round']}"
            want = {"on": 1, "off": 0}.get(r.get("mode"))
            if want is not None and r.get("switch") is not None and r["switch"] != want:
                out.append(f"{name}: the switch read {r['switch']} after the run")
            ll = lockless(r, reg["ops"])
            if r.get("mode") == "off" and ll:
                out.append(f"{name}: {ll * 100:.1f}% of its reads copied without a reference with the switch off")
            if r.get("hot") is False:
                out.append(f"{name}: the heat before it did not make the pages hot")
            if r["workload"] == "large" and r.get("folio_order") not in (None, 9):
                out.append(f"{name}: the folio read is of order {r['folio_order']}, not a PMD folio")
    return out


def load(run_dirs):
    runs = []
    for d in map(Path, run_dirs):
        m = re.match(r"^(base|series-c|series)-(insn|c2c)(?:-(\d+))?$", d.name)
        if not m:
            sys.exit(f"bench_count_report: {d}: not <variant>-<count>[-<vcpus>]")
        variant, count, vcpus = m.group(1), m.group(2), m.group(3)
        recs = count_records(d / "results.txt")
        err = pair(recs, regions(d / "plugin.json"))
        if err:
            msg = f"{d.name}: {err}; its counts are left out"
            print(f"bench_count_report: {msg}", file=sys.stderr)
            LEFT_OUT.append(msg)
            continue
        nm = {p: NmSymbols(d / f"{p}.nm") for p in ("read_bench", "deferred_split_bench")}
        guest = (d / "guest.txt").read_text().strip() if (d / "guest.txt").exists() else ""
        unqueue = unqueue_records(d / "results.txt") if count == "insn" else []
        runs.append(dict(dir=d, variant=variant, count=count, vcpus=vcpus, records=recs, nm=nm, guest=guest,
                         unqueue=unqueue))
    return runs


def fmt(v, digits=1):
    return "-" if v is None else f"{v:,.{digits}f}"


def paired(run):
    """The records of `run` paired with a plugin region, with their region;
    round 0 (the warm-up of COUNT=insn) is paired but left out."""
    return [(r, r["region"]) for r in run["records"] if r.get("region") and r.get("round") != 0]


def count_unpaired(runs):
    return sum(1 for run in runs for r in run["records"] if not r.get("region"))


def profile_diff(profiles, col, base, n=6):
    """The functions whose instructions per op differ most between column
    `col` and `base` (median over the rounds of each; a function missing
    from a round's top list counts 0 there): [(function, col - base)]."""
    def med(col):
        rounds = profiles.get(col, [])
        names = {f for p in rounds for f in p}
        return {f: statistics.median(p.get(f, 0.0) for p in rounds) for f in names}
    a, b = med(col), med(base)
    d = [(f, a.get(f, 0.0) - b.get(f, 0.0)) for f in set(a) | set(b)]
    d = [x for x in d if abs(x[1]) >= 0.5]
    d.sort(key=lambda x: (-abs(x[1]), x[0]))
    return d[:n]


def profile_spread(rounds, n=3):
    """The functions whose instructions per op vary most between the
    rounds of one column: [(function, max - min)], where a spread comes
    from. A round's list is its top functions only: where a function is
    missing, it ran at most the smallest count of that list, which is used
    (a lower bound of the spread): a function near the cutoff does not show
    its whole count as a spread, one that ran in one round only does."""
    floor = [min(p.values()) if p else 0.0 for p in rounds]
    names = {f for p in rounds for f in p}
    d = []
    for f in names:
        vals = [p[f] for p in rounds if f in p]
        bound = [fl for p, fl in zip(rounds, floor) if f not in p]
        d.append((f, max(vals) - min(vals + bound) if bound else max(vals) - min(vals)))
    d = [(f, x) for f, x in d if x >= 0.5]
    d.sort(key=lambda x: (-x[1], x[0]))
    return d[:n]


# The workloads whose reads of a hot folio the series copies without a
# reference with the switch on: an "on" run with fewer did not measure it.
LOCKLESS = ("small", "large", "lockstep", "dontneed")
LOCKLESS_MIN = 0.99


def lockless(record, ops):
    """The run's reads copied without a folio reference, per op (read_bench's
    own count around its region; the record's, from a guest before it),
    or None without the counter."""
    res = record.get("result") or {}
    if "copied" in res:
        n = res["copied"]
    else:
        # The guest script's count around the program: it also holds the
        # reads of the program's exec (2-4), so it is capped at the ops.
        n = record.get("copied")
        n = None if n is None else min(n, ops)
    return None if n is None or not ops else n / ops


def lockless_cell(workload, col):
    """The worst round's share of lockless reads in the on column; flagged
    where the workload is one of LOCKLESS and some round fell short."""
    if not col or col.get("lockless_per_op") is None:
        return "-"
    x = col["lockless_per_op"]
    flag = ""
    if x > 1.0:
        flag = " **more than the run's reads: not all its own**"
    elif workload in LOCKLESS and x < LOCKLESS_MIN:
        flag = " **not all: the folio was not hot**"
    return f"{x * 100:.1f}%{flag}"


def insn_tables(runs):
    cells = {}  # (workload, fs) -> column -> [(user/op, kernel/op)]
    profiles = {}  # (workload, fs) -> column -> [{function: insns/op}]
    for run in runs:
        for r, reg in paired(run):
            ops = reg["ops"]
            key = (r["workload"], r["fs"])
            if reg.get("profile"):
                profiles.setdefault(key, {}).setdefault(column(run["variant"], r["mode"]), []).append(
                    {f: n / ops for f, n in reg["profile"]})
            cells.setdefault(key, {}).setdefault(column(run["variant"], r["mode"]), []).append(
                (reg["user"] / ops, reg["kernel"] / ops, reg.get("rep", 0) / ops, lockless(r, ops)))
    rows, data = [], []
    keys = sorted(cells, key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else 99, k[1]))
    used = [c for c in COLUMNS if any(c in cells[k] for k in keys)]
    with_c = any(c in used for c in C_COLUMNS)
    head = "| workload | fs | per | " + " | ".join(f"{label(c)} user / kernel" for c in used)
    head += " | kernel, series/base |" + (" kernel, Rust/C |" if with_c else "")
    head += " rep iterations | lockless reads (on) | spread of the rounds |"
    rows += [head, "|" + "---|" * (head.count("|") - 1)]
    for k in keys:
        line = f"| {k[0]} | {k[1]} | {UNITS.get(k[0], 'op')} |"
        med, worst, spreads, reps = {}, 0.0, [], []
        entry = {"workload": k[0], "fs": k[1], "unit": UNITS.get(k[0], "op"), "columns": {}}
        for c in used:
            v = cells[k].get(c)
            if not v:
                line += " - |"
                continue
            u = statistics.median(x[0] for x in v)
            kk = statistics.median(x[1] for x in v)
            rp = statistics.median(x[2] for x in v)
            reps.append(f"{short(c)} {fmt(rp)}")
            tot = [x[0] + x[1] for x in v]
            spread = (max(tot) - min(tot)) / statistics.median(tot) * 100 if len(tot) > 1 else None
            worst = max(worst, spread or 0.0)
            if spread is not None:
                flag = " **> 0.5%**" if spread > SPREAD_LIMIT else ""
                spreads.append(f"{short(c)} {spread:.2f}% ({len(v)}){flag}")
            med[c] = kk
            ll = [x[3] for x in v if x[3] is not None]
            entry["columns"][c] = dict(user_per_op=u, kernel_per_op=kk, rep_per_op=rp, rounds=len(v),
                                       totals_per_op=tot, spread_pct=spread,
                                       lockless_per_op=min(ll) if ll else None)
            line += f" {fmt(u)} / {fmt(kk)} |"
        ratios = []
        for c in COLUMNS[1:]:
            if c in med and "base" in med and med["base"]:
                ratios.append(f"{short(c)} {med[c] / med['base']:.3f}x")
        line += f" {', '.join(ratios) or '-'} |"
        if with_c:
            # The kernel instructions of the Rust series over the C one's,
            # the same mode (user space runs the same program).
            rc = {mode: ratio(med.get(rust), med.get(c)) for rust, c, mode in RUST_C}
            rc = {mode: x for mode, x in rc.items() if x is not None}
            if rc:
                entry["kernel_rust_over_c"] = rc
            line += f" {', '.join(f'{mode} {x:.3f}x' for mode, x in rc.items()) or '-'} |"
        line += f" {', '.join(reps)} |"
        share = lockless_cell(k[0], entry["columns"].get("series-on"))
        if "c-on" in entry["columns"]:
            share += f"; C on {lockless_cell(k[0], entry['columns']['c-on'])}"
        line += f" {share} |"
        line += f" {', '.join(spreads) or '-'} |"
        entry["worst_spread_pct"] = worst
        rows.append(line)
        data.append(entry)
    # Where the differences go: instructions per op by function (the
    # plugin's profile), series against base, and on against off.
    diffs = []
    for k in keys:
        p = profiles.get(k, {})
        entry = next(e for e in data if (e["workload"], e["fs"]) == k)
        # Rust against C last: the function rows against the base are the
        # ones the cover letter keeps.
        for col, ref in (("series-on", "base"), ("series-off", "base"), ("series", "base"),
                         ("series-on", "series-off"), ("series-on", "c-on"), ("series-off", "c-off"),
                         ("series", "c")):
            if col in p and ref in p:
                d = profile_diff(p, col, ref)
                entry.setdefault("profile_diff", {})[f"{col} - {ref}"] = d
                if d:
                    names = demangle([f for f, _ in d])
                    diffs.append(f"| {k[0]} | {k[1]} | {short(col)} − {short(ref)} | "
                                 + ", ".join(f"{names[f]} {x:+,.1f}" for f, x in d) + " |")
    # Where a spread over the limit comes from.
    wide = []
    for e in data:
        k = (e["workload"], e["fs"])
        for c, col in e["columns"].items():
            if (col.get("spread_pct") or 0) > SPREAD_LIMIT and len(profiles.get(k, {}).get(c, [])) > 1:
                d = profile_spread(profiles[k][c])
                col["spread_by_function"] = d
                if d:
                    names = demangle([f for f, _ in d])
                    wide.append(f"| {k[0]} | {k[1]} | {short(c)} | {col['spread_pct']:.2f}% | "
                                + ", ".join(f"{names[f]} {x:,.1f}" for f, x in d) + " |")
    if with_c:
        rows += ["", C_NOTE + " kernel, Rust/C: the series' kernel instructions per op over series (C)'s,"
                 " the same mode (off, on; all: the deferred split workloads)."]
    if wide:
        rows += ["", "Where the rounds differ, for the spreads over 0.5%: the functions whose instructions"
                 " per op vary most between the rounds (max − min):", "",
                 "| workload | fs | column | spread | function: max − min per op |", "|---|---|---|---|---|"] + wide
    if diffs:
        rows += ["", "Where they differ: instructions per op by function (the plugin's `profile`, median of"
                 " the rounds), the largest differences:", "",
                 "| workload | fs | columns | function: difference per op |", "|---|---|---|---|"] + diffs
    return rows, data, count_unpaired(runs)


def describe_line(line, nm):
    """The plugin's description of a line, with user data named from the
    workload's nm."""
    what = line.get("what", "")
    vaddr = int(line.get("vaddr", "0x0"), 16)
    if vaddr < USER_TOP:
        # Name the symbols of the bytes that were touched (the plugin's
        # mask of the line), not the one the line starts in.
        mask = int(line.get("bytes", "0x0"), 16) or 1
        names = []
        for off in range(64):
            if mask >> off & 1:
                s = nm.data_sym(vaddr + off)
                if s and s.split("+")[0] not in [n.split("+")[0] for n in names]:
                    names.append(s)
        if names:
            what = f"{', '.join(names)} ({what})"
    return what


def pcs(line, nm):
    out = []
    for p in line.get("pcs", []):
        pc = int(p["pc"], 16)
        sym = p.get("sym") or (nm.sym(pc) if pc < USER_TOP else "") or p["pc"]
        sym = demangle([sym])[sym]
        out.append(f"{sym} ({p['transfers']})")
    if line.get("other_pcs"):
        out.append(f"other ({line['other_pcs']})")
    return ", ".join(out)


def folio_pfn(line):
    vaddr = int(line.get("vaddr", "0x0"), 16)
    if 0 <= vaddr - VMEMMAP < 1 << 40:
        return (vaddr - VMEMMAP) // 64
    return None


def c2c_tables(runs, top_n=6):
    rows, data = [], []
    by_vcpus = {}
    for run in runs:
        by_vcpus.setdefault(run["vcpus"] or "?", []).append(run)
    for vcpus in sorted(by_vcpus):
        cells, tops = {}, {}
        for run in by_vcpus[vcpus]:
            for r, reg in paired(run):
                ops = reg["ops"]
                nm = run["nm"][PROGRAM.get(r["workload"], "read_bench")]
                pfn = r.get("pfn")
                if "vmemmap" in reg:
                    # Every struct page line that moved (the plugin's list).
                    folio = sum(t for p, t in reg["vmemmap"] if p == pfn)
                    pages = sum(t for _, t in reg["vmemmap"])
                else:  # a plugin before the list: the top lines only
                    folio = sum(t["transfers"] for t in reg.get("top", [])
                                if pfn is not None and folio_pfn(t) == pfn)
                    pages = sum(t["transfers"] for t in reg.get("top", []) if folio_pfn(t) is not None)
                key = (r["workload"], r["fs"])
                col = column(run["variant"], r["mode"])
                cells.setdefault(key, {}).setdefault(col, []).append(
                    dict(transfers=reg["transfers"] / ops, folio=folio / ops, pages=pages / ops,
                         insns=reg["insns"] / ops, threads=r.get("threads"), pfn=pfn,
                         lockless=lockless(r, ops)))
                tops.setdefault(key, {})[col] = [
                    dict(per_op=t["transfers"] / ops, what=describe_line(t, nm), pcs=pcs(t, nm),
                         reads=t.get("read_transfers"), addr=t.get("addr"), vaddr=t.get("vaddr"))
                    for t in reg.get("top", [])[:top_n]]
        keys = sorted(cells, key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else 99, k[1]))
        cols = [c for c in COLUMNS if any(c in cells[k] for k in keys)]
        with_c = any(c in cols for c in C_COLUMNS)
        rows += ["", f"**{vcpus} vCPUs** (MTTCG), transfers per operation: all lines / the hot folio's"
                 " line (its head `struct page`: `flags`, `_refcount`) / every `vmemmap` line (any"
                 " `struct page`, or a `struct slab` over one)", ""]
        head = "| workload | fs | per | " + " | ".join(map(label, cols)) + " |"
        if with_c:
            head += " transfers, Rust/C |"
        rows += [head, "|" + "---|" * (head.count("|") - 1)]
        shares = []
        for k in keys:
            line = f"| {k[0]} | {k[1]} | {UNITS.get(k[0], 'op')} |"
            entry = {"vcpus": vcpus, "workload": k[0], "fs": k[1], "columns": {}, "top": tops[k]}
            for c in cols:
                v = cells[k].get(c)
                if not v:
                    line += " - |"
                    continue
                m = {f: statistics.median(x[f] for x in v) for f in ("transfers", "folio", "pages", "insns")}
                ll = [x["lockless"] for x in v if x["lockless"] is not None]
                m["lockless_per_op"] = min(ll) if ll else None
                if c in ("series-on", "c-on") and ll:
                    shares.append(f"{k[0]} {k[1]}{' (C)' if c == 'c-on' else ''}: {lockless_cell(k[0], m)}")
                entry["columns"][c] = m
                line += f" {m['transfers']:.3f} / {m['folio']:.3f} / {m['pages']:.3f} |"
            if with_c:
                # All the lines' transfers of the Rust series over the C one's, the same mode.
                rc = {mode: ratio(entry["columns"].get(rust, {}).get("transfers"),
                                  entry["columns"].get(c, {}).get("transfers")) for rust, c, mode in RUST_C}
                rc = {mode: x for mode, x in rc.items() if x is not None}
                if rc:
                    entry["transfers_rust_over_c"] = rc
                line += f" {', '.join(f'{mode} {x:.3f}x' for mode, x in rc.items()) or '-'} |"
            rows.append(line)
            data.append(entry)
        if with_c:
            rows += ["", C_NOTE + " transfers, Rust/C: the series' transfers per op (all lines) over"
                     " series (C)'s, the same mode (off, on; all: the deferred split workloads)."]
        if shares:
            rows += ["", "Reads copied without a folio reference in the on runs (the worst round): "
                     + "; ".join(shares)]
        rows += ["", f"Top lines, {vcpus} vCPUs (transfers per op; what; instructions (transfers)):", ""]
        for k in keys:
            for c in cols:
                t = tops[k].get(c)
                if not t:
                    continue
                rows += [f"- {k[0]} {k[1]}, {label(c)}:", ""]
                rows += ["  | per op | line | moved by |", "  |---:|---|---|"]
                rows += [f"  | {x['per_op']:.3f} | {x['what']} | {x['pcs']} |" for x in t]
                rows.append("")
    return rows, data, count_unpaired(runs)


def icount_shift(guest):
    """The N of QEMU's `-icount shift=N` in the run's guest.txt (any
    "shift=N" in it), or None where it does not say."""
    m = re.search(r"\bshift=(\d+)\b", guest or "")
    return int(m.group(1)) if m else None


def guest_vcpus(guest):
    m = re.search(r"\bsmp=(\d+)\b", guest or "")
    return int(m.group(1)) if m else None


UNQUEUE_TITLE = "Rust against C unqueue under -icount (unqueue_bench)"


def unqueue_case(m):
    """A case's name in the table."""
    if m.get("case") == "lruvec_relock":
        n = m.get("folios")
        return f"lruvec_relock (lock + {n - 1 if isinstance(n, int) else '?'} relocks + unlock)"
    return f"{m.get('case')} (order {m.get('order')}{', queued' if m.get('queued') else ''})"


def unqueue_tables(runs):
    """The unqueue_bench module's cases of each insn run that loaded it
    (after its counted regions): the Rust folio_batch_unqueue_deferred_split()
    against the C one, per folio of the batch. Its c_ns and rust_ns are per
    call, the median over the rounds, the clock's cost taken off; under
    `-icount shift=N` on one vCPU, guest time advances 2^N ns per
    instruction, so ns / 2^N is the instruction count (a timer interrupt
    adds to a sample; the median leaves it out). Without the shift in
    guest.txt the cells stay guest ns. (rows, data)."""
    rows, data = [], []
    for run in runs:
        recs = run.get("unqueue") or []
        if not recs:
            continue
        name = run["dir"].name
        if run["variant"] != "series":
            # series-c: its folio_batch_unqueue_deferred_split() is the C one.
            rows += ["", f"{name} loaded unqueue_bench too: left out (in {label(column(run['variant'], 'all'))}"
                     " both of its variants are C)."]
            continue
        shift = icount_shift(run["guest"])
        per_insn = None if shift is None else 2 ** shift
        unit = "instructions" if per_insn else "guest ns"
        entry = {"run": name, "variant": run["variant"], "shift": shift, "ns_per_insn": per_insn,
                 "unit": unit, "cases": [], "failed": []}
        for r in recs:
            if r.get("kind") == "micro":
                continue
            why = r.get("why") or ("a line that does not parse: " + r["line"][:80] if r.get("kind") == "broken"
                                   else "see the guest's dmesg after the line in results.txt")
            entry["failed"].append(why)
            rows += ["", f"The unqueue_bench module failed in {name} ({why}): no Rust against C counts"
                     " from it."]
        micro = [r for r in recs if r.get("kind") == "micro"]
        if micro:
            vcpus = guest_vcpus(run["guest"])
            if per_insn:
                how = f"`-icount shift={shift}`: {per_insn} ns of guest time per instruction"
                col = "instructions"
            else:
                how = "guest.txt does not say `-icount`'s shift: guest ns, not instructions"
                col = "guest ns"
            rows += ["", f"{UNQUEUE_TITLE}, {name}: `folio_batch_unqueue_deferred_split()` on one batch,"
                     f" Rust against the C implementation, per folio of the batch ({how}):", "",
                     f"| case | folios | C {col} per folio | Rust {col} per folio | Rust/C |",
                     "|---|---:|---:|---:|---:|"]
            for m in micro:
                folios = m.get("folios")

                def per_folio(ns):
                    if not isinstance(ns, (int, float)) or not isinstance(folios, int) or folios <= 0:
                        return None
                    return ns / (per_insn or 1) / folios
                c, rust = per_folio(m.get("c_ns")), per_folio(m.get("rust_ns"))
                rc = ratio(m.get("rust_ns"), m.get("c_ns"))
                entry["cases"].append(dict(case=m.get("case"), order=m.get("order"), queued=m.get("queued"),
                                           folios=folios, rounds=m.get("rounds"), calls=m.get("calls"),
                                           c_ns=m.get("c_ns"), rust_ns=m.get("rust_ns"),
                                           clock_ns=m.get("clock_ns"), c_per_folio=c, rust_per_folio=rust,
                                           ratio_rust_over_c=rc))
                rows.append(f"| {unqueue_case(m)} | {folios} | {fmt(c, 2)} | {fmt(rust, 2)} |"
                            f" {'-' if rc is None else f'{rc:.3f}'} |")
            m = micro[0]
            many = sorted({x.get("calls") for x in micro if isinstance(x.get("calls"), int) and x["calls"] > 1})
            note = (f"Derived from the module's guest times (c_ns, rust_ns): for each case the median over"
                    f" {m.get('rounds')} rounds of the time of one call on the batch"
                    + (f" (where the case queues nothing, of {', '.join(map(str, many))} calls, per call)"
                       if many else "")
                    + f", the clock's own cost ({m.get('clock_ns')} ns) taken off, divided by the folios of"
                    " the batch")
            note += (f" and by {per_insn} ns per instruction (2^{shift}): under `-icount` virtual time follows"
                     " the instruction count, a timer interrupt in a round adds to it, the median leaves it"
                     " out." if per_insn else ".")
            if vcpus and vcpus > 1:
                note += f" {vcpus} vCPUs: guest time counts the instructions of all of them."
            note += (" lruvec_relock is no unqueue: the lruvec locking of `folio_batch_move_lru()` (lock,"
                     " relock per folio, unlock), `LruvecGuard` against the same C code."
                     if any(x.get("case") == "lruvec_relock" for x in micro) else "")
            rows += ["", note]
        data.append(entry)
    return rows, data


def plot_c2c(data, out):
    """OUT.png: transfers per 16-byte read (small and lockstep) per file
    system and column, all lines and the hot folio's line, a panel per
    vCPU count. One line on stderr without matplotlib."""
    rows = [e for e in data if e["workload"] in ("small", "lockstep")]
    if not rows:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench_count_report: no matplotlib (python3-matplotlib): no PNG", file=sys.stderr)
        return
    panels = sorted({(e["vcpus"], e["workload"]) for e in rows}, key=lambda p: (str(p[0]), p[1]))
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.5), squeeze=False)
    cols = ("base", "series-off", "series-on")
    for ax, (vcpus, workload) in zip(axes[0], panels):
        es = sorted((e for e in rows if e["vcpus"] == vcpus and e["workload"] == workload), key=lambda e: e["fs"])
        width = 0.8 / len(cols)
        for i, (c, color) in enumerate(zip(cols, ("0.3", "tab:blue", "tab:red"))):
            x = [j + i * width for j in range(len(es))]
            allv = [e["columns"].get(c, {}).get("transfers", 0) for e in es]
            folio = [e["columns"].get(c, {}).get("folio", 0) for e in es]
            ax.bar(x, allv, width, color=color, alpha=0.35, label=f"{c}: all lines")
            ax.bar(x, folio, width, color=color, label=f"{c}: hot folio")
        ax.set_xticks([j + width for j in range(len(es))], [e["fs"] for e in es], fontsize=8)
        ax.set_title(f"{workload}, {vcpus} vCPUs")
        ax.set_ylabel("transfers per read")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main():
    args = sys.argv[1:]
    need_both = "--need-both" in args
    args = [a for a in args if a != "--need-both"]
    if len(args) < 2:
        sys.exit(__doc__)
    prefix = Path(args[0])
    runs = load(args[1:])
    counts = {r["count"] for r in runs}
    md, js = [], {"runs": [dict(dir=str(r["dir"]), guest=r["guest"], records=len(r["records"]),
                                 paired=sum(1 for x in r["records"] if "region" in x)) for r in runs]}
    # Pages still waiting for a grace period after a run (the series'
    # nr_free_rcu_pages, read once the run is over): their frees were not
    # counted in the run's region.
    late = [f"{run['dir'].name} {r['workload']}-{r['fs']} {r['mode']} round {r['round']}: {r['rcu_pending']}"
            for run in runs for r, _ in paired(run) if (r.get("rcu_pending") or 0) > 0]
    if late:
        md.append("Runs after which pages still waited for a grace period (their frees are not in the"
                  " counts): " + "; ".join(late) + ".")
        md.append("")
    if LEFT_OUT:
        md += ["Left out: " + "; ".join(LEFT_OUT) + ".", ""]
    bad = checks(runs)
    if bad:
        md += ["**Runs that were not what their label says:** " + "; ".join(bad) + ".", ""]
        js["checks"] = bad
    for run in runs:
        if not any("region" in x for x in run["records"]):
            md.append(f"No counts from {run['dir'].name}: the plugin wrote no region that matches a run"
                      " (did it load? see the boot's output).")
    if "insn" in counts:
        insn = [r for r in runs if r["count"] == "insn"]
        rows, data, unpaired = insn_tables(insn)
        md += ["Instructions per operation (all vCPUs, user / kernel; median of the rounds), `-icount`;"
               " the executions of `rep` string instructions' iterations (the kernel's copies and clears:"
               " `rep movsb`, `rep stosb`) in their own column:", ""]
        md += rows
        if unpaired:
            md += ["", f"{unpaired} runs had no matching plugin region (left out)."]
        js["insn"] = data
        rows, data = unqueue_tables(insn)
        if data:
            md += rows
            js["unqueue"] = data
    if "c2c" in counts:
        rows, data, unpaired = c2c_tables([r for r in runs if r["count"] == "c2c"])
        md += rows
        if unpaired:
            md += ["", f"{unpaired} runs had no matching plugin region (left out)."]
        js["c2c"] = data
    text = "\n".join(md) + "\n"
    print(text, end="")
    variants = {r["variant"] for r in runs}
    if need_both and not {"base", "series"} <= variants:
        # The report of the last good run stays: the cover letter and the
        # results page read it.
        sys.exit(f"bench_count_report: counts of {', '.join(sorted(variants)) or 'no boot'} only "
                 f"(--need-both): {prefix}.md and the results page keep the last run's")
    if "c2c" in js:
        plot_c2c(js["c2c"], prefix.with_suffix(".png"))
    for suffix, body in ((".md", text), (".json", json.dumps(js, indent=1) + "\n")):
        tmp = prefix.with_suffix(suffix + ".tmp")
        tmp.write_text(body)
        tmp.replace(prefix.with_suffix(suffix))


if __name__ == "__main__":
    main()
