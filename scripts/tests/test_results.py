"""scripts/results.py: what `make check`'s "N passed, N failed" means.

The KTAP rules the parser follows, from Documentation/dev-tools/ktap.rst
(Linux 7.3.4):
- A nested "not ok" fails its parent, whatever the parent's own line says
  ("If one of the subtests fail ... the parent test should also fail").
- "ok" or "not ok" with a SKIP directive is a skip; a skipped subtest does
  not change its parent ("Skipped tests do not affect the result of the
  parent test"); TODO is not recognised, so "not ok ... # TODO" fails.
- Lines other than version, plan and result lines are diagnostic or unknown
  lines: they count for nothing ("# SKIP ...", "# ok 1 ..." included).
- A list of results that stops short of its plan, or whose parent's result
  line never comes, belongs to a suite that crashed or was cut short: a
  failure. So is a suite with no results, a section the guest never ended,
  a kselftest that was expected and never ran, and "Bail out!".
- The kernel log fails the run on any report (BUG, WARNING, KASAN, ...),
  also when the report's first words are cut across two lines.

Fixtures (fixtures/runs/, fixtures/ktap/): trimmed from this project's runs
(build/results/final-check2, drain-oldcookie, old-kernel-run1), and the
examples of ktap.rst verbatim. summary.expected is what results.py printed
for the run before the parser was reworked: passing output is unchanged.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(SCRIPTS))
import results  # noqa: E402

EXPECTED = "transhuge-stress,unqueue_bench,rcu_free_test"


def ktap(name):
    return (FIXTURES / "ktap" / name).read_text().splitlines()


def counts(cases):
    return {v: sum(1 for _, x in cases if x == v) for v in ("pass", "fail", "skip")}


def verdicts(cases):
    return dict(cases)


def run_fixture(tmp_path, name):
    """A copy of fixtures/runs/NAME (results.py writes into its run)."""
    run = tmp_path / name
    shutil.copytree(FIXTURES / "runs" / name, run)
    return run


def results_py(*args):
    """scripts/results.py as `make check` runs it: (exit status, stdout)."""
    p = subprocess.run([sys.executable, str(SCRIPTS / "results.py"), *map(str, args)],
                       capture_output=True, text=True, timeout=60)
    assert not p.stderr, p.stderr
    return p.returncode, p.stdout


def closing(out):
    return out.splitlines()[-1]


def section(kind, name, lines, rc=0):
    end = [] if rc is None else [f"@@@ end {kind} {name} rc={rc}"]
    return [f"@@@ begin {kind} {name}"] + list(lines) + end


def make_run(tmp_path, *sections, console="", done=True):
    """A run directory from sections (lists of lines), as the guest writes it."""
    run = tmp_path / "run"
    run.mkdir()
    lines = [l for s in sections for l in s] + (["@@@ done"] if done else [])
    (run / "results.txt").write_text("\n".join(lines) + "\n")
    (run / "console.log").write_text(console)
    (run / "guest.txt").write_text("accel=tcg smp=4 mem=2G config=test mode=check\n")
    return run


KUNIT_OK = section("kunit", "rust_mm_deferred_split", [
    "KTAP version 1", "1..1", "    KTAP version 1", "    # Subtest: rust_mm_deferred_split",
    "    1..1", "    ok 1 unqueue_every_order", "ok 1 rust_mm_deferred_split"])


# Real runs: output unchanged, verdicts right.

@pytest.mark.parametrize("name,expected", [("pass", EXPECTED), ("kunit-not-ok", "rcu_free_test-quick"),
                                           ("kasan", EXPECTED)])
def test_real_run_output_unchanged(tmp_path, name, expected):
    run = run_fixture(tmp_path, name)
    rc, out = results_py(run, expected)
    assert out == (run / "summary.expected").read_text()
    assert rc == (0 if name == "pass" else 1)
    assert (run / "summary.txt").read_text() == out


def test_real_passing_run(tmp_path):
    rc, out = results_py(run_fixture(tmp_path, "pass"), EXPECTED)
    assert (rc, closing(out)) == (0, "37 passed, 0 failed")


def test_real_kunit_not_ok(tmp_path):
    rc, out = results_py(run_fixture(tmp_path, "kunit-not-ok"), "rcu_free_test-quick")
    assert rc == 1
    assert "FAIL: drain_all_with_a_normal_grace_period_in_flight" in out
    assert closing(out) == "11 passed, 1 failed"


def test_real_kasan_report_fails_a_passing_run(tmp_path):
    rc, out = results_py(run_fixture(tmp_path, "kasan"), EXPECTED)
    assert rc == 1
    assert "BUG: KASAN: use-after-free in _copy_to_iter" in out
    assert closing(out) == "36 passed, 1 failed"


def test_real_run_cut_short(tmp_path):
    """The guest died inside rcu_free_test (a hang: nothing in the log)."""
    rc, out = results_py(run_fixture(tmp_path, "unended"), EXPECTED)
    assert rc == 1
    assert "FAIL: did not finish (guest died)" in out
    assert "FAIL: the guest's init did not finish (no '@@@ done' in results.txt)" in out
    assert closing(out) == "32 passed, 2 failed"


# KTAP, from the specification's examples.

def test_spec_two_nested():
    cases = results.kunit_suite(ktap("spec-two-nested.ktap"), 0)
    assert verdicts(cases) == {"test_1": "pass", "test_2": "fail"}


def test_spec_example():
    """ktap.rst's "Example KTAP output": example_test_2 passes with a
    skipped subtest; example_test_3 fails through its test_2."""
    roots = results.parse_ktap(ktap("spec-example.ktap"))
    main = roots[0].cases[0]
    assert (main.name, main.verdict()) == ("main_test", "fail")
    sub = {c.name: c.verdict() for c in main.subtests[0].cases}
    assert sub == {"example_test_1": "pass", "example_test_2": "pass", "example_test_3": "fail"}
    assert counts(results.kunit_suite(ktap("spec-example.ktap"), 0)) == {"pass": 2, "fail": 1, "skip": 0}


def test_real_suite_passes():
    cases = results.kunit_suite(ktap("filemap_nolock.ktap"), 0)
    assert counts(cases) == {"pass": 9, "fail": 0, "skip": 0}


# The cases of the issue.

def test_crashed_suite():
    """Three of nine cases, then nothing: not even "ok 1 filemap_nolock"."""
    cases = results.kunit_suite(ktap("crashed-suite.ktap"), 0)
    assert counts(cases) == {"pass": 3, "fail": 1, "skip": 0}
    [(why, _)] = [c for c in cases if c[1] == "fail"]
    assert why == "filemap_nolock: 3 of 9 results, then no result line (crashed or cut short)"


def test_crashed_inside_a_parameterised_case():
    cases = results.kunit_suite(ktap("crashed-in-case.ktap"), 0)
    fails = [n for n, v in cases if v == "fail"]
    assert counts(cases)["pass"] == 3
    assert "filemap_nolock_read_readahead: 1 results, then no result line (crashed or cut short)" in fails
    assert any(f.startswith("filemap_nolock: 3 of 9 results") for f in fails)


def test_crashed_suite_fails_the_run(tmp_path):
    run = make_run(tmp_path, section("kunit", "filemap_nolock", ktap("crashed-suite.ktap")))
    rc, out = results_py(run)
    assert rc == 1
    assert "FAIL: filemap_nolock: 3 of 9 results" in out


def test_nested_not_ok_under_an_ok_parent():
    """A parameter failed; its case's own line (wrongly) says ok."""
    cases = results.kunit_suite(ktap("nested-not-ok.ktap"), 0)
    assert verdicts(cases)["filemap_nolock_read_hit"] == "fail"
    assert counts(cases) == {"pass": 8, "fail": 1, "skip": 0}


