#!/usr/bin/env python3
"""Turn a guest run (build/results/<run>/) into per-suite results.

Splits results.txt into kunit/<suite>.ktap, kselftest/<name>.log and
dmesg.txt, counts the test cases of each suite, scans the kernel log for
reports (BUG, WARNING, KASAN, lockdep, list corruption, RCU stalls, ...),
writes summary.txt and summary.json, prints the summary and, last, the
line "N passed, N failed". Exits 1 if anything failed.

With --boot-rc, a failed boot (scripts/boot.sh) fails the run; with
--host, the host checks (scripts/host_check.sh) count in the line too.
"""

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

RESULT = re.compile(r"^(?P<indent>\s*)(?P<not>not )?ok (?P<num>\d+)\s*(?:- )?(?P<desc>[^#]*?)\s*(?:#\s*(?P<directive>.*))?$")
VERSION = re.compile(r"^\s*K?TAP version \d+\s*$")
PLAN = re.compile(r"^\s*1\.\.(\d+)\s*(?:#.*)?$")
SUBTEST = re.compile(r"^\s*# Subtest: (.*)$")
BAIL = re.compile(r"^\s*Bail out!")
SECTION = re.compile(r"^@@@ (begin|end) (\S+) (\S+)(?: rc=(-?\d+))?")
RETRY = re.compile(r"^@@@ retry (\S+) (\S+)")

# Kernel log lines that fail a run whatever the tests said.
REPORTS = [
    r"BUG:",
    r"WARNING:",
    r"kernel BUG at",
    r"Oops",
    r"general protection fault",
    r"Kernel panic",
    r"KASAN",
    r"UBSAN",
    r"possible circular locking dependency",
    r"possible recursive locking",
    r"inconsistent lock state",
    r"suspicious RCU usage",
    r"list_add corruption",
    r"list_del corruption",
    r"rcu: INFO: .* detected stalls",
    r"detected stall",
    r"refcount_t: ",
    r"Out of memory: Killed process",
    r"hung_task: blocked",
    r"blocked for more than",
]
REPORT = re.compile("|".join(REPORTS))
TIMESTAMP = re.compile(r"^\s*\[\s*\d+\.\d+\]\s?")


def kernel_reports(text):
    """The lines of a kernel log that REPORTS match, first occurrence each.

    A report whose first words are cut across two lines ("BU" then "G: KASAN
    ...", or "possible circular" then "locking dependency"), as when another
    writer's bytes land in the middle of a console line, counts too: the
    line and the next one (without its timestamp) are read as one, with and
    without a space between them, and a match across the cut reports both
    lines joined.
    """
    reports = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if REPORT.search(line):
            found = line
        elif i + 1 < len(lines):
            found = None
            rest = TIMESTAMP.sub("", lines[i + 1])
            for joined in (line + rest, line + " " + rest):
                m = REPORT.search(joined)
                if m and m.start() < len(line) < m.end():
                    found = line + " | " + lines[i + 1]
                    break
        else:
            found = None
        if found and found not in reports:
            reports.append(found)
    return reports


def report_key(report):
    """A report without its timestamp and its task/CPU/pid specifics, for
    comparing the reports of two runs (make vmtests, make fstests: base and
    series)."""
    r = re.sub(r"^\s*\[\s*\d+\.\d+\]\s*", "", report)
    return re.sub(r"\b(pid|PID|CPU|cpu)[: ]\s*\d+|\b0x[0-9a-f]+\b|\+0x[0-9a-f]+/0x[0-9a-f]+", "", r)


def comparison_table(rows, key, cell):
    """The rows of a base-against-series table (one per row[key], each side's
    counts through cell()) and its line of totals (make vmtests, make fstests)."""
    md = []
    tot = {"base": {}, "series": {}}
    for r in rows:
        md.append(f"| {r[key]} | {cell(r['base'])} | {cell(r['series'])} |")
        for k in tot:
            for st, n in r[k].items():
                tot[k][st] = tot[k].get(st, 0) + n
    md.append(f"| **all** | {cell(tot['base'])} | {cell(tot['series'])} |")
    return md


