#!/usr/bin/env python3
"""The verdicts and the result table of `make matrix` (scripts/matrix.sh).

  matrix.py options CONFIG            the series' Kconfig options (from the
                                      Kconfig hunks of patches/*.patch) as
                                      CONFIG has them, one "NAME=value" a line
  matrix.py record ENTRY.json ...     judge one entry from what its steps
                                      left (see record()), write ENTRY.json
  matrix.py table DIR                 DIR/*.json -> build/matrix.md and
                                      build/matrix.json (one line per entry)
  matrix.py warnings LOG              count the compiler warnings of a build
                                      log, those in the series' files apart
  matrix.py wdiff BASE SERIES         the W=1/sparse warnings of SERIES that
                                      BASE does not have (line numbers aside)

Only the standard library: the host tests (scripts/tests/test_matrix.py)
import it.
"""

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
PATCHES = TOP / "patches"

KCONFIG_ADDED = re.compile(r"^\+config ([A-Z0-9_]+)\s*$")
CONFIG_LINE = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
UNSET_LINE = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")
# "mm/filemap.c:2931:7: warning: ... [-Wfoo]" (clang, gcc, sparse).
WARNING = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*warning:\s*(?P<msg>.*)$")
# A compiler's or sparse's warning or error (sparse reports some of what it
# finds as errors and goes on).
DIAGNOSTIC = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<kind>warning|error):\s*(?P<msg>.*)$")
RUST_WARNING = re.compile(r"^warning: (?P<msg>.*)$")
RUST_WHERE = re.compile(r"^\s*--> (?P<file>[^:\s]+):(?P<line>\d+)")
KCSAN = re.compile(r"BUG: KCSAN: (?P<kind>[a-z-]+) in (?P<what>.*?)\s*$")
# "read-write (marked) to 0x... of 4 bytes by task 1124 on cpu 0:",
# "race at unknown origin, with read to 0x... of 8 bytes by interrupt on cpu 1:"
KCSAN_ACCESS = re.compile(r"(?:^|with )(?:read|write|read-write)(?P<marked> \(marked[^)]*\))?"
                          r"(?: \([^)]*\))? to 0x[0-9a-f]+ of \d+ bytes by ")
TIMESTAMP = re.compile(r"^\s*\[\s*\d+\.\d+\]\s?")
# Lines of a C function definition the series adds or changes.
C_DEF = re.compile(r"^\+(?:[A-Za-z_][\w\s\*]*?[\s\*])?(?P<name>[a-z_][a-z0-9_]*)\((?!\s*\))")
HUNK_FUNC = re.compile(r"^@@ [^@]* @@.*?\b(?P<name>[a-z_][a-z0-9_]*)\(")

# The series' KUnit suites, by the option that builds them.
SUITES = {
    "RUST_MM_KUNIT_TEST": ["rust_mm_folio", "rust_mm_folio_batch", "rust_mm_folio_list",
                           "rust_mm_list_lru", "rust_mm_lruvec"],
    "DEFERRED_SPLIT_RUST_KUNIT_TEST": ["rust_mm_deferred_split"],
    "DEFERRED_SPLIT_KUNIT_TEST": ["deferred_split"],
    "PAGE_RCU_FREE_KUNIT_TEST": ["rcu_free"],
    "FILEMAP_NOLOCK_KUNIT_TEST": ["filemap_nolock"],
}


def series_options(patches=PATCHES):
    """The Kconfig options the series adds: "+config NAME" in its patches,
    in the order of patches/series."""
    order = []
    series = patches / "series"
    if series.exists():
        order = [l.split()[0] for l in series.read_text().splitlines()
                 if l.strip() and not l.lstrip().startswith("#")]
    files = [patches / p for p in order if (patches / p).exists()]
    files += sorted(p for p in patches.glob("*.patch") if p not in files)
    opts = []
    for f in files:
        for line in f.read_text(errors="replace").splitlines():
            m = KCONFIG_ADDED.match(line)
            if m and m.group(1) not in opts:
                opts.append(m.group(1))
    return opts