def test_nested_not_ok_fails_the_run(tmp_path):
    run = make_run(tmp_path, section("kunit", "filemap_nolock", ktap("nested-not-ok.ktap")))
    rc, out = results_py(run)
    assert (rc, closing(out)) == (1, "9 passed, 1 failed")


def test_skip_in_subtest():
    cases = verdicts(results.kunit_suite(ktap("skip-in-subtest.ktap"), 0))
    assert cases == {
        "param_one_skipped": "pass",  # a skipped parameter does not skip its case
        "case_skipped": "skip",
        "case_not_ok_skipped": "skip",  # "not ok ... # SKIP" is a skip
        "param_skip_and_fail": "fail",  # a skipped parameter hides no failure
        "param_all_skipped": "skip",
    }


def test_suite_not_ok_with_passing_cases():
    cases = results.kunit_suite(ktap("suite-not-ok.ktap"), 0)
    assert counts(cases) == {"pass": 2, "fail": 1, "skip": 0}


def test_empty_kunit_suite_fails():
    assert results.kunit_suite([], 0) == [("no test results", "fail")]


def test_kunit_section_never_ended():
    cases = results.kunit_suite(ktap("filemap_nolock.ktap")[:10], None)
    assert ("did not finish (guest died)", "fail") in cases


def test_kunit_section_with_failed_setup():
    """A re-run whose guest setup failed (rc=1: its cgroup could not be made,
    or the test it exists for was skipped) fails, its passing cases kept."""
    cases = results.kunit_suite(ktap("filemap_nolock.ktap"), 1)
    assert ("the guest's setup of this run failed (rc=1)", "fail") in cases
    assert counts(cases)["pass"] == counts(results.kunit_suite(ktap("filemap_nolock.ktap"), 0))["pass"]


