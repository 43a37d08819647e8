"""`make matrix` on the host (scripts/matrix.py, scripts/matrix.sh): the
option parser, the entry verdicts and the result table. No kernel is
built: the .configs, logs and guest summaries are written here.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SCRIPTS))
import matrix  # noqa: E402

SERIES_CONFIG = """\
CONFIG_RUST=y
CONFIG_KUNIT=y
CONFIG_RUST_MM_KUNIT_TEST=y
CONFIG_DEFERRED_SPLIT_RUST=y
# CONFIG_DEFERRED_SPLIT_RUST_KUNIT_TEST is not set
CONFIG_DEFERRED_SPLIT_KUNIT_TEST=y
CONFIG_PAGE_RCU_FREE=y
CONFIG_PAGE_RCU_FREE_KUNIT_TEST=y
CONFIG_FILEMAP_NOLOCK_KUNIT_TEST=y
CONFIG_NR_CPUS=1
CONFIG_CMDLINE="a b"
"""


def test_series_options_come_from_the_patches():
    opts = matrix.series_options()
    for o in ("DEFERRED_SPLIT_RUST", "PAGE_RCU_FREE", "FILEMAP_NOLOCK_KUNIT_TEST",
              "PAGE_RCU_FREE_KUNIT_TEST", "DEFERRED_SPLIT_RUST_KUNIT_TEST", "RUST_MM_KUNIT_TEST",
              "PAGE_RCU_FREE_RUST", "DEFERRED_SPLIT_KUNIT_TEST"):
        assert o in opts
    assert "TRANSPARENT_HUGEPAGE" not in opts  # upstream's, only touched


def test_series_options_of_a_patch(tmp_path):
    (tmp_path / "series").write_text("b.patch\n# comment\na.patch\n")
    (tmp_path / "a.patch").write_text("+++ b/mm/Kconfig\n+config ZZZ\n+\tbool\n config OLD\n")
    (tmp_path / "b.patch").write_text("+++ b/mm/Kconfig\n+config YYY\n-config GONE\n")
    assert matrix.series_options(tmp_path) == ["YYY", "ZZZ"]


def test_parse_config():
    c = matrix.parse_config(SERIES_CONFIG)
    assert c["RUST"] == "y"
    assert c["DEFERRED_SPLIT_RUST_KUNIT_TEST"] == "n"
    assert c["NR_CPUS"] == "1"
    assert c["CMDLINE"] == "a b"
    assert matrix.option_state(c, ["PAGE_RCU_FREE", "ABSENT"]) == {"PAGE_RCU_FREE": "y", "ABSENT": "n"}


def test_check_wanted():
    c = matrix.parse_config(SERIES_CONFIG)
    assert matrix.check_wanted(c, "RUST=y PAGE_RCU_FREE=y NR_CPUS=1 NUMA=n") == []
    assert matrix.check_wanted(c, "CONFIG_NUMA=y DEFERRED_SPLIT_RUST_KUNIT_TEST=y") == [
        "NUMA=y (got n)", "DEFERRED_SPLIT_RUST_KUNIT_TEST=y (got n)"]


def test_expected_suites():
    c = matrix.parse_config(SERIES_CONFIG)
    assert matrix.expected_suites(c) == ["rust_mm_folio", "rust_mm_folio_batch", "rust_mm_folio_list",
                                         "rust_mm_list_lru", "rust_mm_lruvec", "deferred_split",
                                         "rcu_free", "filemap_nolock"]
    c["KUNIT"] = "n"
    assert matrix.expected_suites(c) == []


def test_count_warnings_splits_the_series_files():
    log = "\n".join([
        "  CC      mm/filemap.o",
        "/work/main/build/tree/mm/filemap.c:10:5: warning: unused variable 'x' [-Wunused-variable]",
        "../../fs/ext4/inode.c:3:1: warning: something upstream",
        "../../fs/ext4/inode.c:3:1: warning: something upstream",  # the same line twice: once
        "warning: unused import: `Foo`",
        "  --> mm/rcu_free.rs:12:5",
    ])
    total, ours = matrix.count_warnings(log, {"mm/filemap.c", "mm/rcu_free.rs"})
    assert total == 3
    assert len(ours) == 2


def test_new_warnings_ignore_line_numbers():
    base = "mm/filemap.c:10:5: warning: old one\nmm/swap.c:3:1: warning: shared\n"
    series = ("mm/filemap.c:30:5: warning: old one\nmm/swap.c:9:1: warning: shared\n"
              "mm/swap.c:11:1: warning: shared\nmm/filemap.c:2931:7: warning: new one [-Wfoo]\n")
    assert matrix.new_warnings(base, series) == [
        ("mm/filemap.c", "new one [-Wfoo]", 1), ("mm/swap.c", "shared", 1)]
    assert matrix.new_warnings(series, base) == []


def test_new_warnings_count_sparse_errors():
    base = "mm/swap.c:3:1: warning: shared\n"
    series = base + "mm/filemap.c:12:9: error: incompatible types in comparison expression\n"
    assert matrix.new_warnings(base, series) == [
        ("mm/filemap.c", "error: incompatible types in comparison expression", 1)]


# The first w1-sparse run (2026-12-03) passed with 0 warnings: 7.3's make
# had turned sparse off (Debian 12's 0.6.4 fails scripts/checker-valid.sh)
# and said so in one line, which nothing read.
CHECKER_OFF_LOG = """\
make[2]: Entering directory '/work/main/build/obj-perf-llvm22'
  CC      mm/filemap.s
  CC      mm/swap.s
