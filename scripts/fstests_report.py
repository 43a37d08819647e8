#!/usr/bin/env python3
"""The verdict of `make fstests` (scripts/fstests.sh): fstests on the base
kernel and on the series, compared test by test on every file system.

  fstests_report.py OUT_PREFIX BASE_RUN SERIES_RUN

Each RUN is a build/results/fstests-<variant> directory of a MODE=fstests
boot (scripts/guest/fstests): guest.conf (what the host asked for: the file
systems, FSTESTS_LIST_<fs> the tests of each), and per file system <fs>/,
fstests' RESULT_BASE: result.xml (check -R xunit, rewritten before every
test), check.output (what check printed), timeouts (the tests the guest
killed at FSTESTS_TEST_LIMIT); with the boot's results.txt (a section
"fstests <fs>" per file system, "fstests setup", the kernel log), console.log
and boot.rc.

A test's state on a file system is pass, fail, notrun (with fstests'
reason), timeout (killed at the test limit, or running when the boot hit
its limit), crash (running when the guest stopped) or missing (never
reached). The xunit report says it where it has the test; check's output
where it has not (a check that was killed); the test that check had
started and not finished is the one that timed out or crashed.

The series fails when a test that passes on base does not pass on it (a
regression, named), when a test not run on base fails on it, or when its
kernel log has a report (results.py's list) that the base's has not. Tests
failing on both are the base's, listed with the reason; tests not run are
listed with fstests' reason. Writes OUT_PREFIX.md and OUT_PREFIX.json and
prints the verdict last: "fstests: N passed, N failed": the (file system,
test) pairs that pass on the series, and its regressions and new reports.

Only the standard library and results.py (split_sections, kernel_reports).
"""

import json
import re
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import (comparison_table, kernel_reports, report_key as strip,  # noqa: E402
                     split_sections, verdict_sections)

# A test line of check's output: the test, padded, then what came of it.
TEST_LINE = re.compile(r"^(?P<test>[a-z0-9]+/\d{3}[A-Za-z0-9-]*)(?:\s+(?P<rest>.*?))?\s*$")
# A finished test's time: " 7s" or, after the last run's, " 6s ...  7s".
PASSED = re.compile(r"(?:^|\s)\d+s$")
FAILED = re.compile(r"output mismatch|\[failed|_check_|\[dumped core\]|no qualified output|no such test")
TIMEOUT_RC = (124, 137)
GOOD = ("pass", "notrun")
STATES = ("pass", "fail", "notrun", "timeout", "crash", "missing")
WORDS = {"pass": "passed", "fail": "failed", "notrun": "not run", "timeout": "timed out",
         "crash": "crashed", "missing": "missing"}


def read_conf(run):
    """guest.conf: KEY='value' lines (scripts/fstests.sh writes them)."""
    conf = {}
    path = Path(run) / "guest.conf"
    if not path.exists():
        return conf
    for line in path.read_text().splitlines():
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
        if m:
            words = shlex.split(m.group(2))
            conf[m.group(1)] = words[0] if len(words) == 1 else " ".join(words)
    return conf


def diff_lines(text, n=3):
    """The first changed lines of a unified diff (not its headers)."""
    out = []
    for line in text.splitlines():
        if line.startswith(("---", "+++", "@@")):
            continue
        if line.startswith(("-", "+")) and line[1:].strip():
            out.append(line.strip())
        if len(out) == n:
            break
    return out