def test_missing_kselftest(tmp_path):
    run = make_run(tmp_path, KUNIT_OK, section("kselftest", "cow", ["TAP version 13", "1..1", "ok 1 a"]))
    rc, out = results_py(run, "cow,migration")
    assert rc == 1
    assert "kselftest migration" in out and "FAIL: never ran" in out
    assert closing(out) == "3 passed, 1 failed"


def test_no_kunit_at_all(tmp_path):
    run = make_run(tmp_path, section("kselftest", "cow", ["TAP version 13", "1..1", "ok 1 a"]))
    rc, out = results_py(run, "cow")
    assert rc == 1 and "FAIL: no KUnit results from the guest" in out


def test_todo_is_a_failure():
    assert results.kunit_suite(["KTAP version 1", "1..1", "not ok 1 t # TODO later"], 0) == [("t", "fail")]


# kselftest TAP 13.

TAP_OK = ["TAP version 13", "1..3", "ok 1 a", "ok 2 b # SKIP no THP", "ok 3 c"]


@pytest.mark.parametrize("lines,rc,expected", [
    (TAP_OK, 0, {"pass": 2, "fail": 0, "skip": 1}),
    # Plan not met, exit 0: results missing.
    (TAP_OK[:4], 0, {"pass": 1, "fail": 1, "skip": 1}),
    # Plan at the end (TAP allows it).
    (["TAP version 13", "ok 1 a", "ok 2 b", "1..2"], 0, {"pass": 2, "fail": 0, "skip": 0}),
    (["TAP version 13", "1..3", "ok 1 a", "Bail out! mmap failed"], 1, {"pass": 1, "fail": 2, "skip": 0}),
    # A "# ok" line is a diagnostic line; the nested not ok fails its parent.
    (["TAP version 13", "1..2", "  KTAP version 1", "  1..2", "  ok 1 sub_a", "  not ok 2 sub_b",
      "ok 1 parent", "# ok 3 diagnostic", "ok 2 second"], 0, {"pass": 1, "fail": 1, "skip": 0}),
    # Timed out: said once, not also as a short plan.
    (TAP_OK[:3], 124, {"pass": 1, "fail": 1, "skip": 0}),
    (TAP_OK[:3], None, {"pass": 1, "fail": 1, "skip": 0}),
    (["TAP version 13", "1..0 # SKIP no hugetlb"], 4, {"pass": 0, "fail": 0, "skip": 1}),
    (TAP_OK, 1, {"pass": 2, "fail": 1, "skip": 1}),
    (["not a TAP line"], 0, {"pass": 1, "fail": 0, "skip": 0}),
])
def test_kselftest(lines, rc, expected):
    assert counts(results.kselftest("t", lines, rc)) == expected


def test_real_kselftest():
    text = (FIXTURES / "runs" / "pass" / "results.txt").read_text()
    lines = results.split_sections(text)[("kselftest", "rcu_free_test")][0]
    assert counts(results.kselftest("rcu_free_test", lines, 0)) == {"pass": 9, "fail": 0, "skip": 0}


# The kernel log.

def test_report_split_across_lines():
    log = "[    5.100000] BU\n[    5.100001] G: Bad page state in process cow  pfn:0x1234\n"
    assert results.kernel_reports(log) == [
        "[    5.100000] BU | [    5.100001] G: Bad page state in process cow  pfn:0x1234"]