make[2]: Leaving directory '/work/main/build/obj-perf-llvm22'
make[2]: Entering directory '/work/main/build/obj-perf-llvm22'
/work/main/build/tree/Makefile:1311: C=2 specified, but sparse is not available or not up to date
  DESCEND objtool
  RUSTC L rust/kernel.o
"""


def test_w1_sparse_fails_when_make_turned_sparse_off():
    cov = matrix.coverage(CHECKER_OFF_LOG, ["mm/filemap", "mm/swap"])
    assert cov["checker_off"] and cov["w1"] == 2 and cov["checked"] == 0
    why = matrix.coverage_failures({"series": cov})
    assert why == ["series: make turned sparse off (its scripts/checker-valid.sh rejected it)"]


def test_w1_sparse_fails_when_a_file_is_not_covered():
    log = "  CC      mm/filemap.s\n  CHECK   mm/filemap.c\n  CHECK   mm/swap.c\n"
    cov = matrix.coverage(log, ["mm/filemap", "mm/swap"])
    assert not cov["checker_off"] and cov["checked"] == 2
    assert matrix.coverage_failures({"base": cov}) == [
        "base: W=1 compiled 1 of 2 files (not mm/swap)"]
    full = log + "  CC      mm/swap.s\n"
    assert matrix.coverage_failures({"base": matrix.coverage(full, ["mm/filemap", "mm/swap"])}) == []


CONSOLE = """\
[    0.3] kcsan: enabled early
[   10.1] ==================================================================
[   10.2] BUG: KCSAN: data-race in filemap_read_nolock / folio_split
[   10.3] read to 0xffff of 8 bytes by task 1 on cpu 0:
[   10.4]  filemap_read_nolock+0x120/0x300
[   11.0] ==================================================================
[   12.0] BUG: KCSAN: data-race in tick_sched_do_timer / tick_nohz_idle_stop_tick
[   12.1]  tick_sched_do_timer+0x10/0x20
[   13.0] BUG: KCSAN: data-race in tick_sched_do_timer / tick_nohz_idle_stop_tick
[   14.0] WARNING: CPU: 1 PID: 1 at kernel/foo.c:1 foo+0x1/0x2
[   14.1]  foo+0x1/0x2
[   14.2] ---[ end trace 0000000000000000 ]---
"""


def test_kcsan_races_split_series_and_elsewhere():
    races = matrix.kcsan_races(CONSOLE, {"filemap_read_nolock", "8rcu_free"})
    assert dict(races["series"]) == {"data-race in filemap_read_nolock / folio_split": 1}
    assert dict(races["elsewhere"]) == {"data-race in tick_sched_do_timer / tick_nohz_idle_stop_tick": 2}


# Two reports of the kcsan entry (2026-12-02), timestamps cut: upstream's
# snapshot_page() (a plain memcpy() of struct page for /proc/kpageflags)
# against a marked refcount update in a function the series changes, and
# the lockless copy against write() with the series' data_race() taken out.
KCSAN_REAL = """\
==================================================================
BUG: KCSAN: data-race in shmem_file_read_iter / snapshot_page