def verdict_sections(cmp, line, notrun=None):
    """The verdict of a base-against-series comparison (make vmtests, make
    fstests): regressions, the base's failures, what fails on base only,
    tests not run (when the suite has them), and the kernel log reports of
    the series that base did not have. line() renders one test."""
    md = ["", f"## Regressions: {len(cmp['regressions'])}", ""]
    md += [line(g) for g in cmp["regressions"]]
    md += ["", f"## Failing on both (the base's): {len(cmp['base_failures'])}", ""]
    md += [line(g) for g in cmp["base_failures"]]
    if cmp["fixed"]:
        md += ["", f"## Failing on base only: {len(cmp['fixed'])}", ""]
        md += [line(g) for g in cmp["fixed"]]
    if notrun is not None:
        md += ["", f"## Not run: {len(notrun)}", ""]
        md += [line(g) for g in notrun]
    md += ["", f"## Kernel log reports on the series and not on base: {len(cmp['new_reports'])}", ""]
    md += [f"- `{r.strip()}`" for r in cmp["new_reports"]]
    if cmp["base_reports"]:
        md += ["", f"Reports on base too ({len(cmp['base_reports'])}): "
               + "; ".join(f"`{report_key(r).strip()}`" for r in cmp["base_reports"][:5])]
    return md


def split_sections(text):
    """Map (kind, name) -> (lines, rc or None if the section never ended).

    A section the guest ran again ("@@@ retry <kind> <name>", see
    scripts/guest/tests.txt) keeps its first run as ("retried", name).
    """
    sections, current, lines = {}, None, []
    for line in text.splitlines():
        r = RETRY.match(line)
        if r and (r.group(1), r.group(2)) in sections:
            sections[("retried", r.group(2))] = sections.pop((r.group(1), r.group(2)))
            continue
        m = SECTION.match(line)
        if m and m.group(1) == "begin":
            if current:
                sections[current] = (lines, None)
            current, lines = (m.group(2), m.group(3)), []
        elif m and m.group(1) == "end" and current == (m.group(2), m.group(3)):
            sections[current] = (lines, int(m.group(4) or 0))
            current, lines = None, []
        elif current:
            lines.append(line)
    if current:
        sections[current] = (lines, None)
    return sections


class Level:
    """A list of KTAP results at one indentation: from its version (or plan,
    or first result) line to its parent's result line."""

    def __init__(self, indent):
        self.indent, self.name, self.plan = indent, None, None
        self.cases = []  # Case
        self.orphans = []  # deeper Levels whose parent never printed its result
        self.orphaned = False
        self.bail = []  # "Bail out!" lines

    def orphan_cases(self):
        """The cases of the orphans directly below this list."""
        return [c for o in self.orphans for c in o.cases]

    def problems(self, plan=True):
        """What fails the list, beyond its own cases and its orphans' cases."""
        out = list(self.bail)
        for o in self.orphans:
            of = f" of {o.plan}" if o.plan is not None else ""
            out.append(f"{o.name or 'subtests'}: {len(o.cases)}{of} results, then no result "
                       f"line (crashed or cut short)")
            out += o.problems(plan)
            out += [c.name for c in o.orphan_cases() if c.verdict() == "fail"]
        if (plan and self.plan is not None and len(self.cases) != self.plan
                and not self.orphans and not self.orphaned):
            out.append(f"{self.name or 'plan'}: planned {self.plan} results, got {len(self.cases)}")
        return out

    def failures(self):
        return self.problems() + [c.name for c in self.cases + self.orphan_cases()
                                  if c.verdict() == "fail"]


