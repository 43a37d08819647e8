#!/usr/bin/env python3
"""Turn a guest run (build/results/<run>/) into per-suite results.

Splits results.txt into kunit/<suite>.ktap, kselftest/<name>.log and
dmesg.txt, counts the test cases of each suite, scans the kernel log for
reports (BUG, WARNING, KASAN, lockdep, list corruption, RCU stalls, ...),
writes summary.txt and summary.json, prints the summary and, last, the
line "N passed, N failed". Exits 1 if anything failed.
"""

import json
import re
import sys
from pathlib import Path

RESULT = re.compile(r"^(?P<indent>\s*)(?P<not>not )?ok (?P<num>\d+)\s*(?:- )?(?P<desc>[^#]*?)\s*(?:#\s*(?P<directive>.*))?$")
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


def count_ktap(lines, depth_indent):
    """Results at one nesting level: list of (name, verdict)."""
    cases = []
    for line in lines:
        m = RESULT.match(line)
        if not m or len(m.group("indent").expandtabs()) != depth_indent:
            continue
        directive = (m.group("directive") or "").upper()
        if directive.startswith("SKIP"):
            verdict = "skip"
        elif m.group("not"):
            verdict = "fail"
        else:
            verdict = "pass"
        cases.append((m.group("desc") or m.group("num"), verdict))
    return cases


def kunit_suite(name, lines):
    cases = count_ktap(lines, 4)
    if not cases:
        cases = count_ktap(lines, 0)
    return cases


def kselftest(name, lines, rc):
    cases = count_ktap(lines, 0)
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


def main():
    run = Path(sys.argv[1])
    expected = sys.argv[2].split(",") if len(sys.argv) > 2 and sys.argv[2] else []
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
            suites.append(("kunit", name, kunit_suite(name, lines)))
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
    reports = []
    for line in (console + "\n" + dmesg).splitlines():
        if REPORT.search(line) and line not in reports:
            reports.append(line)
    suites.append(("kernel", "log", [("no reports in the kernel log", "fail" if reports else "pass")]))

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