def parse_xunit(path):
    """{test: (state, [why])} of a result.xml; {} if there is none. A file
    ElementTree cannot read (a stray control character) is read with
    regular expressions."""
    if not path.exists():
        return {}
    text = path.read_text(errors="replace")
    tests = {}
    try:
        root = ET.fromstring(text)
        cases = [(c.get("name"), c) for c in root.iter("testcase")]
    except ET.ParseError:
        cases = None
    if cases is not None:
        for name, c in cases:
            skipped, failure = c.find("skipped"), c.find("failure")
            if failure is not None:
                why = [failure.get("message") or "failed, reason unknown"]
                err = c.find("system-err")
                why += diff_lines(err.text or "") if err is not None else []
                log = c.find("kernel-log")
                if log is not None:
                    why += kernel_reports(log.text or "")[:2]
                tests[name] = ("fail", why)
            elif skipped is not None:
                tests[name] = ("notrun", [skipped.get("message") or "not run"])
            else:
                tests[name] = ("pass", [])
        return tests
    for m in re.finditer(r'<testcase [^>]*name="([^"]+)"[^>]*>(.*?)</testcase>', text, re.S):
        body = m.group(2)
        f = re.search(r'<failure message="([^"]*)"', body)
        s = re.search(r'<skipped(?: message="([^"]*)")?', body)
        if f:
            tests[m.group(1)] = ("fail", [unescape(f.group(1))])
        elif s:
            tests[m.group(1)] = ("notrun", [unescape(s.group(1) or "not run")])
        else:
            tests[m.group(1)] = ("pass", [])
    return tests


def unescape(s):
    for a, b in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'"), ("&amp;", "&")):
        s = s.replace(a, b)
    return s


def parse_output(lines):
    """check's output: ([(test, state or None, [why])] in the order run,
    None for the test that started and never finished)."""
    tests = []
    for line in lines:
        if line.startswith("    ") and tests and tests[-1][1] == "fail":
            d = line.strip()
            if d[:1] in "+-" and not d.startswith(("---", "+++")) and len(tests[-1][2]) < 4:
                tests[-1][2].append(d)
            continue
        m = TEST_LINE.match(line)
        if not m:
            continue
        rest = (m.group("rest") or "").strip()
        if rest.startswith("[not run]"):
            tests.append((m.group("test"), "notrun", [rest[len("[not run]"):].strip() or "not run"]))
        elif rest.startswith("[expunged]"):
            tests.append((m.group("test"), "excluded", []))
        elif FAILED.search(rest):
            tests.append((m.group("test"), "fail", [rest]))
        elif PASSED.search(rest) and not rest.endswith("..."):
            tests.append((m.group("test"), "pass", []))
        else:
            tests.append((m.group("test"), None, []))
    return tests


def load(run):
    """The states of one variant's run: {fs: {test: (state, [why])}}, with
    the file systems' check rc, setup errors and kernel reports."""
    run = Path(run)
    conf = read_conf(run)
    text = (run / "results.txt").read_text(errors="replace") if (run / "results.txt").exists() else ""
    sections = split_sections(text)
    qemu_rc = (run / "qemu.rc").read_text().strip() if (run / "qemu.rc").exists() else ""
    killed = qemu_rc.isdigit() and int(qemu_rc) in TIMEOUT_RC
    fss = conf.get("FSTESTS_FS", "").split() or sorted(
        n for k, n in sections if k == "fstests" and n != "setup")
    filesystems, found = {}, False
    for fs in fss:
        expected = conf.get(f"FSTESTS_LIST_{fs}", "").split()
        res = run / fs
        xunit = parse_xunit(res / "result.xml")
        if (res / "check.output").exists():
            out_lines = (res / "check.output").read_text(errors="replace").splitlines()
        else:
            out_lines = sections.get(("fstests", fs), ([], None))[0]
        output = parse_output(out_lines)
        limit = conf.get("FSTESTS_TEST_LIMIT", "?")
        timeouts = {}
        if (res / "timeouts").exists():
            for line in (res / "timeouts").read_text().splitlines():
                w = line.split()
                if w:
                    timeouts[w[0]] = f"killed after {w[1] if len(w) > 1 else limit}s (FSTESTS_TEST_LIMIT)"
        rc = sections.get(("fstests", fs), ([], None))[1]
        found = found or bool(xunit or output or ("fstests", fs) in sections)
        states = {}
        for name, state, why in output:
            if state is None:
                # Started and never finished: check or the guest was stopped.
                if killed:
                    state, why = "timeout", ["running when the boot hit its time limit (FSTESTS_TIMEOUT)"]
                else:
                    state, why = "crash", ["running when the guest stopped (console.log)"]
            states[name] = (state, why)
        for name, sw in xunit.items():
            if states.get(name, ("",))[0] == "fail" and sw[0] == "fail":
                # check's output has the diff lines too; the xunit report
                # has the kernel log's.
                sw = ("fail", sw[1] + [w for w in states[name][1][1:] if w not in sw[1]][:3])
            states[name] = sw
        for name, why in timeouts.items():
            states[name] = ("timeout", [why])
        never = ["never reached"]
        if (run / "stopped").exists():
            never = [f"never reached: {(run / 'stopped').read_text().strip()}"]
        elif not output and rc:
            # check did not start (the section says why: mkfs failed).
            said = [l for l in sections.get(("fstests", fs), ([], None))[0] if l.strip()]
            never = [f"check did not run (rc={rc}){': ' + said[0] if said else ''}"]
        for name in expected:
            states.setdefault(name, ("missing", never))
        states = {n: s for n, s in states.items() if s[0] != "excluded"}
        order = expected + [n for n in states if n not in expected]
        filesystems[fs] = dict(rc=rc, tests={n: states[n] for n in order if n in states})
    setup = sections.get(("fstests", "setup"))
    log = sections.get(("dmesg", "boot"), ([], None))[0]
    if not log and (run / "console.log").exists():
        log = (run / "console.log").read_text(errors="replace").splitlines()
    return dict(conf=conf, filesystems=filesystems, found=found, killed=killed,
                setup_rc=setup[1] if setup else None, setup_lines=setup[0] if setup else [],
                reports=kernel_reports("\n".join(log)), done="@@@ done" in text,
                kernel=next((l.split(": ", 1)[1] for l in sections.get(("info", "system"), ([], 0))[0]
                             if l.startswith("kernel: ")), ""))