class Case:
    """A result line, with the subtest list printed before it."""

    def __init__(self, m, subtests):
        self.name, self.subtests = m.group("desc") or m.group("num"), subtests
        directive = (m.group("directive") or "").upper()
        if directive.startswith("SKIP"):
            self.own = "skip"  # KTAP: "ok" or "not ok" with SKIP is a skip
        elif m.group("not"):
            self.own = "fail"  # also "not ok ... # TODO": KTAP does not recognise TODO
        else:
            self.own = "pass"

    def verdict(self):
        """KTAP: "If one of the subtests fail ... the parent test should also
        fail": a nested failure fails the case whatever its own line says; a
        skipped subtest does not change it."""
        if any(level.failures() for level in self.subtests):
            return "fail"
        return self.own


def parse_ktap(lines):
    """The KTAP (kselftest: TAP 13) results of a section: its top-level Levels.

    Nesting follows the indentation (KTAP: a subtest's lines are indented;
    KUnit indents by four). Lines that are neither version, plan, result nor
    "Bail out!" lines are diagnostic or unknown and count for nothing
    ("# ok 1 ..." is a diagnostic line). A list whose parent's result line
    never comes (a crashed or cut-short suite) is an orphan of the list
    above it; a plan that its results do not match is a failure.
    """
    roots, stack = [], []

    def push(indent):
        level = Level(indent)
        if not stack:
            roots.append(level)
        stack.append(level)
        return level

    def close(indent):
        """Pop the lists deeper than indent. The shallowest of them is the
        subtest list of the result line to come; each deeper one is an
        orphan of the one above it."""
        popped = []
        while stack and stack[-1].indent > indent:
            popped.append(stack.pop())
        for deeper, above in zip(popped, popped[1:]):
            deeper.orphaned = True
            above.orphans.append(deeper)
        return popped[-1:]

    def orphan(indent):
        """The lists deeper than indent end without their parent's result."""
        for level in close(indent):
            if stack:
                level.orphaned = True
                stack[-1].orphans.append(level)

    for raw in lines:
        line = raw.expandtabs().rstrip()
        indent = len(line) - len(line.lstrip())
        if VERSION.match(line):
            orphan(indent)
            top = stack[-1] if stack else None
            if top and top.indent == indent:
                if not top.cases and top.plan is None:
                    continue  # a repeated version line
                orphan(indent - 1)  # a second list at this depth
            push(indent)
            continue
        m = SUBTEST.match(line)
        if m and stack and stack[-1].indent == indent:
            stack[-1].name = stack[-1].name or m.group(1).strip()
            continue
        m = PLAN.match(line)
        if m:
            orphan(indent)
            level = stack[-1] if stack and stack[-1].indent == indent else push(indent)
            level.plan = int(m.group(1))
            continue
        if BAIL.match(line):
            (stack[-1] if stack else push(indent)).bail.append(line.strip())
            continue
        m = RESULT.match(line)
        if not m:
            continue
        subtests = close(indent)
        level = stack[-1] if stack and stack[-1].indent == indent else push(indent)
        if subtests and subtests[0].name is None:
            subtests[0].name = m.group("desc") or None
        level.cases.append(Case(m, subtests))
    orphan(-1)
    return roots


def kunit_suite(lines, rc):
    """The test cases of a KUnit suite's debugfs results: the subtests of its
    result line ("ok 1 <suite>"), each case counted once (a parameterised
    case fails if one of its parameters does)."""
    cases = []
    for root in parse_ktap(lines):
        for suite in root.cases:
            if not suite.subtests:
                cases.append((suite.name, suite.verdict()))
            elif suite.own == "fail" and not any(l.failures() for l in suite.subtests):
                cases.append((f"{suite.name}: not ok, and none of its cases failed", "fail"))
            for level in suite.subtests:
                cases += [(c.name, c.verdict()) for c in level.cases]
                cases += [(p, "fail") for p in level.problems()]
        # A suite that crashed: its cases so far, and why it failed.
        cases += [(c.name, c.verdict()) for c in root.orphan_cases()]
        cases += [(p, "fail") for p in root.problems()]
    if rc is None:
        cases.append(("did not finish (guest died)", "fail"))
    elif rc != 0:
        cases.append((f"the guest's setup of this run failed (rc={rc})", "fail"))
    elif not cases:
        cases.append(("no test results", "fail"))
    return cases