def parse_config(text):
    """A .config as {NAME: value}, without the CONFIG_ prefix; "is not set"
    lines as "n"."""
    out = {}
    for line in text.splitlines():
        m = CONFIG_LINE.match(line)
        if m:
            out[m.group(1)[7:]] = m.group(2).strip('"')
            continue
        m = UNSET_LINE.match(line)
        if m:
            out[m.group(1)[7:]] = "n"
    return out


def option_state(config, names):
    """{name: "y"/"m"/"n"} for names (absent: "n")."""
    return {n: config.get(n, "n") for n in names}


def check_wanted(config, wanted):
    """The options of "NAME=value ..." that config does not have as wanted."""
    bad = []
    for item in wanted.split():
        name, _, value = item.partition("=")
        name = name.removeprefix("CONFIG_")
        got = config.get(name, "n")
        if got != value:
            bad.append(f"{name}={value} (got {got})")
    return bad


def expected_suites(config):
    """The series' KUnit suites a boot of this configuration must report."""
    if config.get("KUNIT", "n") != "y":
        return []
    return [s for opt, suites in SUITES.items() if config.get(opt, "n") == "y" for s in suites]


def series_files(patches=PATCHES):
    """The files the series adds or changes (paths in the kernel tree)."""
    files = set()
    for f in patches.glob("*.patch"):
        for line in f.read_text(errors="replace").splitlines():
            if line.startswith("+++ b/"):
                files.add(line[6:].split()[0])
    for d in ("mm", "rust", "tools", "Documentation"):
        for p in (TOP / d).rglob("*"):
            if p.is_file():
                files.add(str(p.relative_to(TOP)))
    return files


def series_objects(patches=PATCHES):
    """The objects a build makes of the series' code, relative to the
    build directory: each C file it changes or adds (the KUnit cases and
    the Rust helpers are #included by mm/filemap.c and helpers.c), the Rust
    kernel crate and the Rust files it adds to mm/."""
    objs = {"rust/kernel.o", "rust/helpers/helpers.o"}
    for f in series_files(patches):
        if f.endswith(".c") and not f.startswith(("tools/", "mm/tests/", "rust/helpers/")):
            objs.add(f[:-2] + ".o")
    objs |= {f"mm/{p.stem}.o" for p in (TOP / "mm").glob("*.rs")}
    return sorted(objs)


COMPILED = re.compile(r"^\s+(?:CC|RUSTC)(?: \[M\]| L)?\s+(?P<obj>\S+\.o)\s*$")


def not_compiled(log, obj_dir, objs=None):
    """The series' objects that exist in obj_dir but that the build of log
    did not compile (so the log has none of their warnings)."""
    done = {m.group("obj") for m in map(COMPILED.match, log.splitlines()) if m}
    return [o for o in (objs if objs is not None else series_objects())
            if (Path(obj_dir) / o).exists() and o not in done]


def series_functions(patches=PATCHES, added_only=False):
    """Names that mark the series' code in a report: the C functions its
    patches define or change (added definition lines and hunk headers; with
    added_only, those it defines alone), and the Rust modules it adds as they
    appear in v0-mangled symbols (mm/rcu_free_rust.rs: "13rcu_free_rust";
    rust/kernel/mm/folio.rs: "2mm5folio")."""
    names = set()
    for f in patches.glob("*.patch"):
        for line in f.read_text(errors="replace").splitlines():
            m = C_DEF.match(line) or (None if added_only else HUNK_FUNC.match(line))
            if m and len(m.group("name")) > 3 and m.group("name") not in C_NOT_FUNCS:
                names.add(m.group("name"))
    for p in (TOP / "mm").glob("*.rs"):
        names.add(f"{len(p.stem)}{p.stem}")
    for p in (TOP / "rust/kernel/mm").glob("*.rs"):
        names.add(f"2mm{len(p.stem)}{p.stem}")
    return names


C_NOT_FUNCS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "static",
               "unlikely", "likely", "EXPORT_SYMBOL", "EXPORT_SYMBOL_GPL", "READ_ONCE",
               "WRITE_ONCE", "VM_BUG_ON", "VM_WARN_ON", "VM_WARN_ON_ONCE", "BUILD_BUG_ON"}