def compare(base, series):
    rows, regressions, base_failures, fixed, notrun = [], [], [], [], []
    # The file systems the series run was asked for (its tests not reached
    # are in it, as missing); one the base run had and this series run was
    # not asked for (FSTESTS_FS= of another run) is not compared.
    fss = list(dict.fromkeys(list(base["filesystems"]) + list(series["filesystems"])))
    if series["conf"].get("FSTESTS_FS"):
        fss = [fs for fs in fss if fs in series["filesystems"]]
    base_only = [fs for fs in base["filesystems"] if fs not in fss]
    for fs in fss:
        b = base["filesystems"].get(fs, {}).get("tests", {})
        s = series["filesystems"].get(fs, {}).get("tests", {})
        row = dict(fs=fs, base={}, series={})
        for n in dict.fromkeys(list(b) + list(s)):
            bs, bw = b.get(n, ("missing", ["not in the base run"]))
            ss, sw = s.get(n, ("missing", ["not in the series run"]))
            row["base"][bs] = row["base"].get(bs, 0) + 1
            row["series"][ss] = row["series"].get(ss, 0) + 1
            g = dict(fs=fs, test=n, base=bs, series=ss)
            if (bs == "pass" and ss != "pass") or (bs == "notrun" and ss not in GOOD):
                regressions.append(dict(g, why=sw))
            elif bs not in GOOD and ss not in GOOD:
                base_failures.append(dict(g, why=bw, series_why=sw if sw != bw else []))
            elif bs not in GOOD:
                fixed.append(dict(g, why=bw))
            if "notrun" in (bs, ss):
                notrun.append(dict(g, why=bw if bs == "notrun" else sw,
                                   series_why=sw if bs == ss == "notrun" and sw != bw else []))
        rows.append(row)
    base_reports = {strip(r) for r in base["reports"]}
    new_reports = [r for r in series["reports"] if strip(r) not in base_reports]
    return dict(rows=rows, regressions=regressions, base_failures=base_failures, fixed=fixed,
                notrun=notrun, new_reports=new_reports, base_reports=base["reports"],
                series_reports=series["reports"],
                tests={fs: per_test(base, series, fs) for fs in fss},
                kernels=dict(base=base["kernel"], series=series["kernel"]), base_only=base_only,
                done=dict(base=base["done"], series=series["done"]))