def kselftest(name, lines, rc):
    """The results of a kselftest program: its top-level results (a nested
    failure fails its parent), its plan, and its exit status."""
    roots = parse_ktap(lines)
    cases = [(c.name, c.verdict()) for root in roots for c in root.cases]
    cases += [(c.name, "fail") for root in roots for c in root.orphan_cases()
              if c.verdict() == "fail"]
    # A test that died or timed out ends short of its plan: that says it once.
    ended = rc is not None and rc not in (124, 137)
    cases += [(p, "fail") for root in roots for p in root.problems(plan=ended)]
    if rc is None:
        cases.append(("did not finish (guest died)", "fail"))
    elif rc in (124, 137):
        cases.append((f"timed out (rc={rc})", "fail"))
    elif rc == 4 and not cases:
        cases.append(("whole program skipped (KSFT_SKIP)", "skip"))
    elif rc not in (0, 4) and not any(v == "fail" for _, v in cases):
        cases.append((f"exited with rc={rc}", "fail"))
    elif rc == 0 and not cases:
        cases.append(("exited 0", "pass"))
    return cases


def host_checks(path):
    """The TAP of scripts/host_check.sh (pytest and shellcheck on the host)."""
    if not path.exists():
        return [(f"no results in {path} (scripts/host_check.sh did not finish)", "fail")]
    lines = path.read_text(errors="replace").splitlines()
    if any(re.match(r"1\.\.0 # SKIP", l) for l in lines):
        return [("host checks skipped", "skip")]
    return kselftest("host", lines, 0 if any(l.startswith("# host-check:") for l in lines) else None)