def in_series(text, funcs):
    """Does text (a report title or backtrace) name one of the series' functions?"""
    words = set(re.findall(r"[A-Za-z0-9_]+", text))
    if words & funcs:
        return True
    return any(f in text for f in funcs if f[0].isdigit())


def count_warnings(log, files):
    """The compiler warnings of a build log: (all, those in files).

    C warnings are "file:line:col: warning: ..."; rustc's are "warning: ..."
    followed by a " --> file:line" line.
    """
    total, ours, seen = 0, [], set()
    lines = log.splitlines()
    for i, line in enumerate(lines):
        m = WARNING.match(line)
        where = None
        if m:
            where, key = m.group("file"), line
        else:
            r = RUST_WARNING.match(line)
            if not r or r.group("msg").startswith(("unused manifest", "`")):
                continue
            w = next((RUST_WHERE.match(l) for l in lines[i + 1:i + 4] if RUST_WHERE.match(l)), None)
            where = w.group("file") if w else ""
            key = f"{where}: {r.group('msg')}"
        if key in seen:
            continue
        seen.add(key)
        total += 1
        rel = tree_path(where)
        if rel in files:
            ours.append(key)
    return total, ours


def warning_keys(log):
    """The W=1/sparse warnings of a log as a Counter of (file, message),
    line and column numbers left out, so that the series' moves do not
    count as new warnings."""
    keys = Counter()
    for line in log.splitlines():
        m = DIAGNOSTIC.match(line.strip())
        if m:
            f = tree_path(m.group("file"))
            msg = m.group("msg").strip()
            keys[(f, msg if m.group("kind") == "warning" else f"error: {msg}")] += 1
    return keys


CHECKER_OFF = "specified, but"  # make: "C=2 specified, but sparse is not available or not up to date"
W1_CC = re.compile(r"^\s+CC\s+(?P<f>\S+)\.s$")
SPARSE_CHECK = re.compile(r"^\s+CHECK\s+(?P<f>\S+)\.c$")
SPARSE_NOTE = re.compile(r"^(?P<f>\S+)\.c: note: in included file")
SPARSE_DIAG_FILE = re.compile(r"^(?P<f>[^\s:]+)\.c:\d+:(?:\d+:)?\s*error:")
# sparse stops reporting anything about a file after an error while
# preprocessing it (has_error then spans the whole evaluation).
SPARSE_CUT_SHORT = "error: too long token expansion"


def tree_path(path):
    """A path of a log as a path in the kernel tree: relative to an
    out-of-tree build (../../mm/x.c), or absolute under $BUILD/tree or
    $BUILD/tree-base, wherever BUILD= put them (the kernel has no directory
    named tree)."""
    return re.sub(r"^(\.\./)+|^.*/tree(-base)?/", "", path)


def coverage(log, files, sparse_files=None):
    """What the W=1 and sparse passes of one w1-sparse log really did over
    `files` (stems such as mm/filemap): the files compiled with W=1, those
    sparse checked, and whether make turned the checker off (7.3 does, with
    one make warning, when scripts/checker-valid.sh rejects it)."""
    w1, checked, cut, where = set(), set(), set(), None
    for line in log.splitlines():
        m = W1_CC.match(line)
        if m:
            w1.add(m.group("f"))
        m = SPARSE_CHECK.match(line)
        if m:
            checked.add(m.group("f"))
        m = SPARSE_NOTE.match(line) or SPARSE_DIAG_FILE.match(line)
        if m:
            where = tree_path(m.group("f"))
        if SPARSE_CUT_SHORT in line and where:
            cut.add(where)
    checked -= cut
    off = any(CHECKER_OFF in l and "C=" in l for l in log.splitlines())
    sp = set(files if sparse_files is None else sparse_files)
    return {"files": len(files), "w1": len(w1 & set(files)), "checked": len(checked & sp),
            "sparse_files": len(sp), "checker_off": off, "cut_short": sorted(cut & set(files)),
            "not_w1": sorted(set(files) - w1), "not_checked": sorted(sp - checked)}