def per_test(base, series, fs):
    """{test: {base: {state, why}, series: {state, why}}} of one file system."""
    b = base["filesystems"].get(fs, {}).get("tests", {})
    s = series["filesystems"].get(fs, {}).get("tests", {})
    return {n: {k: dict(state=v[n][0], why=v[n][1]) if n in v else None for k, v in (("base", b), ("series", s))}
            for n in dict.fromkeys(list(b) + list(s))}


def cell(counts):
    return ", ".join(f"{counts[k]} {WORDS[k]}" for k in STATES if counts.get(k)) or "-"


def line(g, why_key="why"):
    why = g.get(why_key) or []
    text = f"- {g['fs']}: `{g['test']}`: base {WORDS[g['base']]}, series {WORDS[g['series']]}"
    if why:
        text += f" ({'; '.join(why)})"
    if g.get("series_why"):
        text += f" (series: {'; '.join(g['series_why'])})"
    return text


def render(cmp, base, series):
    md = ["# fstests: base 7.3.4 against the series", "",
          "One boot per kernel, the same configuration (`CONFIG=fstests`), fstests' `check` on each "
          "file system in turn, in the host's root over 9p. A regression is a test that passes on "
          "base and not on the series (or fails there where base did not run it).", "",
          "| file system | base | series |", "|---|---|---|"]
    md += comparison_table(cmp["rows"], "fs", cell)
    if cmp["kernels"]["base"] or cmp["kernels"]["series"]:
        md += ["", f"Kernels: base `{cmp['kernels']['base']}`, series `{cmp['kernels']['series']}`."]
    if cmp["base_only"]:
        md += ["", "Run on base only, not compared (the series run was not asked for them): "
               + ", ".join(cmp["base_only"]) + "."]
    md += verdict_sections(cmp, line, notrun=cmp["notrun"])
    for what, run in (("base", base), ("series", series)):
        if not run["done"]:
            md.append(f"\nThe {what} guest stopped before its init finished"
                      + (" (killed at FSTESTS_TIMEOUT)." if run["killed"] else "."))
    return "\n".join(md) + "\n"


def main(argv):
    if len(argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    prefix, base_run, series_run = argv[1], argv[2], argv[3]
    base, series = load(base_run), load(series_run)
    for run, what in ((base_run, base), (series_run, series)):
        if what["setup_rc"]:
            print(f"fstests_report: {run}: the guest could not set up fstests:", file=sys.stderr)
            for l in what["setup_lines"][:15]:
                print(f"  | {l}", file=sys.stderr)
            return 2
        if not Path(run).is_dir():
            print(f"fstests_report: no {run} (FSTESTS_VARIANTS left that kernel out, and it has no "
                  "earlier run to compare with)", file=sys.stderr)
            return 2
        if not what["found"]:
            print(f"fstests_report: {run}: no fstests results (did the guest boot? "
                  f"{'no results.txt' if not (Path(run) / 'results.txt').exists() else 'see console.log'})",
                  file=sys.stderr)
            return 2
    cmp = compare(base, series)
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    Path(prefix + ".md").write_text(render(cmp, base, series))
    Path(prefix + ".json").write_text(json.dumps(cmp, indent=1) + "\n")
    passed = sum(r["series"].get("pass", 0) for r in cmp["rows"])
    failed = len(cmp["regressions"]) + len(cmp["new_reports"]) + (0 if series["done"] else 1)
    for g in cmp["regressions"]:
        print(f"fstests: regression: {g['fs']}: {g['test']}: base {WORDS[g['base']]}, series "
              f"{WORDS[g['series']]}" + (f" ({'; '.join(g['why'])})" if g["why"] else ""))
    for r in cmp["new_reports"]:
        print(f"fstests: kernel report on the series only: {r.strip()}")
    if not series["done"]:
        print("fstests: the series guest stopped before its init finished")
    print(f"fstests: {len(cmp['base_failures'])} tests fail on base and series alike, "
          f"{len(cmp['notrun'])} not run ({prefix}.md)")
    print(f"fstests: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