def main():
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("run", type=Path, help="the guest run: build/results/<run>/")
    args.add_argument("expected", nargs="?", default="",
                      help="the kselftests it must report, comma-separated")
    args.add_argument("--boot-rc", type=int,
                      help="scripts/boot.sh's exit status (default: its boot.rc in RUN)")
    args.add_argument("--host", type=Path,
                      help="also count the host checks: scripts/host_check.sh's TAP file")
    args = args.parse_args()
    run = args.run
    expected = args.expected.split(",") if args.expected else []
    # boot.sh clears the run and leaves boot.rc in it before anything else:
    # a failed boot without one (it died before that) left an older run,
    # whose results must not pass for its own.
    if args.boot_rc and not (run / "boot.rc").exists() and run.exists():
        stale = run.with_name(run.name + ".stale")
        shutil.rmtree(stale, ignore_errors=True)
        run.rename(stale)
    run.mkdir(parents=True, exist_ok=True)
    text = (run / "results.txt").read_text(errors="replace") if (run / "results.txt").exists() else ""
    console = (run / "console.log").read_text(errors="replace") if (run / "console.log").exists() else ""
    sections = split_sections(text)

    suites = []  # (kind, name, cases)
    retried = []  # (name, failures of the first run)
    for (kind, name), (lines, rc) in sections.items():
        if kind == "kunit":
            out = run / "kunit" / f"{name}.ktap"
            out.parent.mkdir(exist_ok=True)
            out.write_text("\n".join(lines) + "\n")
            suites.append(("kunit", name, kunit_suite(lines, rc)))
        elif kind == "kselftest":
            out = run / "kselftest" / f"{name}.log"
            out.parent.mkdir(exist_ok=True)
            out.write_text("\n".join(lines) + "\n")
            suites.append(("kselftest", name, kselftest(name, lines, rc)))
        elif kind == "retried":
            out = run / "kselftest" / f"{name}.first-run.log"
            out.parent.mkdir(exist_ok=True)
            out.write_text("\n".join(lines) + "\n")
            retried.append((name, [n for n, v in kselftest(name, lines, rc) if v == "fail"]))
        elif kind == "dmesg":
            (run / "dmesg.txt").write_text("\n".join(lines) + "\n")
        else:
            (run / f"{kind}-{name}.txt").write_text("\n".join(lines) + "\n")

    ran = {name for kind, name, _ in suites if kind == "kselftest"}
    for name in expected:
        if name not in ran:
            suites.append(("kselftest", name, [("never ran", "fail")]))
    if not any(kind == "kunit" for kind, _, _ in suites):
        suites.append(("kunit", "(none)", [("no KUnit results from the guest", "fail")]))

    # The kernel log: the console (complete, even if the guest died) and
    # the guest's dmesg (all levels).
    dmesg = (run / "dmesg.txt").read_text(errors="replace") if (run / "dmesg.txt").exists() else ""
    reports = kernel_reports(console)
    reports += [r for r in kernel_reports(dmesg) if r not in reports]
    if (run / "console.log").exists():
        suites.append(("kernel", "log", [("no reports in the kernel log", "fail" if reports else "pass")]))
    else:
        suites.append(("kernel", "log", [("no kernel log (console.log)", "fail")]))

    # The boot itself: boot.sh's status (a guest that died or timed out, or
    # a failure before the guest started: then RUN holds nothing older, as
    # boot.sh clears it first), and the guest's init reaching its end.
    boot_rc = args.boot_rc
    if boot_rc is None and (run / "boot.rc").exists():
        boot_rc = int((run / "boot.rc").read_text().strip() or 1)
    boot = []
    if boot_rc:
        boot.append((f"scripts/boot.sh failed (rc={boot_rc}); its error is above", "fail"))
    if not re.search(r"^@@@ done", text, re.M):
        boot.append(("the guest's init did not finish (no '@@@ done' in results.txt)", "fail"))
    if boot:
        suites.insert(0, ("boot", "guest", boot))
    if args.host:
        suites.append(("host", "make host-check", host_checks(args.host)))

    rows, total = [], {"pass": 0, "fail": 0, "skip": 0}
    for kind, name, cases in suites:
        c = {v: sum(1 for _, x in cases if x == v) for v in ("pass", "fail", "skip")}
        for v in total:
            total[v] += c[v]
        rows.append({"kind": kind, "suite": name, "passed": c["pass"], "failed": c["fail"],
                     "skipped": c["skip"], "failures": [n for n, x in cases if x == "fail"]})

    lines = []
    for r in rows:
        lines.append(f"{r['kind']:9} {r['suite']:34} {r['passed']:4} passed {r['failed']:3} failed {r['skipped']:3} skipped")
        for f in r["failures"][:10]:
            lines.append(f"{'':9}   FAIL: {f}")
    for name, failures in retried:
        lines.append(f"retried   {name}: its first run failed ({', '.join(failures)}); "
                     f"the rerun above counts (see scripts/guest/tests.txt)")
    if reports:
        lines.append("kernel log reports (first 20 lines; full log in console.log):")
        lines += ["  | " + r for r in reports[:20]]
    guest = (run / "guest.txt").read_text().strip() if (run / "guest.txt").exists() else ""
    lines.append(f"guest: {guest}; skipped: {total['skip']}")
    lines.append(f"{total['pass']} passed, {total['fail']} failed")
    summary = "\n".join(lines) + "\n"
    (run / "summary.txt").write_text(summary)
    (run / "summary.json").write_text(json.dumps({"guest": guest, "suites": rows, "reports": reports,
                                                  "retried": [{"suite": n, "first_run_failures": f}
                                                              for n, f in retried],
                                                  "passed": total["pass"], "failed": total["fail"],
                                                  "skipped": total["skip"]}, indent=1) + "\n")
    sys.stdout.write(summary)
    return 1 if total["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