def coverage_failures(cov):
    """Why a w1-sparse pass did not cover its files, for each tree; []
    when it did."""
    why = []
    for tree, c in cov.items():
        if c["checker_off"]:
            why.append(f"{tree}: make turned sparse off (its scripts/checker-valid.sh rejected it)")
        elif c["not_checked"]:
            why.append(f"{tree}: sparse checked {c['checked']} of {c.get('sparse_files', c['files'])} files"
                       f" (not {', '.join(c['not_checked'][:3])}"
                       + (f"; cut short by '{SPARSE_CUT_SHORT}': {', '.join(c['cut_short'][:3])}"
                          if c.get("cut_short") else "") + ")")
        if not c["files"]:
            why.append(f"{tree}: no files to check")
        if c["not_w1"]:
            why.append(f"{tree}: W=1 compiled {c['w1']} of {c['files']} files"
                       f" (not {', '.join(c['not_w1'][:3])})")
    return why


def added_diagnostics(log, added=None):
    """The diagnostics of a log in the files the series adds (all new: the
    base has no such file), as a Counter of (file, message)."""
    if added is None:
        added = {str(p.relative_to(TOP)) for d in ("mm", "rust") for p in (TOP / d).rglob("*")
                 if p.suffix in (".c", ".h")}
    return Counter({k: n for k, n in warning_keys(log).items() if k[0] in added})


def new_warnings(base, series):
    """The warnings of series that base does not have, with their counts."""
    b, s = warning_keys(base), warning_keys(series)
    return sorted((f, msg, n - b.get((f, msg), 0)) for (f, msg), n in s.items()
                  if n > b.get((f, msg), 0))


def kernel_report_blocks(console):
    """The reports of a kernel log (lines of scripts/results.py's REPORTS),
    each with the lines that follow it up to the next report or the end of
    its trace: [(title, block text)]."""
    sys.path.insert(0, str(TOP / "scripts"))
    from results import REPORT  # noqa: E402 (the one list of reports)
    lines = [TIMESTAMP.sub("", l) for l in console.splitlines()]
    blocks, cur = [], None
    for line in lines:
        if REPORT.search(line):
            cur = [line]
            blocks.append(cur)
        elif cur is not None:
            # A WARNING ends at its end-trace line, a BUG: at the end of its
            # stack, so that what follows is not read as part of it.
            if line.startswith("---[ end trace") or line.strip() == "</TASK>" or len(cur) > 80:
                cur = None
            else:
                cur.append(line)
    return [(b[0], "\n".join(b)) for b in blocks]


def kcsan_accesses(block):
    """The accesses of a KCSAN report: [(marked, stack text)], one per
    "read to ... by task" (or "write", "read-write", "(marked)", "race at
    unknown origin, with read to ...") header, with the frames under it."""
    sides, cur = [], None
    for line in block.splitlines()[1:]:
        m = KCSAN_ACCESS.search(line)
        if m:
            cur = [bool(m.group("marked")), []]
            sides.append(cur)
        elif cur is not None and line.strip():
            if line.startswith("Reported by") or line.startswith("value changed"):
                cur = None
            else:
                cur[1].append(line)
        elif cur is not None:
            cur = None
    return [(marked, "\n".join(frames)) for marked, frames in sides]


def kcsan_races(console, funcs, added=None):
    """The KCSAN reports of a kernel log: {"series": Counter, "changed":
    Counter, "elsewhere": Counter} of their titles ("data-race in a / b").
    KCSAN reports a race only where an access is plain, and that is where the
    annotation or the fix goes: a report is the series' when the stack of one
    of its plain (unmarked) accesses names a function the series adds
    (added; all of funcs when not given), "changed" when it names only
    functions the series changes (the access may be upstream's own line of
    that function: a build without debug info cannot tell, a reader must),
    else elsewhere. A plain read of upstream code racing with the series'
    atomic refcount or bitop is not the series' (snapshot_page() of
    /proc/kpageflags copies struct page with memcpy()). A report without
    access lines falls back to its whole text."""
    added = funcs if added is None else added
    out = {"series": Counter(), "changed": Counter(), "elsewhere": Counter()}
    for title, block in kernel_report_blocks(console):
        m = KCSAN.search(title)
        if not m:
            continue
        what = re.sub(r"\+0x[0-9a-f]+/0x[0-9a-f]+", "", m.group("what"))
        key = f"{m.group('kind')} in {what}"
        plain = [stack for marked, stack in kcsan_accesses(block) if not marked] or [block]
        if any(in_series(stack, added) for stack in plain):
            out["series"][key] += 1
        elif any(in_series(stack, funcs) for stack in plain):
            out["changed"][key] += 1
        else:
            out["elsewhere"][key] += 1
    return out