def test_report_split_at_a_space():
    log = "[ 1.0] WARNING: possible circular\r\n[ 1.0] locking dependency detected\r\n"
    assert len(results.kernel_reports(log)) == 1  # WARNING: on the first line
    log = "[ 1.0] ======\n[ 1.0] possible circular\n[ 1.0] locking dependency detected\n"
    assert results.kernel_reports(log) == ["[ 1.0] possible circular | [ 1.0] locking dependency detected"]


def test_no_report_in_real_passing_logs():
    run = FIXTURES / "runs" / "pass"
    assert results.kernel_reports((run / "console.log").read_text()) == []
    assert results.kernel_reports((run / "results.txt").read_text()) == []


def test_report_in_dmesg_only(tmp_path):
    run = make_run(tmp_path, KUNIT_OK, section("dmesg", "boot", ["[ 9.0] BUG: Bad page state in process x"]))
    rc, out = results_py(run)
    assert rc == 1 and "| [ 9.0] BUG: Bad page state" in out


def test_report_split_fails_the_run(tmp_path):
    run = make_run(tmp_path, KUNIT_OK, console="[ 5.1] kernel BU\n[ 5.1] G at mm/folio.c:12!\n")
    rc, out = results_py(run)
    assert (rc, closing(out)) == (1, "1 passed, 1 failed")


# The boot and the host checks.

def test_boot_failure_fails_a_passing_run(tmp_path):
    """The guest ran (boot.sh left boot.rc), then boot.sh failed."""
    run = run_fixture(tmp_path, "pass")
    (run / "boot.rc").write_text("1\n")
    rc, out = results_py(run, EXPECTED, "--boot-rc", 1)
    assert rc == 1
    assert "FAIL: scripts/boot.sh failed (rc=1); its error is above" in out
    assert closing(out) == "37 passed, 1 failed"


def test_boot_rc_file(tmp_path):
    run = run_fixture(tmp_path, "pass")
    (run / "boot.rc").write_text("1\n")
    assert results_py(run, EXPECTED)[0] == 1
    (run / "boot.rc").write_text("0\n")
    assert results_py(run, EXPECTED)[0] == 0


def test_no_run_at_all(tmp_path):
    """boot.sh failed before the guest started: nothing to read, no crash."""
    rc, out = results_py(tmp_path / "never", "cow", "--boot-rc", 1)
    assert rc == 1
    assert "FAIL: no kernel log (console.log)" in out
    assert closing(out) == "0 passed, 5 failed"


HOST_TAP = "TAP version 13\n1..2\nok 1 pytest a\nok 2 shellcheck b\n# host-check: 2 passed, 0 failed\n"


def test_host_checks_count(tmp_path):
    host = tmp_path / "host.tap"
    host.write_text(HOST_TAP)
    rc, out = results_py(run_fixture(tmp_path, "pass"), EXPECTED, "--host", host)
    assert (rc, closing(out)) == (0, "39 passed, 0 failed")
    assert "host      make host-check" in out
    host.write_text(HOST_TAP.replace("ok 2", "not ok 2"))
    rc, out = results_py(run_fixture(tmp_path / "b", "pass"), EXPECTED, "--host", host)
    assert (rc, closing(out)) == (1, "38 passed, 1 failed")


def test_host_checks_missing_or_cut_short(tmp_path):
    rc, out = results_py(run_fixture(tmp_path, "pass"), EXPECTED, "--host", tmp_path / "none")
    assert rc == 1 and "scripts/host_check.sh did not finish" in out
    host = tmp_path / "host.tap"
    host.write_text("\n".join(HOST_TAP.splitlines()[:3]) + "\n")
    rc, out = results_py(run_fixture(tmp_path / "b", "pass"), EXPECTED, "--host", host)
    assert rc == 1 and "did not finish" in out


def test_failed_boot_never_reads_an_older_run(tmp_path):
    """boot.sh died before it cleared the run (no boot.rc): the passing run
    there is older than this boot and must not count."""
    run = run_fixture(tmp_path, "pass")
    rc, out = results_py(run, EXPECTED, "--boot-rc", 1)
    assert rc == 1
    assert "37 passed" not in out and "passed, 0 failed" not in out
    assert closing(out) == "0 passed, 7 failed"
    assert (tmp_path / "pass.stale" / "results.txt").exists()
