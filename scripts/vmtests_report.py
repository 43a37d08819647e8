#!/usr/bin/env python3
"""The verdict of `make vmtests` (scripts/vmtests.sh): upstream's mm suite,
run_vmtests.sh, on the base kernel and on the series, compared test by test.

  vmtests_report.py OUT_PREFIX BASE_RUN SERIES_RUN

Each RUN is a build/results/<config>-vmtests[-base] directory of a
MODE=vmtests boot (results.txt: a "vmtests <category>" section per category,
the TAP that run_vmtests.sh prints inside it). A test's state is pass, fail,
skip, timeout (its category hit its limit while it ran), crash (the guest
stopped while it ran) or missing (never reached). The series fails when a
test that passes on base does not pass on it (a regression, named), or when
its kernel log has a report (results.py's list) that the base's has not.
Tests that fail on both are the base's, listed with the lines that say why.
Writes OUT_PREFIX.md and OUT_PREFIX.json and prints the verdict last:
"vmtests: N passed, N failed": the tests that pass on the series, and its
regressions and new reports (the base's failures are listed, not counted).

Only the standard library and results.py (split_sections, kernel_reports).
"""

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import (comparison_table, kernel_reports, report_key as strip,  # noqa: E402
                     split_sections, verdict_sections)

# run_vmtests.sh's own lines (its TAP_PREFIX "# " is on everything else):
# "ok 3 name", "ok 3 name # SKIP", "not ok 3 name # exit=1".
RESULT = re.compile(r"^(?P<not>not )?ok (?P<num>\d+) (?P<name>.*?)(?: # (?P<directive>.*))?$")
# The banner before each test: "# running ./cow" (between lines of dashes).
RUNNING = re.compile(r"^# running (?P<cmd>.*)$")
TIMEOUT_RC = (124, 137, 143)
# Lines of a test's output that say why it failed or skipped.
WHY = re.compile(r"\b(fail|FAIL|error|ERROR|Error|not ok|skip|SKIP|Bail out|unable|Unable|cannot|"
                 r"Cannot|No such|not supported|not found|Permission denied)\b")
GOOD = ("pass", "skip")
# A mktemp directory in a test's name (run_vmtests.sh's "mktemp -d
# /tmp/xfs_dir_XXXXXX"): another in each boot, the same test.
MKTEMP = re.compile(r"(/tmp/[\w.-]*?_)[A-Za-z0-9]{6}\b")


def pretty(cmd):
    """run_vmtests.sh's pretty_name(): the command without "./" or "bash ./"."""
    return re.sub(r"^(bash )?\./", "", cmd.strip())


def parse_category(lines, rc):
    """[(name, state, why)] of one category's section, in the order run."""
    tests, seen = [], {}
    running, output = None, []

    def add(name, state, why):
        name = MKTEMP.sub(r"\1XXXXXX", name)
        n = seen.get(name, 0) + 1
        seen[name] = n
        tests.append((name if n == 1 else f"{name} #{n}", state, why))

    for line in lines:
        m = RESULT.match(line)
        if m:
            directive = (m.group("directive") or "").upper()
            if directive.startswith("SKIP"):
                state = "skip"
            elif m.group("not"):
                state = "fail"
            else:
                state = "pass"
            why = [w[2:].strip() for w in output
                   if WHY.search(w) and w[2:].strip() not in ("[FAIL]", "[SKIP]")][-3:] if state != "pass" else []
            add(m.group("name"), state, why)
            running, output = None, []
            continue
        r = RUNNING.match(line)
        if r:
            running, output = pretty(r.group("cmd")), []
        elif running is not None:
            output.append(line)
    if running is not None:
        # A test that printed its banner and no result: its category ran out
        # of time, or the guest stopped under it.
        state = "timeout" if rc in TIMEOUT_RC else "crash"
        add(running, state, [w[2:].strip() for w in output[-3:]])
    return tests


def load(run):
    run = Path(run)
    text = (run / "results.txt").read_text(errors="replace") if (run / "results.txt").exists() else ""
    sections = split_sections(text)
    cats = {}
    for (kind, name), (lines, rc) in sections.items():
        if kind != "vmtests":
            continue
        cats[name] = dict(rc=rc, tests=parse_category(lines, rc))
    log = sections.get(("dmesg", "boot"), ([], None))[0]
    if not log and (run / "console.log").exists():
        log = (run / "console.log").read_text(errors="replace").splitlines()
    reports = kernel_reports("\n".join(log))
    return dict(categories=cats, reports=reports, done="@@@ done" in text)