def record(args):
    """Judge one entry. Inputs (all optional but --name): the .config, the
    build log, the guest run (scripts/results.py's summary.json and the
    console), what it must have (--want), and how it ended (--status with
    --reason for a step that failed or a skip)."""
    e = {"entry": args.name, "kind": args.kind, "what": args.what, "seconds": args.seconds,
         "hash": args.hash, "when": time.strftime("%Y-%m-%d %H:%M:%S"), "status": "pass",
         "reasons": [], "notes": list(args.note or [])}
    if args.seed:
        e["seed"] = args.seed

    def fail(why):
        e["status"] = "fail"
        e["reasons"].append(why)

    config = {}
    if args.config and Path(args.config).exists():
        config = parse_config(Path(args.config).read_text())
        opts = series_options()
        e["series_options"] = option_state(config, opts)
        e["series_on"] = [o for o in opts if config.get(o, "n") in ("y", "m")]
        bad = check_wanted(config, args.want or "")
        if bad:
            fail("options not as the entry needs: " + ", ".join(bad))
        if not e["series_on"] and not args.series_off:
            fail("the series is compiled out (none of its options is on)")
    if args.status and args.status != "pass":
        e["status"] = args.status
        e["reasons"].append(args.reason or args.status)
    if args.build_log and Path(args.build_log).exists():
        total, ours = count_warnings(Path(args.build_log).read_text(errors="replace"), series_files())
        e["warnings"] = total
        e["warnings_series"] = len(ours)
        if ours:
            fail(f"{len(ours)} warnings in the series' files: " + "; ".join(ours[:5]))
        if args.zero_warnings and total:
            fail(f"{total} warnings (this entry must build without any)")
        if args.obj:
            missed = not_compiled(Path(args.build_log).read_text(errors="replace"), args.obj)
            if missed:
                fail(f"the build did not compile {len(missed)} of the series' objects, whose"
                     f" warnings are then not counted: {', '.join(missed[:4])}")
    # Only where the objects were built (--nm): not for a configure-only run.
    for sym in args.need_symbol if getattr(args, "symbols", None) else []:
        # "file.o:symbol" must be defined (T) in file.o; "!file.o:symbol" not.
        neg = sym.startswith("!")
        obj, _, name = sym.lstrip("!").partition(":")
        if not (args.symbols or {}).get(obj):
            # No symbols at all: llvm-nm failed or the object is missing, and
            # "not built" would pass for nothing.
            fail(f"no symbols read from {obj} (llvm-nm failed, or no such object)")
            continue
        defined = name in args.symbols[obj]
        if defined == neg:
            fail(f"{name} {'built' if neg else 'not built'} in {obj}")
        else:
            e["notes"].append(f"{name} {'not ' if neg else ''}in {obj}")
    if args.run:
        judge_run(e, Path(args.run), config, args, fail)
    if args.wdiff:
        d = json.loads(Path(args.wdiff).read_text())
        e["warnings"] = d["series"]
        e["warnings_base"] = d["base"]
        e["warnings_new"] = len(d["new"])
        for why in coverage_failures(d.get("coverage", {})):
            fail(why)
        if d.get("coverage"):
            c = d["coverage"]["series"]
            e["notes"].append(f"W=1 over {c['w1']} and sparse over {c['checked']} of {c['files']} files")
        if d.get("outside"):
            e["notes"].append("the series' files these builds do not compile (other entries build"
                              " them, without W=1 and sparse): " + ", ".join(f + ".c" for f in d["outside"]))
        if d["new"]:
            fail(f"{len(d['new'])} new W=1/sparse warnings against base: "
                 + "; ".join(f"{f}: {m}" for f, m, _ in d["new"][:5]))
    if e["status"] != "pass":
        e["reasons"] = e["reasons"] or [e["status"]]
    Path(args.out).write_text(json.dumps(e, indent=1) + "\n")
    return e


