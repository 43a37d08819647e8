"""scripts/vmtests_report.py and scripts/vmtests.sh: the verdict of `make
vmtests` (upstream's run_vmtests.sh, base against series).

The runs are written here in the format of a MODE=vmtests boot: a
"vmtests <category>" section per category holding what run_vmtests.sh
printed (its TAP_PREFIX "# " on everything but its own result lines).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))
import vmtests_report  # noqa: E402


def banner(cmd):
    sep = "-" * len(f"running {cmd}")
    return [f"# {sep}", f"# running {cmd}", f"# {sep}"]


def category(name, tests, rc=0, cut=None):
    """tests: [(cmd, state, output lines)]; cut: a command that printed its
    banner and never finished (the category's limit, or a crash)."""
    out = [f"@@@ begin vmtests {name}", "TAP version 13"]
    for i, (cmd, state, lines) in enumerate(tests, 1):
        out += banner(cmd) + [f"# {x}" for x in lines]
        pretty = cmd[2:] if cmd.startswith("./") else cmd
        if state == "pass":
            out += ["# [PASS]", f"ok {i} {pretty}"]
        elif state == "skip":
            out += ["# [SKIP]", f"ok {i} {pretty} # SKIP"]
        else:
            out += ["# [FAIL]", f"not ok {i} {pretty} # exit=1"]
    if cut:
        out += banner(cut) + ["# still going"]
    out.append(f"@@@ end vmtests {name} rc={rc}")
    return out


def write_run(path, sections, dmesg=(), done=True):
    path.mkdir(parents=True)
    lines = ["@@@ begin info system", "kernel: 7.3.4", "@@@ end info system rc=0"]
    for s in sections:
        lines += s
    lines += ["@@@ begin dmesg boot", *dmesg, "@@@ end dmesg boot rc=0"]
    if done:
        lines.append("@@@ done")
    (path / "results.txt").write_text("\n".join(lines) + "\n")
    return path


def report(tmp_path, base, series):
    prefix = tmp_path / "out" / "vmtests"
    p = subprocess.run([sys.executable, str(SCRIPTS / "vmtests_report.py"), str(prefix), str(base), str(series)],
                       capture_output=True, text=True)
    data = json.loads((prefix.parent / "vmtests.json").read_text()) if p.returncode in (0, 1) else None
    return p, data


def test_same_results_pass(tmp_path):
    cats = [category("mmap", [("./map_populate", "pass", []), ("./droppable", "skip", ["not supported"])]),
            category("ksm", [("./ksm_tests -M -p 10", "fail", ["merge failed: error 22"])], rc=1)]
    p, data = report(tmp_path, write_run(tmp_path / "b", cats), write_run(tmp_path / "s", cats))
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.splitlines()[-1] == "vmtests: 1 passed, 0 failed"
    # Failing on both: the base's, with the line that says why.
    assert [(g["category"], g["test"]) for g in data["base_failures"]] == [("ksm", "ksm_tests -M -p 10")]
    assert data["base_failures"][0]["why"] == ["merge failed: error 22"]
    md = (tmp_path / "out" / "vmtests.md").read_text()
    assert "| mmap | 1 pass 1 skip | 1 pass 1 skip |" in md


def test_regression_fails_and_is_named(tmp_path):
    base = write_run(tmp_path / "b", [category("cow", [("./cow", "pass", []), ("./cow -x", "pass", [])])])
    series = write_run(tmp_path / "s", [category("cow", [("./cow", "fail", ["not ok 12 wrong data"]),
                                                         ("./cow -x", "pass", [])], rc=1)])
    p, data = report(tmp_path, base, series)
    assert p.returncode == 1
    assert "vmtests: regression: cow: cow: base pass, series fail" in p.stdout
    assert p.stdout.splitlines()[-1] == "vmtests: 1 passed, 1 failed"
    assert data["regressions"][0]["why"] == ["not ok 12 wrong data"]


def test_timeout_and_never_reached_are_regressions(tmp_path):
    tests = [("./khugepaged", "pass", []), ("./split_huge_page_test", "pass", []), ("./migration", "pass", [])]
    base = write_run(tmp_path / "b", [category("thp", tests)])
    # The series' run stops in split_huge_page_test at the limit: that test
    # timed out, migration never ran.
    series = write_run(tmp_path / "s", [category("thp", tests[:1], rc=124, cut="./split_huge_page_test")])
    p, data = report(tmp_path, base, series)
    assert p.returncode == 1
    states = {g["test"]: g["series"] for g in data["regressions"]}
    assert states == {"split_huge_page_test": "timeout", "migration": "missing"}


def test_guest_stopping_midway_is_a_crash(tmp_path):
    base = write_run(tmp_path / "b", [category("rmap", [("./rmap", "pass", [])])])
    s = category("rmap", [], cut="./rmap")[:-1]  # no end line: the guest died
    series = write_run(tmp_path / "s", [s], done=False)
    p, data = report(tmp_path, base, series)
    assert p.returncode == 1
    assert data["regressions"][0]["series"] == "crash"
    assert "The series guest stopped before its init finished." in (tmp_path / "out" / "vmtests.md").read_text()


def test_kernel_report_only_on_series_fails(tmp_path):
    cats = [category("mmap", [("./map_populate", "pass", [])])]
    warn = "[   12.5] WARNING: CPU: 1 PID: 77 at mm/filemap.c:123 filemap_read+0x1a/0x200"
    p, data = report(tmp_path, write_run(tmp_path / "b", cats), write_run(tmp_path / "s", cats, dmesg=[warn]))
    assert p.returncode == 1
    assert len(data["new_reports"]) == 1
    # The same report on base (other pid, CPU and offsets) is the base's.
    base_warn = "[    9.0] WARNING: CPU: 0 PID: 12 at mm/filemap.c:123 filemap_read+0x1b/0x200"
    p, data = report(tmp_path, write_run(tmp_path / "b2", cats, dmesg=[base_warn]),
                     write_run(tmp_path / "s2", cats, dmesg=[warn]))
    assert p.returncode == 0, p.stdout
    assert data["new_reports"] == []


def test_series_skipping_what_base_ran_is_no_regression_but_failing_what_base_skipped_is(tmp_path):
    base = write_run(tmp_path / "b", [category("pkey", [("./protection_keys_64", "skip", [])])])
    series = write_run(tmp_path / "s", [category("pkey", [("./protection_keys_64", "fail", [])], rc=1)])
    p, _ = report(tmp_path, base, series)
    assert p.returncode == 1


def test_repeated_names_are_kept_apart(tmp_path):
    lines = category("thp", [("./khugepaged", "pass", []), ("./khugepaged", "fail", [])], rc=1)
    tests = vmtests_report.parse_category(lines[1:-1], 1)
    assert [t[0] for t in tests] == ["khugepaged", "khugepaged #2"]


def test_mktemp_names_are_the_same_test(tmp_path):
    """run_vmtests.sh names some tests by a mktemp directory ("split_huge_page_test
    /tmp/xfs_dir_xIGMGP"), another in each boot: the same test, not a regression."""
    base = write_run(tmp_path / "b", [category("thp", [
        ("./split_huge_page_test /tmp/xfs_dir_xIGMGP", "pass", []),
        ("./khugepaged all:file /tmp/xfs_dir_xIGMGP", "pass", [])])])
    series = write_run(tmp_path / "s", [category("thp", [
        ("./split_huge_page_test /tmp/xfs_dir_rwwTEa", "pass", []),
        ("./khugepaged all:file /tmp/xfs_dir_rwwTEa", "fail", [])], rc=1)])
    p, data = report(tmp_path, base, series)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "regression: thp: khugepaged all:file /tmp/xfs_dir_XXXXXX: base pass, series fail" in p.stdout
    assert not any("split_huge_page_test" in l for l in p.stdout.splitlines() if "regression" in l)
    assert "vmtests: 1 passed, 1 failed" in p.stdout


def test_no_sections_is_an_error(tmp_path):
    base = write_run(tmp_path / "b", [category("mmap", [("./map_populate", "pass", [])])])
    empty = write_run(tmp_path / "s", [])
    p, _ = report(tmp_path, base, empty)
    assert p.returncode not in (0, 1) and "no vmtests section" in p.stderr


@pytest.mark.parametrize("env,msg", [
    ({"VMTESTS": "mmap,nosuch"}, "VMTESTS: no category 'nosuch'"),
    ({"VMTESTS_LIMIT": "ten"}, "VMTESTS_LIMIT must be a number"),
    ({"VMTESTS_VARIANTS": "base,other"}, "VMTESTS_VARIANTS: unknown 'other'"),
])
def test_bad_input_is_refused_before_any_build(tmp_path, env, msg):
    """Bad input gets a clear error before the tree, a build or a boot."""
    build = tmp_path / "build"
    tree = build / "tree" / "tools" / "testing" / "selftests" / "mm"
    tree.mkdir(parents=True)
    (build / "tree" / ".assembled").write_text("x\n")
    (tree / "run_vmtests.sh").write_text("usage() {\n\tcat <<EOF\n- mmap\n\tmmap tests\n- thp\nEOF\n}\n")
    stub = tmp_path / "bin"
    stub.mkdir()
    # tree.sh would assemble the tree: stand in for it with a script that
    # only says it ran.
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    for f in ("lib.sh", "vmtests.sh"):
        (scripts / f).write_text((SCRIPTS / f).read_text())
    (scripts / "configs").symlink_to(SCRIPTS / "configs")
    for f in ("tree.sh", "image.sh", "config.sh", "build.sh", "boot.sh"):
        (scripts / f).write_text("#!/bin/sh\necho ran >>\"$BUILD/ran\"\n")
        (scripts / f).chmod(0o755)
    import os
    e = dict(os.environ, BUILD=str(build), **env)
    p = subprocess.run(["bash", str(scripts / "vmtests.sh")], capture_output=True, text=True, env=e)
    assert p.returncode != 0
    assert msg in p.stderr + p.stdout
    assert not (build / "ran").exists() or (build / "ran").read_text().count("ran") <= 1