def compare(base, series):
    rows, regressions, base_failures, fixed = [], [], [], []
    cats = list(dict.fromkeys(list(base["categories"]) + list(series["categories"])))
    for cat in cats:
        b = {n: (s, w) for n, s, w in base["categories"].get(cat, {}).get("tests", [])}
        s = {n: (st, w) for n, st, w in series["categories"].get(cat, {}).get("tests", [])}
        names = list(dict.fromkeys(list(b) + list(s)))
        row = dict(category=cat, base={}, series={},
                   base_rc=base["categories"].get(cat, {}).get("rc"),
                   series_rc=series["categories"].get(cat, {}).get("rc"))
        for n in names:
            bs, bw = b.get(n, ("missing", []))
            ss, sw = s.get(n, ("missing", []))
            row["base"][bs] = row["base"].get(bs, 0) + 1
            row["series"][ss] = row["series"].get(ss, 0) + 1
            if bs == "pass" and ss != "pass":
                regressions.append(dict(category=cat, test=n, base=bs, series=ss, why=sw))
            elif bs not in GOOD and ss not in GOOD:
                base_failures.append(dict(category=cat, test=n, base=bs, series=ss, why=bw or sw))
            elif bs not in GOOD and ss in GOOD:
                fixed.append(dict(category=cat, test=n, base=bs, series=ss))
            elif bs == "skip" and ss not in GOOD:
                regressions.append(dict(category=cat, test=n, base=bs, series=ss, why=sw))
        rows.append(row)
    base_reports = {strip(r) for r in base["reports"]}
    new_reports = [r for r in series["reports"] if strip(r) not in base_reports]
    return dict(rows=rows, regressions=regressions, base_failures=base_failures, fixed=fixed,
                new_reports=new_reports, base_reports=base["reports"], series_reports=series["reports"])


def cell(counts):
    order = ("pass", "fail", "skip", "timeout", "crash", "missing")
    return " ".join(f"{counts[k]} {k}" for k in order if counts.get(k)) or "-"


def line(g):
    return (f"- {g['category']}: `{g['test']}`: base {g['base']}, series {g['series']}"
            + (f" ({'; '.join(g['why'])})" if g.get("why") else ""))


def render(cmp, base, series):
    md = ["# Upstream's mm selftests (run_vmtests.sh): base 7.3.4 against the series", "",
          "One boot per kernel, the same configuration, one `run_vmtests.sh -t <category>` "
          "at a time under a time limit. A regression is a test that passes on base and not "
          "on the series.", "",
          "| category | base | series |", "|---|---|---|"]
    md += comparison_table(cmp["rows"], "category", cell)
    md += verdict_sections(cmp, line)
    for what, run in (("base", base), ("series", series)):
        if not run["done"]:
            md.append(f"\nThe {what} guest stopped before its init finished.")
    return "\n".join(md) + "\n"


def main(argv):
    if len(argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    prefix, base_run, series_run = argv[1], argv[2], argv[3]
    base, series = load(base_run), load(series_run)
    for run, what in ((series_run, series), (base_run, base)):
        if not what["categories"]:
            print(f"vmtests_report: {run}: no vmtests section (did the guest boot?)", file=sys.stderr)
            return 2
    cmp = compare(base, series)
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    Path(prefix + ".md").write_text(render(cmp, base, series))
    Path(prefix + ".json").write_text(json.dumps(cmp, indent=1) + "\n")
    passed = sum(r["series"].get("pass", 0) for r in cmp["rows"])
    failed = len(cmp["regressions"]) + len(cmp["new_reports"]) + (0 if series["done"] else 1)
    for g in cmp["regressions"]:
        print(f"vmtests: regression: {g['category']}: {g['test']}: base {g['base']}, series {g['series']}")
    for r in cmp["new_reports"]:
        print(f"vmtests: kernel report on the series only: {r.strip()}")
    print(f"vmtests: {len(cmp['base_failures'])} tests fail on base and series alike ({prefix}.md)")
    print(f"vmtests: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