def judge_run(e, run, config, args, fail):
    """A guest run: scripts/results.py's summary, the series' KUnit suites
    the configuration builds, and the kernel log's reports, each in the
    series' code or elsewhere."""
    summary = run / "summary.json"
    if not summary.exists():
        fail(f"no guest results ({summary})")
        return
    s = json.loads(summary.read_text())
    console = (run / "console.log").read_text(errors="replace") if (run / "console.log").exists() else ""
    funcs = series_functions()
    kunit = {x["suite"] for x in s["suites"] if x["kind"] == "kunit"}
    for suite in expected_suites(config):
        if suite not in kunit:
            fail(f"KUnit suite {suite} did not run")
    e["guest"] = {"passed": s["passed"], "failed": s["failed"], "skipped": s["skipped"]}
    for x in s["suites"]:
        if x["kind"] == "kernel":
            continue  # judged below
        if x["kind"] == "kunit" and x["suite"] == "(none)" and not config.get("KUNIT") == "y":
            # A configuration without KUnit: results.py's "no KUnit results"
            # is not a failure here, nor counted as one.
            e["guest"]["failed"] -= x["failed"]
            e.setdefault("notes", []).append("no KUnit in this configuration")
            continue
        if x["failed"]:
            fail(f"{x['kind']} {x['suite']}: " + ", ".join(x["failures"][:3]))
    if args.fail_skip:
        # A skip that means the series' path did not run (the lockless reads
        # off or uncounted, no kprobe on flush_dcache_folio()) is a failure.
        pattern = re.compile(args.fail_skip)
        for log in sorted((run / "kselftest").glob("*.log")):
            for line in log.read_text(errors="replace").splitlines():
                if "# SKIP" in line and pattern.search(line):
                    fail(f"{log.stem} skipped what this entry is for: {line.strip()[:120]}")
    blocks = kernel_report_blocks(console)
    series = [t for t, b in blocks if in_series(b, funcs)]
    other = [(t, b) for t, b in blocks if not in_series(b, funcs)]
    if args.kcsan:
        dmesg = (run / "dmesg.txt").read_text(errors="replace") if (run / "dmesg.txt").exists() else ""
        if "kcsan: enabled early" not in console + dmesg:
            fail("KCSAN did not say it was on (no 'kcsan: enabled early' in the kernel log)")
        races = kcsan_races(console, funcs, series_functions(added_only=True))
        e["kcsan"] = {"series": sum(races["series"].values()),
                      "changed": sum(races["changed"].values()),
                      "elsewhere": sum(races["elsewhere"].values()),
                      "races_series": sorted(races["series"]),
                      "races_changed": sorted(races["changed"]),
                      "races_elsewhere": sorted(races["elsewhere"])}
        if races["series"]:
            fail(f"{len(races['series'])} distinct KCSAN races in the series' code: "
                 + "; ".join(sorted(races["series"])[:5]))
        if races["changed"]:
            e["notes"].append(f"{len(races['changed'])} distinct KCSAN races in functions the "
                              "series changes, to check by hand (README): "
                              + "; ".join(sorted(races["changed"])[:5]))
        series = [t for t in series if not KCSAN.search(t)]
        other = [(t, b) for t, b in other if not KCSAN.search(t)]
    if series:
        fail("kernel log, in the series' code: " + "; ".join(series[:3]))
    if other:
        e["reports_elsewhere"] = [t for t, _ in other][:20]
        # Only the reports the entry names (--allow-match, over each
        # report's block) are allowed, with the reason (--allow-elsewhere).
        pattern = re.compile(args.allow_match) if args.allow_elsewhere and args.allow_match else None
        allowed = [t for t, b in other if pattern and pattern.search(b)]
        rest = [t for t, b in other if not (pattern and pattern.search(b))]
        if allowed:
            e["notes"].append(f"{len(allowed)} kernel log reports outside the series' code "
                              f"(allowed: {args.allow_elsewhere})")
        if rest:
            fail("kernel log: " + "; ".join(rest[:3]))