read-write (marked) to 0xffffea0001278034 of 4 bytes by task 1124 on cpu 0:
 shmem_file_read_iter+0x4ea/0x710
 vfs_read+0x24e/0x280

read to 0xffffea0001278000 of 128 bytes by task 1125 on cpu 2:
 snapshot_page+0x153/0x250
 stable_page_flags+0x48/0x3a0
 kpage_read+0x4bf/0x550

Reported by Kernel Concurrency Sanitizer on:
CPU: 2 UID: 0 PID: 1125 Comm: pagecache_split Tainted: G                 N  7.3.4 #2
==================================================================
==================================================================
BUG: KCSAN: data-race in _copy_to_iter / copy_folio_from_iter_atomic

write to 0xffff8880059fe007 of 1 bytes by task 1137 on cpu 0:
 copy_folio_from_iter_atomic+0x1e4/0xb70
 generic_perform_write+0x29c/0x3e0
 shmem_file_write_iter+0x7b/0xa0

read to 0xffff8880059fe000 of 4096 bytes by task 1134 on cpu 2:
 _copy_to_iter+0xeb/0xa30
 copy_page_to_iter+0x126/0x180
 shmem_file_read_iter+0x4a7/0x710

Reported by Kernel Concurrency Sanitizer on:
==================================================================
==================================================================
BUG: KCSAN: data-race in filemap_read_nolock / folio_split

race at unknown origin, with read to 0xffff of 8 bytes by task 1 on cpu 0:
 filemap_read_nolock+0x120/0x300