def load_entries(d):
    """The entries' results in DIR: ENTRY.json files, not the side files
    some entries leave beside them (w1-sparse.wdiff.json)."""
    found = (json.loads(p.read_text()) for p in sorted(Path(d).glob("*.json")))
    return [e for e in found if isinstance(e, dict) and "entry" in e]


def table(entries, order=None):
    """The Markdown table and the JSON list of the entries, in order."""
    if order:
        rank = {n: i for i, n in enumerate(order)}
        entries = sorted(entries, key=lambda e: (rank.get(e["entry"], len(rank)), e["entry"]))
    rows = ["| entry | what | status | time | warnings | series options on | details |",
            "|---|---|---|---:|---|---|---|"]
    for e in entries:
        w = ""
        if "warnings" in e:
            w = f"{e['warnings']}"
            if "warnings_base" in e:
                w += f" (base {e['warnings_base']}, new {e['warnings_new']})"
            elif e.get("warnings_series"):
                w += f" ({e['warnings_series']} in the series)"
        on = ", ".join(e.get("series_on", [])) if "series_on" in e else ""
        if "series_on" in e and not e["series_on"]:
            on = "none"
        details = list(e.get("reasons", [])) if e["status"] != "pass" else []
        if "kcsan" in e:
            k = e["kcsan"]
            every = k["races_series"] + k.get("races_changed", []) + k["races_elsewhere"]
            details.append(f"KCSAN: {k['series']} reports in the series' code, "
                           f"{k.get('changed', 0)} in functions it changes, "
                           f"{k['elsewhere']} elsewhere"
                           + (f" ({'; '.join(every)})" if every else ""))
        if "guest" in e:
            g = e["guest"]
            details.append(f"guest: {g['passed']} passed, {g['failed']} failed, {g['skipped']} skipped")
        if e.get("seed"):
            details.append(f"KCONFIG_SEED={e['seed']}")
        details += e.get("notes", [])
        status = e["status"] + (" (cached)" if e.get("cached") else "")
        rows.append(f"| {e['entry']} | {e.get('what', '').replace('|', '/')} | {status} | {fmt_time(e.get('seconds'))} "
                    f"| {w} | {on} | {'; '.join(d.replace('|', '/') for d in details)} |")
    return "\n".join(rows) + "\n", entries


def fmt_time(s):
    if s is None:
        return ""
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("options")
    o.add_argument("config")
    w = sub.add_parser("want")
    w.add_argument("config")
    w.add_argument("want")
    r = sub.add_parser("record")
    r.add_argument("out")
    r.add_argument("--name", required=True)
    r.add_argument("--kind", default="build")
    r.add_argument("--what", default="")
    r.add_argument("--seconds", type=int)
    r.add_argument("--hash", default="")
    r.add_argument("--config")
    r.add_argument("--want", default="")
    r.add_argument("--series-off", action="store_true",
                   help="the entry is for the series compiled out (the C fallbacks)")
    r.add_argument("--build-log")
    r.add_argument("--zero-warnings", action="store_true")
    r.add_argument("--need-symbol", action="append", help="[!]file.o:symbol")
    r.add_argument("--nm", action="append", help="file.o=nm-output-file")
    r.add_argument("--run")
    r.add_argument("--kcsan", action="store_true")
    r.add_argument("--allow-elsewhere", default="")
    r.add_argument("--allow-match", default="",
                   help="a regular expression: the reports outside the series' code that"
                   " --allow-elsewhere allows (each report's block must match it)")
    r.add_argument("--fail-skip", default="",
                   help="a regular expression: a kselftest '# SKIP' line of the run that"
                   " matches it fails the entry")
    r.add_argument("--obj", help="the build directory: the series' objects in it must"
                   " have been compiled by --build-log's build")
    r.add_argument("--wdiff")
    r.add_argument("--status")
    r.add_argument("--reason")
    r.add_argument("--seed")
    r.add_argument("--note", action="append")
    t = sub.add_parser("table")
    t.add_argument("dir")
    t.add_argument("--md", required=True)
    t.add_argument("--json", required=True)
    t.add_argument("--order", default="")
    sub.add_parser("series-objects")
    wa = sub.add_parser("warnings")
    wa.add_argument("log")
    wd = sub.add_parser("wdiff")
    wd.add_argument("base")
    wd.add_argument("series")
    wd.add_argument("--out")
    wd.add_argument("--base-files", help="the files BASE's passes were given, one stem a line")
    wd.add_argument("--series-files", help="the same for SERIES")
    wd.add_argument("--added", help="the passes over the files that only the test build"
                    " compiles: every diagnostic in a file the series adds is new")
    wd.add_argument("--added-files", help="the files those passes were given")
    args = ap.parse_args()

    if args.cmd == "options":
        c = parse_config(Path(args.config).read_text())
        for n, v in option_state(c, series_options()).items():
            print(f"{n}={v}")
    elif args.cmd == "want":
        bad = check_wanted(parse_config(Path(args.config).read_text()), args.want)
        if bad:
            print(", ".join(bad))
            return 1
    elif args.cmd == "record":
        args.symbols = {}
        for item in args.nm or []:
            obj, _, path = item.partition("=")
            text = Path(path).read_text() if Path(path).exists() else ""
            args.symbols[obj] = {l.split()[-1] for l in text.splitlines()
                                 if len(l.split()) >= 2 and l.split()[-2] in ("T", "t")}
        e = record(args)
        print(f"{e['entry']}: {e['status']}" + (f" ({'; '.join(e['reasons'])})" if e["reasons"] else ""))
        return 0 if e["status"] in ("pass", "skip") else 1
    elif args.cmd == "table":
        md, entries = table(load_entries(args.dir), [x for x in args.order.split(",") if x])
        Path(args.md).write_text("# make matrix\n\n" + md)
        Path(args.json).write_text(json.dumps(entries, indent=1) + "\n")
        sys.stdout.write(md)
    elif args.cmd == "series-objects":
        print("\n".join(series_objects()))
    elif args.cmd == "warnings":
        total, ours = count_warnings(Path(args.log).read_text(errors="replace"), series_files())
        print(f"{total} warnings, {len(ours)} in the series' files")
        for x in ours:
            print("  " + x)
    elif args.cmd == "wdiff":
        base = Path(args.base).read_text(errors="replace")
        series = Path(args.series).read_text(errors="replace")
        new = new_warnings(base, series)
        d = {"base": sum(warning_keys(base).values()), "series": sum(warning_keys(series).values()),
             "new": new}
        if args.base_files and args.series_files:
            d["coverage"] = {
                "base": coverage(base, Path(args.base_files).read_text().split()),
                "series": coverage(series, Path(args.series_files).read_text().split())}
        if args.series_files:
            given = set(Path(args.series_files).read_text().split())
            d["outside"] = sorted(o[:-2] for o in series_objects()
                                  if not o.startswith("rust/") and o[:-2] not in given
                                  and not (TOP / (o[:-2] + ".rs")).exists())
        if args.added:
            log = Path(args.added).read_text(errors="replace")
            ours = added_diagnostics(log)
            d["added"] = sum(ours.values())
            d["new"] = sorted(d["new"] + [(f, m, n) for (f, m), n in ours.items()])
            d.setdefault("coverage", {})["added"] = coverage(
                log, Path(args.added_files).read_text().split())
        if args.out:
            Path(args.out).write_text(json.dumps(d, indent=1) + "\n")
        print(f"W=1/sparse: base {d['base']}, series {d['series']}, {len(new)} new")
        for f, m, n in new:
            print(f"  {f}: {m}" + (f" (x{n})" if n > 1 else ""))
        why = coverage_failures(d.get("coverage", {}))
        for w in why:
            print(f"  not covered: {w}")
        return 1 if new or why else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