value changed: 0x1 -> 0x2
==================================================================
"""


def test_kcsan_races_go_by_the_plain_access():
    funcs = {"shmem_file_read_iter", "filemap_read_nolock"}
    races = matrix.kcsan_races(KCSAN_REAL, funcs)
    # The plain access is upstream's snapshot_page(): not the series' to mark.
    assert dict(races["elsewhere"]) == {"data-race in shmem_file_read_iter / snapshot_page": 1}
    # The plain read's stack names a series function (shmem_file_read_iter);
    # a report of unknown origin has one access, plain, in the series.
    assert dict(races["series"]) == {
        "data-race in _copy_to_iter / copy_folio_from_iter_atomic": 1,
        "data-race in filemap_read_nolock / folio_split": 1}


def test_kcsan_races_in_functions_the_series_only_changes():
    # shmem_file_read_iter() is upstream's, changed by the series; its own
    # copy_page_to_iter() races with write() in 7.3.4 too: "changed", for a
    # reader to place, not a failure; filemap_read_nolock() is the series'.
    funcs = {"shmem_file_read_iter", "filemap_read_nolock"}
    races = matrix.kcsan_races(KCSAN_REAL, funcs, added={"filemap_read_nolock"})
    assert dict(races["changed"]) == {"data-race in _copy_to_iter / copy_folio_from_iter_atomic": 1}
    assert dict(races["series"]) == {"data-race in filemap_read_nolock / folio_split": 1}
    assert sum(races["elsewhere"].values()) == 1


def test_added_functions_are_a_subset():
    added, every = matrix.series_functions(added_only=True), matrix.series_functions()
    assert "filemap_read_nolock" in added and added < every
    assert "shmem_file_read_iter" in every and "shmem_file_read_iter" not in added


def test_kcsan_accesses_parse_marked_and_plain():
    sides = matrix.kcsan_accesses(KCSAN_REAL.split("=\n=")[0])
    assert [(m, s.split("+")[0].strip()) for m, s in sides] == [
        (True, "shmem_file_read_iter"), (False, "snapshot_page")]


def test_in_series_matches_rust_mangled_names():
    funcs = {"8rcu_free", "filemap_read"}
    assert matrix.in_series("_RNvNtCs1234_8rcu_free3pcp4lock+0x1/0x2", funcs)
    assert matrix.in_series(" filemap_read+0x1/0x2", funcs)
    assert not matrix.in_series(" filemap_read_folio+0x1/0x2", funcs)


def record(tmp_path, *args):
    out = tmp_path / "e.json"
    argv = [sys.executable, str(SCRIPTS / "matrix.py"), "record", str(out), *args]
    p = subprocess.run(argv, capture_output=True, text=True)
    return p.returncode, json.loads(out.read_text())


def test_record_fails_an_entry_that_compiled_the_series_out(tmp_path):
    cfg = tmp_path / "config"
    cfg.write_text("CONFIG_RUST=n\n")
    rc, e = record(tmp_path, "--name", "x", "--config", str(cfg))
    assert rc == 1 and e["status"] == "fail"
    assert "compiled out" in e["reasons"][0]
    rc, e = record(tmp_path, "--name", "x", "--config", str(cfg), "--series-off", "--want", "RUST=n")
    assert rc == 0 and e["status"] == "pass" and e["series_on"] == []


def test_record_needs_the_c_fallback(tmp_path):
    cfg = tmp_path / "config"
    cfg.write_text("CONFIG_RUST=n\n")
    nm = tmp_path / "nm"
    nm.write_text("0000 T folio_batch_unqueue_deferred_split\n0010 t helper\n")
    fm = tmp_path / "nm-filemap"
    fm.write_text("0000 T filemap_read\n")
    base = ["--name", "i386", "--config", str(cfg), "--series-off", "--nm", f"mm/folio.o={nm}",
            "--nm", f"mm/filemap.o={fm}"]
    rc, e = record(tmp_path, *base, "--need-symbol", "mm/folio.o:folio_batch_unqueue_deferred_split",
                   "--need-symbol", "!mm/filemap.o:filemap_read_nolock")
    assert rc == 0, e
    rc, e = record(tmp_path, *base, "--need-symbol", "mm/folio.o:other")
    assert rc == 1 and "other not built in mm/folio.o" in e["reasons"]


def guest_run(tmp_path, suites, reports=(), console=""):
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    (run / "summary.json").write_text(json.dumps({
        "suites": suites + [{"kind": "kernel", "suite": "log", "passed": 0, "failed": int(bool(reports)),
                             "skipped": 0, "failures": []}],
        "reports": list(reports), "passed": 1, "failed": int(bool(reports)), "skipped": 0}))
    (run / "console.log").write_text(console)
    return run


def suite(name, kind="kunit", failed=0):
    return {"kind": kind, "suite": name, "passed": 1, "failed": failed, "skipped": 0,
            "failures": ["case"] * failed}


def test_record_kcsan_entry_lists_races_and_fails_on_the_series(tmp_path):
    cfg = tmp_path / "config"
    cfg.write_text("CONFIG_RUST=y\nCONFIG_PAGE_RCU_FREE=y\nCONFIG_KUNIT=y\nCONFIG_FILEMAP_NOLOCK_KUNIT_TEST=y\n")
    run = guest_run(tmp_path, [suite("filemap_nolock")], ["BUG: KCSAN"], CONSOLE)
    rc, e = record(tmp_path, "--name", "kcsan", "--config", str(cfg), "--run", str(run),
                   "--kcsan", "--allow-elsewhere", "data")
    assert e["kcsan"]["series"] == 1 and e["kcsan"]["elsewhere"] == 2
    assert e["kcsan"]["races_elsewhere"] == ["data-race in tick_sched_do_timer / tick_nohz_idle_stop_tick"]
    assert rc == 1 and any("KCSAN races in the series" in r for r in e["reasons"])
    # Races elsewhere alone do not fail it; the WARNING outside the series
    # does, unless the entry names it (an allow names what it allows).
    console = "\n".join(l for l in CONSOLE.splitlines() if "filemap_read_nolock" not in l)
    run = guest_run(tmp_path, [suite("filemap_nolock")], ["BUG: KCSAN"], console)
    rc, e = record(tmp_path, "--name", "kcsan", "--config", str(cfg), "--run", str(run), "--kcsan")
    assert rc == 1 and e["reasons"] == ["kernel log: WARNING: CPU: 1 PID: 1 at kernel/foo.c:1 foo+0x1/0x2"]
    assert e["kcsan"]["series"] == 0 and len(e["reports_elsewhere"]) == 1
    rc, e = record(tmp_path, "--name", "kcsan", "--config", str(cfg), "--run", str(run), "--kcsan",
                   "--allow-elsewhere", "a known one", "--allow-match", "rust_doctest_kernel_sync")
    assert rc == 1, "an allow that does not match the report allows nothing"
    rc, e = record(tmp_path, "--name", "kcsan", "--config", str(cfg), "--run", str(run), "--kcsan",
                   "--allow-elsewhere", "a known one", "--allow-match", r"foo\+0x1")
    assert rc == 0, e["reasons"]


def test_record_missing_suite_and_no_kunit(tmp_path):
    cfg = tmp_path / "config"
    cfg.write_text("CONFIG_RUST=y\nCONFIG_PAGE_RCU_FREE=y\nCONFIG_KUNIT=y\nCONFIG_PAGE_RCU_FREE_KUNIT_TEST=y\n")
    run = guest_run(tmp_path, [suite("other")])
    rc, e = record(tmp_path, "--name", "x", "--config", str(cfg), "--run", str(run))
    assert rc == 1 and "KUnit suite rcu_free did not run" in e["reasons"]
    # A configuration without KUnit: results.py's "(none)" is no failure.
    cfg.write_text("CONFIG_RUST=y\nCONFIG_PAGE_RCU_FREE=y\n")
    run = guest_run(tmp_path, [suite("(none)", failed=1), suite("pagecache_read_stress-tmpfs", "kselftest")])
    rc, e = record(tmp_path, "--name", "up", "--config", str(cfg), "--run", str(run))
    assert rc == 0, e["reasons"]


def test_table(tmp_path):
    entries = [
        {"entry": "b", "what": "B", "status": "fail", "seconds": 75, "reasons": ["build failed"],
         "series_on": [], "warnings": 2, "warnings_series": 1, "notes": []},
        {"entry": "a", "what": "A | x", "status": "pass", "seconds": 5, "reasons": [],
         "series_on": ["PAGE_RCU_FREE"], "warnings": 3, "warnings_base": 3, "warnings_new": 0,
         "cached": True, "notes": ["n1"], "seed": "0x1"},
    ]
    md, ordered = matrix.table(entries, ["a", "b"])
    lines = md.splitlines()
    assert lines[0].startswith("| entry | what | status | time |")
    assert [e["entry"] for e in ordered] == ["a", "b"]
    assert lines[2].startswith("| a | A / x | pass (cached) | 5s | 3 (base 3, new 0) | PAGE_RCU_FREE |")
    assert "KCONFIG_SEED=0x1" in lines[2] and "n1" in lines[2]
    assert lines[3] == "| b | B | fail | 1m15s | 2 (1 in the series) | none | build failed |"


def test_table_command_writes_md_and_json(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    (d / "x.json").write_text(json.dumps({"entry": "x", "status": "skip", "reasons": ["why"]}))
    md, js = tmp_path / "matrix.md", tmp_path / "matrix.json"
    subprocess.run([sys.executable, str(SCRIPTS / "matrix.py"), "table", str(d), "--md", str(md),
                    "--json", str(js)], check=True, capture_output=True)
    assert "| x |  | skip |" in md.read_text()
    assert json.loads(js.read_text())[0]["entry"] == "x"


def matrix_sh(tmp_path, matrix_arg):
    """scripts/matrix.sh with MATRIX=matrix_arg and an empty BUILD=. Should a
    check that must stop it before any work be gone, the work that follows
    fails at once (KERNEL_SRC= names no tree) instead of fetching and
    unpacking 7.3.4, and the timeout bounds the rest."""
    env = dict(os.environ, MATRIX=matrix_arg, BUILD=str(tmp_path / "build"),
               KERNEL_SRC=str(tmp_path / "no-such-tree"))
    return subprocess.run([str(SCRIPTS / "matrix.sh")], env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("matrix_arg,message", [
    ("nope", "MATRIX: no entry named 'nope'"),
    ("small,Bad!", "MATRIX must be comma-separated"),
])
def test_matrix_sh_rejects_bad_entries_before_any_work(tmp_path, matrix_arg, message):
    p = matrix_sh(tmp_path, matrix_arg)
    assert p.returncode == 1
    assert message in p.stderr and p.stderr.count("\n") == 1
    assert not (tmp_path / "build" / "tree").exists()


def test_matrix_sh_missing_cross_tools_one_line_before_any_work(tmp_path):
    """arm64 boots: without its cross tools or its busybox (a BUILD= with no
    arm64 root), one line naming what to install, and no tree assembled."""
    p = matrix_sh(tmp_path, "small,arm64")
    assert p.returncode == 1
    assert "ARCH=arm64: " in p.stderr and "make deps MATRIX=1" in p.stderr
    assert p.stderr.count("\n") == 1
    assert not (tmp_path / "build" / "tree").exists()


def test_matrix_sh_lists_its_entries(tmp_path):
    p = matrix_sh(tmp_path, "list")
    assert p.returncode == 0, p.stderr
    names = [l.split()[0] for l in p.stdout.splitlines()]
    assert names[:4] == ["small", "nothp", "up", "i386"]
    assert {"kcsan", "arm64", "w1-sparse", "randconfig-3", "test"} <= set(names)


def test_table_skips_side_files(tmp_path):
    (tmp_path / "small.json").write_text(json.dumps(
        {"entry": "small", "what": "x", "status": "pass", "seconds": 60}))
    (tmp_path / "w1-sparse.wdiff.json").write_text(json.dumps({"base": 0, "series": 0, "new": []}))
    assert [e["entry"] for e in matrix.load_entries(tmp_path)] == ["small"]


def test_every_diagnostic_in_an_added_file_is_new():
    log = "\n".join([
        "/w/build/tree/mm/tests/filemap_nolock_kunit.c:40:5: warning: symbol 'x' was not declared",
        "/w/build/tree/mm/filemap.c:12:1: warning: upstream's own",
        "/w/build/tree/rust/helpers/folio.c:3:1: error: bad",
    ])
    got = matrix.added_diagnostics(log)
    assert got == {("mm/tests/filemap_nolock_kunit.c", "symbol 'x' was not declared"): 1,
                   ("rust/helpers/folio.c", "error: bad"): 1}


def test_record_fails_a_skip_that_means_the_series_did_not_run(tmp_path):
    cfg = tmp_path / "config"
    cfg.write_text("CONFIG_RUST=y\nCONFIG_PAGE_RCU_FREE=y\n")
    run = guest_run(tmp_path, [suite("pagecache_read_stress-tmpfs", kind="kselftest")])
    (run / "kselftest").mkdir()
    log = run / "kselftest" / "pagecache_read_stress-tmpfs.log"
    log.write_text("ok 1 data\nok 2 # SKIP lockless reads: switched off, or not counted\n")
    skip = "lockless reads|no lockless|kprobe|rcu_free_deferred"
    rc, e = record(tmp_path, "--name", "up", "--config", str(cfg), "--run", str(run), "--fail-skip", skip)
    assert rc == 1 and "skipped what this entry is for" in e["reasons"][0]
    log.write_text("ok 1 data\nok 7 # SKIP alloc_contig_range 1: no -c <dir>\n")
    rc, e = record(tmp_path, "--name", "up", "--config", str(cfg), "--run", str(run), "--fail-skip", skip)
    assert rc == 0, e["reasons"]


def test_record_fails_a_build_that_did_not_compile_the_series(tmp_path):
    obj = tmp_path / "obj"
    for o in ("mm/filemap.o", "mm/rcu_free.o", "rust/kernel.o", "fs/fuse/dev.o"):
        (obj / o).parent.mkdir(parents=True, exist_ok=True)
        (obj / o).write_text("")
    objs = ["mm/filemap.o", "mm/rcu_free.o", "rust/kernel.o", "fs/fuse/dev.o", "mm/shmem.o"]
    log = "  CC      mm/filemap.o\n  RUSTC     mm/rcu_free.o\n  RUSTC L rust/kernel.o\n"
    assert matrix.not_compiled(log, obj, objs) == ["fs/fuse/dev.o"]
    assert matrix.not_compiled(log + "  CC [M]  fs/fuse/dev.o\n", obj, objs) == []
    assert {"mm/filemap.o", "rust/kernel.o", "mm/rcu_free.o", "fs/fuse/dev.o"} <= set(matrix.series_objects())
    assert not any(o.startswith(("tools/", "mm/tests/")) for o in matrix.series_objects())


def test_w1_sparse_a_file_cut_short_is_not_checked():
    log = "\n".join([
        "  CC      mm/vmscan.s", "  CC      mm/swap.s",
        "  CHECK   mm/vmscan.c",
        "/w/build/tree/mm/vmscan.c: note: in included file (through /w/build/tree/include/trace/define_trace.h):",
        "/w/build/tree/include/trace/events/vmscan.h:12:1: error: too long token expansion",
        "  CHECK   mm/swap.c",
    ])
    cov = matrix.coverage(log, ["mm/vmscan", "mm/swap"])
    assert cov["checked"] == 1 and cov["cut_short"] == ["mm/vmscan"]
    assert "cut short" in matrix.coverage_failures({"series": cov})[0]
    assert matrix.coverage_failures({"series": matrix.coverage("", [])}) == ["series: no files to check"]


def test_record_a_symbol_check_without_symbols_fails(tmp_path):
    empty = tmp_path / "nm.txt"
    empty.write_text("")
    rc, e = record(tmp_path, "--name", "i386", "--series-off", "--need-symbol", "!mm/filemap.o:filemap_read_nolock",
                   "--nm", f"mm/filemap.o={empty}")
    assert rc == 1 and "no symbols read from mm/filemap.o" in e["reasons"][0]
    nm = tmp_path / "nm2.txt"
    nm.write_text("00000000 T filemap_read\n")
    rc, e = record(tmp_path, "--name", "i386", "--series-off", "--need-symbol", "!mm/filemap.o:filemap_read_nolock",
                   "--nm", f"mm/filemap.o={nm}")
    assert rc == 0, e["reasons"]


def test_record_kcsan_entry_needs_kcsan_on(tmp_path):
    cfg = tmp_path / "config"
    cfg.write_text("CONFIG_RUST=y\nCONFIG_PAGE_RCU_FREE=y\n")
    run = guest_run(tmp_path, [suite("pagecache_read_stress-tmpfs", kind="kselftest")], [], "[ 1.0] booted\n")
    rc, e = record(tmp_path, "--name", "kcsan", "--config", str(cfg), "--run", str(run), "--kcsan")
    assert rc == 1 and "KCSAN did not say it was on" in e["reasons"][0]
    (run / "dmesg.txt").write_text("[ 0.3] kcsan: enabled early\n")
    rc, e = record(tmp_path, "--name", "kcsan", "--config", str(cfg), "--run", str(run), "--kcsan")
    assert rc == 0, e["reasons"]


def test_tree_path_wherever_build_is():
    assert matrix.tree_path("/srv/out/tree/mm/vmscan.c") == "mm/vmscan.c"
    assert matrix.tree_path("/work/main/build/tree-base/include/linux/mm.h") == "include/linux/mm.h"
    assert matrix.tree_path("../../mm/filemap.c") == "mm/filemap.c"
    log = "/srv/out/tree/mm/tests/filemap_nolock_kunit.c:4:1: warning: x\n"
    assert matrix.added_diagnostics(log) == {("mm/tests/filemap_nolock_kunit.c", "x"): 1}


def test_a_bug_report_ends_with_its_stack():
    console = "\n".join([
        "[ 1.0] BUG: sleeping function called from invalid context at kernel/locking/spinlock_rt.c:48",
        "[ 1.0] Call Trace:", "[ 1.0]  <TASK>", "[ 1.0]  rt_spin_lock+0x79/0x320",
        "[ 1.0]  upstream_test+0x1/0x2", "[ 1.0]  </TASK>",
        "[ 2.0] series: running rcu_free_test-quick (4sync4lock8spinlock5tests named later)",
    ])
    (title, block), = matrix.kernel_report_blocks(console)
    assert "upstream_test" in block and "8spinlock5tests" not in block
