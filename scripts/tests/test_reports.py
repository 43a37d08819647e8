"""The report and mail scripts: cover_letter.py, mail_plan.py (make series)
and bench_report.py, bench_reads_report.py, bench_count_report.py, bench_page.sh
(make bench).

The bench fixtures (fixtures/bench/{base,series}.txt) are guest results in
the format scripts/guest/bench and scripts/guest/bench-reads write; the
unqueue_bench lines are real (build/results/final-check2), the other figures
follow the tables of scripts/bench/results.md. The mail tests also read the real
patches/mail.plan, patches/changelog.* and patches/cover-letter.* (the mail
series themselves, their cover letters' rules and their recipients:
test_series.py).

fixtures/bench/count/{base,series,series-c}-insn are COUNT=insn run
directories (results.txt, plugin.json, guest.txt) in the format of
scripts/guest/bench, scripts/guest/bench-reads and the tcg-bench plugin,
with made-up round counts: a warm-up and two rounds of the 16K folio frees
(per folio, kernel: base 4000, series 3900, series (C) 4100) and of 16-byte
reads on tmpfs (kernel: base 1940; off 1990 in both series builds; on:
Rust 1740, C 1730), and in series-insn, between the counted runs, the
unqueue_bench module's lines under `-icount shift=3` (guest.txt says so),
ns multiples of 8 whose instructions per folio are round numbers (C, Rust:
order0 1, 2; order2_unqueued 5, 4; order2_queued 400, 160; order2_partial
450, 180; pmd_partial 500, 200; lruvec_relock 30, 31).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
SCRIPTS = TOP / "scripts"
BENCH = Path(__file__).resolve().parent / "fixtures" / "bench"
COUNT = BENCH / "count"


def script(name, *args, cwd=None):
    return subprocess.run([sys.executable, str(SCRIPTS / name), *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


# mail_plan.py

PLAN = """# comment before the first block
patch: mm: add a thing
files: mm/thing.rs rust/kernel/thing.rs
quilt: mm-add-a-thing.patch

Why the thing.

# a line of the body that starts with a hash
---
v2: renamed the thing.

patch: mm: use the thing
quilt: a.patch
quilt: b.patch

Use it.
"""


def test_mail_plan(tmp_path):
    (tmp_path / "plan").write_text(PLAN)
    p = script("mail_plan.py", tmp_path / "plan", tmp_path / "out")
    assert (p.returncode, p.stdout) == (0, "2\n")
    one, two = tmp_path / "out" / "01", tmp_path / "out" / "02"
    assert (one / "message").read_text() == (
        "mm: add a thing\n\nWhy the thing.\n\n# a line of the body that starts with a hash\n")
    assert (one / "notes").read_text() == "v2: renamed the thing.\n"
    assert (one / "files").read_text() == "mm/thing.rs\nrust/kernel/thing.rs\n"
    assert (one / "quilt").read_text() == "mm-add-a-thing.patch\n"
    assert (two / "quilt").read_text() == "a.patch\nb.patch\n"
    assert (two / "notes").read_text() == "" and (two / "files").read_text() == ""
    assert (one / "from").read_text() == "" and (two / "from").read_text() == ""


def test_mail_plan_co_developer(tmp_path):
    (tmp_path / "plan").write_text(
        "patch: mm: ours\nquilt: t.patch\n\nOur message.\n\n"
        "Co-developed-by: K S <k@example.org>\nSigned-off-by: K S <k@example.org>\n")
    p = script("mail_plan.py", tmp_path / "plan", tmp_path / "out")
    assert p.returncode == 0, p.stderr


def test_mail_plan_from(tmp_path):
    # Someone else's patch: its author, and their sign-off in the message.
    (tmp_path / "plan").write_text(
        "patch: mm: theirs\nfrom: Ann Other <ann@example.org>\nquilt: t.patch\n\n"
        "Their message.\n\nReviewed-by: R <r@example.org>\n"
        "Signed-off-by: Ann Other <ann@example.org>\n[ rebased ]\n")
    p = script("mail_plan.py", tmp_path / "plan", tmp_path / "out")
    assert (p.returncode, p.stdout) == (0, "1\n"), p.stderr
    assert (tmp_path / "out/01/from").read_text() == "Ann Other <ann@example.org>\n"
    assert (tmp_path / "out/01/message").read_text().endswith(
        "Signed-off-by: Ann Other <ann@example.org>\n[ rebased ]\n")


@pytest.mark.parametrize("plan,error", [
    ("text\npatch: a: b\n\nbody\n", "text before the first 'patch:'"),
    ("patch: a: " + "x" * 80 + "\n\nbody\n", "subject longer than 75 characters"),
    ("patch: a: b\nfiles: x\n", "no commit message for: a: b"),
    ("patch: a: b\n\nbody\n---\n\n", "'---' with no notes after it"),
    ("patch: a: b\nfrom: A <a@x.org>\n\nbody\n",
     "'from: A <a@x.org>' but the first sign-off of its message is not"),
    # Her patch with "from:" lost (or --reset-author): her sign-off is no
    # one's to send as ours.
    ("patch: a: b\n\nbody\n\nSigned-off-by: A <a@x.org>\n",
     "'Signed-off-by: A <a@x.org>' in the message of a patch that is not theirs"),
    ("patch: a: b\nfrom: A <a@x.org>\n\nbody\n\nSigned-off-by: B <b@x.org>\n"
     "Signed-off-by: A <a@x.org>\n", "the first sign-off of its message is not"),
    ("patch: a: b\n\nfrom: A <a@x.org>\nbody\n", "from: after the blank line"),
    ('patch: a: b\nfrom: "O, A" <a@x.org>\n\nbody\n', "'from:' must be 'Name <email>'"),
    ("patch: a: b\nfrom: a@x.org\n\nbody\nSigned-off-by: a@x.org\n",
     "'from:' must be 'Name <email>'"),
    ("patch: a: b\nfrom: A <a@x.org>\nfrom: A <a@x.org>\n\nbody\n"
     "Signed-off-by: A <a@x.org>\n", "two 'from:' lines"),
])
def test_mail_plan_errors(tmp_path, plan, error):
    (tmp_path / "plan").write_text(plan)
    p = script("mail_plan.py", tmp_path / "plan", tmp_path / "out")
    assert p.returncode != 0 and error in p.stderr


def test_real_mail_plan(tmp_path):
    p = script("mail_plan.py", TOP / "patches" / "mail.plan", tmp_path)
    blocks = sum(1 for l in (TOP / "patches" / "mail.plan").read_text().splitlines()
                 if l.startswith("patch:"))
    assert p.returncode == 0, p.stderr
    assert int(p.stdout) == blocks == len([d for d in tmp_path.iterdir() if d.is_dir()])


# cover_letter.py

CHANGELOG = """# comments first
v3:
- Third.

v2:
- Second.
"""
LETTER = "Subject: [PATCH 0/2] *** SUBJECT HERE ***\n\n*** BLURB HERE ***\n\nA (2):\n  a\n"


def cover(tmp_path, version, letters=1, text="mm: the subject\n\nFirst paragraph.\n"):
    series = tmp_path / "series"
    series.mkdir(parents=True)
    for i in range(letters):
        (series / f"v{version}-{i}0000-cover-letter.patch").write_text(LETTER)
    (tmp_path / "cover").write_text(text)
    (tmp_path / "changelog").write_text(CHANGELOG)
    p = script("cover_letter.py", series, tmp_path / "cover", tmp_path / "changelog", version,
               tmp_path / "text")
    return p, series


def test_cover_letter(tmp_path):
    p, series = cover(tmp_path, 3)
    assert p.returncode == 0, p.stderr
    text = next(series.iterdir()).read_text()
    assert "Subject: [PATCH 0/2] mm: the subject\n" in text
    assert "\nFirst paragraph.\n" in text
    assert text.index("Changes in v3:\n- Third.") < text.index("Changes in v2:\n- Second.")
    assert (tmp_path / "text").read_text().startswith("mm: the subject\n\nFirst paragraph.")


def test_cover_letter_v1_has_no_changes(tmp_path):
    p, series = cover(tmp_path, 1)
    assert p.returncode == 0
    assert "Changes in" not in next(series.iterdir()).read_text()


def test_cover_letter_errors(tmp_path):
    p, _ = cover(tmp_path, 4)
    assert p.returncode != 0 and "no 'v4:' section" in p.stderr
    p, _ = cover(tmp_path / "two", 1, letters=2)
    assert p.returncode != 0 and "expected one cover letter, found 2" in p.stderr


def test_changelog_version(tmp_path):
    # A series' version is the newest section of its changelog, else 1.
    (tmp_path / "c").write_text(CHANGELOG)
    (tmp_path / "none").write_text("# nothing posted yet\n")
    assert script("cover_letter.py", "--version", tmp_path / "c").stdout == "3\n"
    assert script("cover_letter.py", "--version", tmp_path / "none").stdout == "1\n"


def test_real_changelogs_and_cover_letters():
    for name in ("split", "rcu-free"):
        p = script("cover_letter.py", "--check", TOP / "patches" / f"changelog.{name}", 1)
        assert p.returncode == 0, p.stderr
        subject = (TOP / "patches" / f"cover-letter.{name}").read_text().split("\n\n")[0]
        assert subject and "\n" not in subject.strip()


# bench_report.py, bench_reads_report.py

def test_bench_report(tmp_path):
    p = script("bench_report.py", BENCH / "base.txt", BENCH / "series.txt", tmp_path / "ds")
    assert p.returncode == 0, p.stderr
    md = (tmp_path / "ds.md").read_text()
    assert p.stdout == md
    assert "| free | list_lru lock round trips | 819200 | 424400 | 0.518 |" in md
    assert "| free | wall s (median, range; 3 runs) | 20.882 (17.654-23.428) " \
           "| 23.145 (19.259-25.563) | 1.108 |" in md
    assert "| partial | lruvec lock hold, ms (traced run) | 172.8 | 190.8 | 1.104 |" in md
    assert "| order2_queued (order 2) | yes | 122580 | 41000 | 0.334 | 127227 | 43820 |" in md
    assert "| lock + 30 relocks + unlock | 10024 | 10325 | 1.03 | 10385 | 10577 |" in md
    report = json.loads((tmp_path / "ds.json").read_text())
    assert report["ratio_series_over_base"]["free"]["deferred_split_folio() calls"] == 1.0


def test_bench_report_without_results(tmp_path):
    (tmp_path / "empty.txt").write_text("@@@ begin info system\n@@@ end info system rc=0\n")
    p = script("bench_report.py", tmp_path / "empty.txt", BENCH / "series.txt", tmp_path / "ds")
    assert p.returncode != 0 and "no bench results" in p.stderr


def test_bench_reads_report(tmp_path):
    p = script("bench_reads_report.py", BENCH / "base.txt", BENCH / "series.txt", tmp_path / "reads")
    assert p.returncode == 0, p.stderr
    md = (tmp_path / "reads.md").read_text()
    assert md.startswith("Read benchmarks (seed 002), 2 vCPUs, 3 s per point, median of 2 rounds.")
    assert "| ext4 | 1 | 0.45 | 0.49 | 0.67 | 1.36 | 1.30-1.42 | 1.50 |" in md
    assert "| tmpfs | 2.00 | 2.00 | 0.00 |" in md  # writes per 16-byte read
    assert "| hugetmpfs | 4.00 | 2.00 | 0.00 | 9 |" in md  # per 64K read, folio order 9
    assert "| refault | ext4 | 2 | 10000 | 11000 | 13000 | 1.18 | 1.18-1.18 | 1.30 |" in md
    rows = json.loads((tmp_path / "reads.json").read_text())["rows"]
    assert {r["workload"] for r in rows} == {"small", "mechanism", "mechanism64k", "folio", "refault", "seq"}


def test_bench_reads_report_without_results(tmp_path):
    (tmp_path / "empty.txt").write_text("@@@ done\n")
    p = script("bench_reads_report.py", tmp_path / "empty.txt", BENCH / "series.txt", tmp_path / "r")
    assert p.returncode != 0 and "no read bench results" in p.stderr


# bench_page.sh: scripts/bench/results.md = results.head.md + the generated sections

PAGE = SCRIPTS / "bench" / "results.md"


def bench_page(tmp_path, *halves):
    env = dict(os.environ, BUILD=str(tmp_path / "build"), BENCH_PAGE=str(tmp_path / "page.md"),
               LLVM_VERSION="22")
    return subprocess.run(["bash", str(SCRIPTS / "bench_page.sh"), *halves], env=env,
                          capture_output=True, text=True, timeout=60)


def test_committed_page_is_head_and_sections(tmp_path):
    """Reassembled with nothing new, the committed page comes out unchanged:
    it is the head as it is plus both sections (edit the head, not the page)."""
    (tmp_path / "page.md").write_text(PAGE.read_text())
    p = bench_page(tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "page.md").read_text() == PAGE.read_text()
    for half in ("deferred-split", "reads"):
        assert f"<!-- begin {half} -->" in PAGE.read_text()


def test_bench_page_replaces_the_halves_that_ran(tmp_path):
    bench = tmp_path / "build" / "bench"
    bench.mkdir(parents=True)
    assert script("bench_reads_report.py", BENCH / "base.txt", BENCH / "series.txt",
                  bench / "reads").returncode == 0
    (tmp_path / "page.md").write_text(PAGE.read_text())
    p = bench_page(tmp_path, "reads")
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "page.md").read_text()
    old = PAGE.read_text()
    head = (SCRIPTS / "bench" / "results.head.md").read_text()
    assert page.startswith(head)

    def section(text, half):
        return text[text.index(f"<!-- begin {half} -->"):text.index(f"<!-- end {half} -->")]
    assert section(page, "deferred-split") == section(old, "deferred-split")
    reads = section(page, "reads")
    assert "Generated by `make bench` on " in reads and "LLVM_VERSION=22." in reads
    assert (bench / "reads.md").read_text() in reads


@pytest.mark.parametrize("halves,error", [(("nope",), "unknown half 'nope'"),
                                          (("deferred-split",), "did the bench run?")])
def test_bench_page_errors(tmp_path, halves, error):
    (tmp_path / "page.md").write_text("unchanged\n")
    p = bench_page(tmp_path, *halves)
    assert p.returncode != 0 and error in p.stderr
    assert (tmp_path / "page.md").read_text() == "unchanged\n"


# bench_count_report.py (make bench COUNT=insn|c2c)

def _count_run(d, recs, regions, nm=""):
    d.mkdir()
    lines = ["@@@ begin bench reads"]
    for r in recs:
        lines.append(json.dumps({"bench": "count", **r}))
    (d / "results.txt").write_text("\n".join(lines) + "\n")
    (d / "plugin.json").write_text("".join(json.dumps(g) + "\n" for g in regions))
    (d / "read_bench.nm").write_text(nm)
    (d / "guest.txt").write_text("accel=tcg smp=1\n")


def _region(ops, user, kernel, top=()):
    return {"complete": True, "ops": ops, "user": user, "kernel": kernel, "insns": user + kernel,
            "transfers": sum(t["transfers"] for t in top), "top": list(top)}


def test_bench_count_report_insn(tmp_path):
    rec = lambda mode, rnd, ops: {"workload": "small", "fs": "tmpfs", "mode": mode, "round": rnd,
                                  "threads": 1, "pfn": 5, "result": {"ops": ops}}
    _count_run(tmp_path / "base-insn", [rec("base", i, 1000) for i in (1, 2, 3)],
               [_region(1000, 70000, 1000000 + i) for i in (0, 1, 2)])
    # A run that died inside its region: a broken record, and its region
    # incomplete (closed by the next run's reset marker); both left out.
    dead = _region(7, 1, 1)
    dead["complete"] = False
    _count_run(tmp_path / "series-insn",
               [rec("on", 1, 1000), {"workload": "small", "broken": "x"}, rec("off", 1, 1000),
                rec("on", 2, 1000), rec("off", 2, 1000)],
               [_region(1000, 70000, 800000), dead, _region(1000, 70000, 1000000),
                _region(1000, 70000, 810000), _region(1000, 70000, 1000000)])
    r = script("bench_count_report.py", tmp_path / "count-insn", tmp_path / "base-insn", tmp_path / "series-insn")
    assert r.returncode == 0, r.stderr
    row = [l for l in r.stdout.splitlines() if l.startswith("| small")][0]
    assert "70.0 / 1,000.0" in row and "70.0 / 805.0" in row
    assert "on 0.805x" in row and "off 1.000x" in row
    assert "on 1.14% (2) **> 0.5%**" in row and "base 0.00% (3)" in row
    data = json.loads((tmp_path / "count-insn.json").read_text())
    assert [run["paired"] for run in data["runs"]] == [3, 4]


def test_bench_count_report_lockless_share(tmp_path):
    # The guest's lockless_reads_copied per run: an on run whose folio was
    # not hot (it took the normal path) is flagged, not silently averaged.
    rec = lambda mode, rnd, copied: {"workload": "small", "fs": "xfs", "mode": mode, "round": rnd,
                                     "threads": 1, "pfn": 5, "copied": copied, "result": {"ops": 1000}}
    _count_run(tmp_path / "series-insn",
               [rec("on", 1, 1003), rec("off", 1, 0), rec("on", 2, 4), rec("off", 2, 0)],
               [_region(1000, 70000, 800000), _region(1000, 70000, 1000000),
                _region(1000, 70000, 1000000), _region(1000, 70000, 1000000)])
    r = script("bench_count_report.py", tmp_path / "count-insn", tmp_path / "series-insn")
    assert r.returncode == 0, r.stderr
    row = [l for l in r.stdout.splitlines() if l.startswith("| small")][0]
    assert "0.4% **not all: the folio was not hot**" in row
    data = json.loads((tmp_path / "count-insn.json").read_text())
    assert data["insn"][0]["columns"]["series-on"]["lockless_per_op"] == 0.004
    # All rounds lockless: the share, unflagged.
    (tmp_path / "series-insn" / "results.txt").write_text(
        (tmp_path / "series-insn" / "results.txt").read_text().replace('"copied": 4,', '"copied": 1000,'))
    r = script("bench_count_report.py", tmp_path / "count-insn", tmp_path / "series-insn")
    row = [l for l in r.stdout.splitlines() if l.startswith("| small")][0]
    assert "| 100.0% |" in row


def test_bench_count_report_checks_the_labels(tmp_path):
    # A run is what its label says, or the report says otherwise: the
    # switch read back, an off run that copied lockless, a heat that did
    # not take, a 64K run of a small folio, and counts over the run's reads.
    rec = lambda mode, rnd, **kw: {"workload": "large", "fs": "ext4", "mode": mode, "round": rnd,
                                   "threads": 1, "pfn": 5, "result": {"ops": 1000, **kw.pop("res", {})}, **kw}
    _count_run(tmp_path / "series-insn",
               [rec("on", 1, switch=0, hot=True, folio_order=9, res={"copied": 1000}),
                rec("off", 1, switch=0, hot=False, folio_order=2, res={"copied": 500}),
                rec("on", 2, switch=1, hot=True, folio_order=9, res={"copied": 1004})],
               [_region(1000, 70000, 800000), _region(1000, 70000, 1000000), _region(1000, 70000, 800000)])
    r = script("bench_count_report.py", tmp_path / "count-insn", tmp_path / "series-insn")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "series-insn large-ext4 on round 1: the switch read 0 after the run" in out
    assert "off round 1: 50.0% of its reads copied without a reference with the switch off" in out
    assert "off round 1: the heat before it did not make the pages hot" in out
    assert "off round 1: the folio read is of order 2, not a PMD folio" in out
    assert "round 2" not in out.split("Runs that were not")[1].split("\n")[0]
    row = [l for l in out.splitlines() if l.startswith("| large")][0]
    assert "100.0%" in row  # the worst round, not capped, not flagged


def test_bench_count_report_keeps_the_last_good_report(tmp_path):
    # --need-both with only one boot: the last complete report stays.
    (tmp_path / "count-insn.md").write_text("the last good one\n")
    rec = {"workload": "small", "fs": "ext4", "mode": "base", "round": 1, "threads": 1, "pfn": 5,
           "result": {"ops": 1000}}
    _count_run(tmp_path / "base-insn", [rec], [_region(1000, 70000, 1000000)])
    r = script("bench_count_report.py", "--need-both", tmp_path / "count-insn", tmp_path / "base-insn")
    assert r.returncode != 0 and "keep the last run's" in r.stderr
    assert (tmp_path / "count-insn.md").read_text() == "the last good one\n"


def test_profile_spread_ignores_the_top_list_cutoff():
    import importlib.util
    spec = importlib.util.spec_from_file_location("bcr", SCRIPTS / "bench_count_report.py")
    bcr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bcr)
    # "edge" fell off round 2's list, whose smallest entry is 6.0: it ran
    # at most that there, so its spread is at least 1.0, not its whole
    # 7.0. "once" ran only in round 2: 5.0 over round 1's smallest (1.0).
    rounds = [{"a": 10.0, "edge": 7.0, "z": 1.0}, {"a": 12.0, "y": 6.9, "once": 6.0},
              {"a": 10.0, "edge": 7.0, "z": 1.0}]
    assert dict(bcr.profile_spread(rounds, n=10)) == {"y": 5.9, "once": 5.0, "a": 2.0, "edge": 1.0}


def test_demangle_rust_names():
    import importlib.util
    spec = importlib.util.spec_from_file_location("bcr", SCRIPTS / "bench_count_report.py")
    bcr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bcr)
    assert bcr.short_generics("a::b::<c::d>") == "a::b::<c::d>"
    assert bcr.short_generics("f::<" + "x" * 40 + "<y>>::g") == "f::<…>::g"
    names = ["_RNvCs7hBbHH93URq_8rcu_free9free_done", "filemap_read"]
    d = bcr.demangle(names)
    assert d["filemap_read"] == "filemap_read"
    if bcr._cxxfilt():
        assert d[names[0]] == "rcu_free::free_done"


def test_bench_count_report_warmup_left_out(tmp_path):
    # Round 0 (the warm-up of COUNT=insn) pairs with its region, then is
    # left out: its slower count changes neither median nor spread.
    rec = lambda rnd: {"workload": "small", "fs": "ext4", "mode": "base", "round": rnd,
                       "threads": 1, "pfn": 5, "result": {"ops": 1000}}
    _count_run(tmp_path / "base-insn", [rec(i) for i in (0, 1, 2, 3)],
               [_region(1000, 70000, k) for k in (2000000, 1000000, 1000000, 1000000)])
    r = script("bench_count_report.py", tmp_path / "count-insn", tmp_path / "base-insn")
    assert r.returncode == 0, r.stderr
    row = [l for l in r.stdout.splitlines() if l.startswith("| small")][0]
    assert "70.0 / 1,000.0" in row and "base 0.00% (3)" in row


def test_bench_count_report_profile(tmp_path):
    def reg(kernel, prof):
        g = _region(1000, 70000, kernel)
        g["profile"] = prof
        return g
    rec = lambda mode, rnd: {"workload": "refault", "fs": "ext4", "mode": mode, "round": rnd,
                             "threads": 1, "pfn": None, "result": {"ops": 1000}}
    _count_run(tmp_path / "base-insn", [rec("base", 1), rec("base", 2)],
               [reg(100000, [["filemap_read", 50000], ["copy", 40000]]),
                reg(100000, [["filemap_read", 50000], ["copy", 40000]])])
    _count_run(tmp_path / "series-insn", [rec("on", 1), rec("off", 1)],
               [reg(130000, [["filemap_read", 50000], ["copy", 40000], ["filemap_read_nolock", 30000]]),
                reg(100000, [["filemap_read", 50000], ["copy", 40000]])])
    r = script("bench_count_report.py", tmp_path / "count-insn", tmp_path / "base-insn", tmp_path / "series-insn")
    assert r.returncode == 0, r.stderr
    assert "| refault | ext4 | on − base | filemap_read_nolock +30.0 |" in r.stdout
    assert "| refault | ext4 | on − off | filemap_read_nolock +30.0 |" in r.stdout
    assert "off − base" not in r.stdout  # no difference of 0.5 or more
    assert "Where the rounds differ" not in r.stdout  # base agrees: 0.00%


def test_bench_count_report_spread_by_function(tmp_path):
    # Rounds more than 0.5% apart: the report names the function whose
    # count moved between them (here the allocator's, 20 per op).
    def reg(kernel, prof):
        g = _region(1000, 70000, kernel)
        g["profile"] = prof
        return g
    rec = lambda rnd: {"workload": "partial", "fs": "anon", "mode": "base", "round": rnd,
                       "threads": 1, "pfn": None, "result": {"ops": 1000}}
    _count_run(tmp_path / "base-insn", [rec(1), rec(2), rec(3)],
               [reg(1000000, [["__free_one_page", 100000], ["copy", 40000]]),
                reg(1020000, [["__free_one_page", 120000], ["copy", 40000]]),
                reg(1000000, [["__free_one_page", 100000], ["copy", 40000]])])
    r = script("bench_count_report.py", tmp_path / "count-insn", tmp_path / "base-insn")
    assert r.returncode == 0, r.stderr
    assert "| partial | anon | base | 1.87% | __free_one_page 20.0 |" in r.stdout


@pytest.mark.parametrize("regions, error", [
    # A complete region more than finished runs: which one is extra cannot
    # be told (the on and off runs have the same op count).
    ([(1000, 800000), (1000, 900000), (1000, 1000000)], "2 finished runs but 3 complete regions"),
    ([(1000, 800000), (999, 1000000)], "1000 ops, its region 999"),
])
def test_bench_count_report_refuses_to_guess(tmp_path, regions, error):
    recs = [{"workload": "small", "fs": "tmpfs", "mode": m, "round": 1, "threads": 1, "pfn": 5,
             "result": {"ops": 1000}} for m in ("on", "off")]
    _count_run(tmp_path / "series-insn", recs, [_region(o, 70000, k) for o, k in regions])
    base = [{**x, "mode": "base"} for x in recs]
    _count_run(tmp_path / "base-insn", base, [_region(1000, 70000, 1000000)] * 2)
    # The boot that does not pair is left out, with a line saying why...
    r = script("bench_count_report.py", tmp_path / "count-insn", tmp_path / "base-insn", tmp_path / "series-insn")
    assert r.returncode == 0 and error in r.stderr and "its counts are left out" in r.stderr
    assert "| small | tmpfs | 16-byte read | 70.0 / 1,000.0 | - |" in r.stdout
    # ... and make bench (--need-both) keeps the page's section.
    r = script("bench_count_report.py", "--need-both", tmp_path / "count-insn", tmp_path / "base-insn",
               tmp_path / "series-insn")
    assert r.returncode != 0 and "counts of base only (--need-both)" in r.stderr


def test_bench_count_report_c2c(tmp_path):
    folio = {"addr": "0x1000", "vaddr": hex(0xFFFFEA0000000000 + 5 * 64), "transfers": 2000,
             "read_transfers": 1000, "what": "struct page pfn 0x5 (folio if head) [_refcount]",
             "pcs": [{"pc": "0xffffffff81000010", "sym": "folio_try_get+0x10", "transfers": 2000}],
             "other_pcs": 0}
    # The line starts in `stop`; the bytes that moved are `turn`'s.
    user = {"addr": "0x2000", "vaddr": "0x4c0040", "transfers": 10, "read_transfers": 5,
            "what": "user data, pfn 0x2", "pcs": [{"pc": "0x401010", "sym": "", "transfers": 10}],
            "other_pcs": 0, "bytes": hex(0xff << 8)}
    rec = {"workload": "small", "fs": "ext4", "mode": "base", "round": 1, "threads": 2, "pfn": 5,
           "result": {"ops": 1000}}
    _count_run(tmp_path / "base-c2c-2", [rec], [_region(1000, 1, 1, [folio, user])],
               nm="0000000000401000 T small\n00000000004c0040 B stop\n00000000004c0048 B turn\n")
    r = script("bench_count_report.py", tmp_path / "count-c2c", tmp_path / "base-c2c-2")
    assert r.returncode == 0, r.stderr
    assert "| small | ext4 | 16-byte read | 2.010 / 2.000 / 2.000 |" in r.stdout
    assert "folio_try_get+0x10 (2000)" in r.stdout
    assert "turn+0x0 (user data, pfn 0x2)" in r.stdout and "small+0x10 (10)" in r.stdout
    try:
        import matplotlib  # noqa: F401
        assert (tmp_path / "count-c2c.png").stat().st_size > 0
    except ImportError:
        assert "no PNG" in r.stderr


def test_bench_count_report_c2c_vmemmap(tmp_path):
    # The plugin's list of every struct page line that moved: the hot
    # folio's line counts even when it is not in the top list, a
    # neighbouring page's line (pfn 6) is not the folio's.
    rec = {"workload": "small", "fs": "tmpfs", "mode": "off", "round": 1, "threads": 2, "pfn": 5,
           "result": {"ops": 1000}}
    reg = _region(1000, 1, 1)
    reg["transfers"] = 700
    reg["vmemmap"] = [[5, 300], [6, 100], [9000, 50]]
    _count_run(tmp_path / "series-c2c-2", [rec], [reg])
    r = script("bench_count_report.py", tmp_path / "count-c2c", tmp_path / "series-c2c-2")
    assert r.returncode == 0, r.stderr
    assert "| small | tmpfs | 16-byte read | 0.700 / 0.300 / 0.450 |" in r.stdout


# bench_count_report.py: series-c (the series built with the C
# implementations) and the unqueue_bench module under -icount

def _rows(out, workload):
    """The rows of `workload` in the report's first table."""
    table = out.split("\n\n")[1]
    return [l for l in table.splitlines() if l.startswith(f"| {workload} |")]


def test_bench_count_report_series_c_insn(tmp_path):
    # The C build's columns next to the series' of the same mode, and the
    # kernel instructions Rust over C per mode.
    r = script("bench_count_report.py", "--need-both", tmp_path / "count-insn", COUNT / "base-insn",
               COUNT / "series-insn", COUNT / "series-c-insn")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert ("| workload | fs | per | base user / kernel | series-off user / kernel | series (C) off user / kernel"
            " | series-on user / kernel | series (C) on user / kernel | series user / kernel"
            " | series (C) user / kernel | kernel, series/base | kernel, Rust/C | rep iterations"
            " | lockless reads (on) | spread of the rounds |") in out
    assert _rows(out, "small") == [
        "| small | tmpfs | 16-byte read | 60.0 / 1,940.0 | 60.0 / 1,990.0 | 60.0 / 1,990.0 | 60.0 / 1,740.0"
        " | 60.0 / 1,730.0 | - | - | off 1.026x, C off 1.026x, on 0.897x, C on 0.892x | off 1.000x, on 1.006x"
        " | base 0.0, off 0.0, C off 0.0, on 0.0, C on 0.0 | 100.0%; C on 100.0%"
        " | base 0.00% (2), off 0.00% (2), C off 0.00% (2), on 0.00% (2), C on 0.00% (2) |"]
    assert _rows(out, "free") == [
        "| free | anon | 16K folio freed | 15.0 / 4,000.0 | - | - | - | - | 15.0 / 3,900.0 | 15.0 / 4,100.0"
        " | series 0.975x, C 1.025x | all 0.951x | base 40.0, series 40.0, C 40.0 | -"
        " | base 0.00% (2), series 0.00% (2), C 0.00% (2) |"]
    assert "series (C): the series kernel built with the C implementations" in out
    # Where Rust and C differ, by function, after the rows against the base.
    assert out.index("| free | anon | series − base |") < out.index(
        "| free | anon | series − C | __folio_batch_unqueue_deferred_split -500.0,"
        " folio_batch_unqueue_deferred_split +300.0 |")
    assert "runs had no matching plugin region" not in out
    data = json.loads((tmp_path / "count-insn.json").read_text())
    assert [run["paired"] for run in data["runs"]] == [6, 9, 9]
    small, free = data["insn"]
    assert list(small["columns"]) == ["base", "series-off", "c-off", "series-on", "c-on"]
    assert small["columns"]["c-on"]["kernel_per_op"] == 1730.0
    assert small["kernel_rust_over_c"] == pytest.approx({"off": 1.0, "on": 1740 / 1730})
    assert list(free["columns"]) == ["base", "series", "c"]
    assert free["kernel_rust_over_c"] == pytest.approx({"all": 3900 / 4100})
    # Only series runs give the unqueue section (series-c's has no lines).
    assert [u["run"] for u in data["unqueue"]] == ["series-insn"]


def test_bench_count_report_series_c_is_optional(tmp_path):
    # Without a series-c run the report is as it was (no C columns, no
    # Rust/C), and --need-both asks for base and series only ...
    r = script("bench_count_report.py", "--need-both", tmp_path / "count-insn", COUNT / "base-insn",
               COUNT / "series-insn")
    assert r.returncode == 0, r.stderr
    counted = r.stdout.split("Rust against C unqueue")[0]
    assert "(C)" not in counted and "Rust/C" not in counted and "series − C" not in counted
    assert _rows(r.stdout, "small")[0].startswith(
        "| small | tmpfs | 16-byte read | 60.0 / 1,940.0 | 60.0 / 1,990.0 | 60.0 / 1,740.0 | - |"
        " off 1.026x, on 0.897x | base 0.0, off 0.0, on 0.0 | 100.0% |")
    data = json.loads((tmp_path / "count-insn.json").read_text())
    assert all("kernel_rust_over_c" not in e for e in data["insn"])
    # ... which series-c does not stand in for.
    r = script("bench_count_report.py", "--need-both", tmp_path / "count-insn", COUNT / "base-insn",
               COUNT / "series-c-insn")
    assert r.returncode != 0 and "counts of base, series-c only (--need-both)" in r.stderr
    # A series-c run alone: its columns, no ratio without the series'.
    r = script("bench_count_report.py", tmp_path / "count-insn", COUNT / "series-c-insn")
    assert r.returncode == 0, r.stderr
    assert _rows(r.stdout, "free") == [
        "| free | anon | 16K folio freed | - | - | 15.0 / 4,100.0 | - | - | C 40.0 | - | C 0.00% (2) |"]


def test_bench_count_report_series_c_c2c(tmp_path):
    rec = lambda mode: {"workload": "small", "fs": "xfs", "mode": mode, "round": 1, "threads": 2, "pfn": 5,
                        "result": {"ops": 1000}}

    def reg(transfers, folio):
        g = _region(1000, 1, 1)
        g["transfers"], g["vmemmap"] = transfers, [[5, folio]]
        return g
    _count_run(tmp_path / "base-c2c-2", [rec("base")], [reg(2500, 2000)])
    _count_run(tmp_path / "series-c2c-2", [rec("on"), rec("off")], [reg(600, 0), reg(2400, 2000)])
    _count_run(tmp_path / "series-c-c2c-2", [rec("on"), rec("off")], [reg(500, 0), reg(2400, 2000)])
    r = script("bench_count_report.py", "--need-both", tmp_path / "count-c2c", tmp_path / "base-c2c-2",
               tmp_path / "series-c2c-2", tmp_path / "series-c-c2c-2")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert ("| workload | fs | per | base | series-off | series (C) off | series-on | series (C) on"
            " | transfers, Rust/C |") in out
    assert ("| small | xfs | 16-byte read | 2.500 / 2.000 / 2.000 | 2.400 / 2.000 / 2.000 | 2.400 / 2.000 / 2.000"
            " | 0.600 / 0.000 / 0.000 | 0.500 / 0.000 / 0.000 | off 1.000x, on 1.200x |") in out
    assert "transfers, Rust/C: the series' transfers per op" in out
    data = json.loads((tmp_path / "count-c2c.json").read_text())
    assert data["c2c"][0]["transfers_rust_over_c"] == pytest.approx({"off": 1.0, "on": 1.2})
    assert "unqueue" not in data  # c2c boots never load the module


def test_bench_model_reads_the_c_columns_past(tmp_path):
    # bench_model.py takes base and series-on: the C columns change nothing.
    r = script("bench_count_report.py", tmp_path / "count-insn", COUNT / "base-insn", COUNT / "series-insn",
               COUNT / "series-c-insn")
    assert r.returncode == 0, r.stderr
    full = json.loads((tmp_path / "count-insn.json").read_text())
    assert any("c-on" in e["columns"] for e in full["insn"])
    for e in full["insn"]:
        e["columns"] = {c: v for c, v in e["columns"].items() if c not in ("c-off", "c-on", "c")}
    (tmp_path / "stripped.json").write_text(json.dumps(full))
    outs = []
    for name in ("count-insn.json", "stripped.json"):
        p = script("bench_model.py", tmp_path / name, "-", tmp_path / name.replace(".json", "-model"))
        assert p.returncode == 0, p.stderr
        outs.append((p.stdout, json.loads((tmp_path / name.replace(".json", "-model.json")).read_text())))
    assert outs[0][0] == outs[1][0]
    assert outs[0][1]["counts"] == outs[1][1]["counts"] and outs[0][1]["counts"]["tmpfs"]["series"]["insns"] == 1800


UNQUEUE_ROWS = [
    "| case | folios | C instructions per folio | Rust instructions per folio | Rust/C |",
    "|---|---:|---:|---:|---:|",
    "| order0 (order 0) | 31 | 1.00 | 2.00 | 2.000 |",
    "| order2_unqueued (order 2) | 31 | 5.00 | 4.00 | 0.800 |",
    "| order2_queued (order 2, queued) | 31 | 400.00 | 160.00 | 0.400 |",
    "| order2_partial (order 2, queued) | 31 | 450.00 | 180.00 | 0.400 |",
    "| pmd_partial (order 9, queued) | 31 | 500.00 | 200.00 | 0.400 |",
    "| lruvec_relock (lock + 30 relocks + unlock) | 31 | 30.00 | 31.00 | 1.033 |",
]


def _section(md):
    """The unqueue section's lines of a report."""
    lines = md.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("Rust against C unqueue under -icount (unqueue_bench)"))
    return lines[start:]


def test_bench_count_report_unqueue_icount(tmp_path):
    # The module's lines sit between the counted runs: they pair with no
    # region, and come out as instructions per folio (ns / 8 / 31 folios).
    r = script("bench_count_report.py", tmp_path / "count-insn", COUNT / "series-insn")
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "count-insn.md").read_text()
    sec = _section(md)
    assert sec[0].startswith("Rust against C unqueue under -icount (unqueue_bench), series-insn: ")
    assert "`-icount shift=3`: 8 ns of guest time per instruction" in sec[0]
    assert sec[2:10] == UNQUEUE_ROWS
    assert sec[11].startswith("Derived from the module's guest times") and "median over 2000 rounds" in sec[11]
    assert "of 64 calls, per call" in sec[11] and "by 8 ns per instruction (2^3)" in sec[11]
    assert len(sec) == 12
    data = json.loads((tmp_path / "count-insn.json").read_text())
    assert data["runs"][0]["paired"] == 9 and data["runs"][0]["records"] == 9
    assert "runs had no matching plugin region" not in md
    (u,) = data["unqueue"]
    assert (u["run"], u["shift"], u["ns_per_insn"], u["unit"], u["failed"]) == ("series-insn", 3, 8,
                                                                               "instructions", [])
    cases = {c["case"]: c for c in u["cases"]}
    assert list(cases) == ["order0", "order2_unqueued", "order2_queued", "order2_partial", "pmd_partial",
                           "lruvec_relock"]
    assert (cases["order2_queued"]["c_per_folio"], cases["order2_queued"]["rust_per_folio"]) == (400.0, 160.0)
    assert cases["order2_queued"]["ratio_rust_over_c"] == pytest.approx(0.4)
    assert cases["order0"]["ratio_rust_over_c"] == pytest.approx(2.0)
    # The counted tables are those of the runs alone.
    assert _rows(md, "free")[0].startswith("| free | anon | 16K folio freed | - | - | 15.0 / 3,900.0 |")


def _copy_run(src, dst, edit=None, guest=None):
    dst.mkdir(parents=True)
    for f in src.iterdir():
        (dst / f.name).write_text(f.read_text())
    if edit:
        (dst / "results.txt").write_text(edit((dst / "results.txt").read_text()))
    if guest is not None:
        (dst / "guest.txt").write_text(guest)
    return dst


def test_bench_count_report_unqueue_without_the_shift(tmp_path):
    # guest.txt does not say the shift: the cells stay guest ns (and say so).
    run = _copy_run(COUNT / "series-insn", tmp_path / "runs" / "series-insn",
                    guest="accel=tcg,thread=single smp=1 mem=2G config=perf mode=bench plugin=insn\n")
    r = script("bench_count_report.py", tmp_path / "count-insn", run)
    assert r.returncode == 0, r.stderr
    sec = _section(r.stdout)
    assert "guest.txt does not say `-icount`'s shift: guest ns, not instructions" in sec[0]
    assert sec[2] == "| case | folios | C guest ns per folio | Rust guest ns per folio | Rust/C |"
    assert sec[4] == "| order0 (order 0) | 31 | 8.00 | 16.00 | 2.000 |"
    assert sec[6] == "| order2_queued (order 2, queued) | 31 | 3,200.00 | 1,280.00 | 0.400 |"
    assert "ns per instruction" not in sec[11]
    u = json.loads((tmp_path / "count-insn.json").read_text())["unqueue"][0]
    assert (u["shift"], u["ns_per_insn"], u["unit"]) == (None, None, "guest ns")


def test_bench_count_report_unqueue_failed(tmp_path):
    # The module failed to load: a line says so, the counts are unchanged.
    def failed(text):
        lines = [l for l in text.splitlines() if not l.startswith('{"bench": "unqueue"')]
        i = lines.index("@@@ end bench deferred-split rc=0")
        return "\n".join(lines[:i] + ['{"bench": "unqueue", "kind": "failed"}',
                                      "[   12.5] unqueue_bench: a folio of order 2 was not queued",
                                      '{"bench": "unqueue", "kind": "failed", "why": "probes left armed"}']
                         + lines[i:]) + "\n"
    run = _copy_run(COUNT / "series-insn", tmp_path / "runs" / "series-insn", edit=failed)
    r = script("bench_count_report.py", tmp_path / "count-insn", run)
    assert r.returncode == 0, r.stderr
    assert ("The unqueue_bench module failed in series-insn (see the guest's dmesg after the line in"
            " results.txt): no Rust against C counts from it.") in r.stdout
    assert "The unqueue_bench module failed in series-insn (probes left armed)" in r.stdout
    assert "Rust against C unqueue under -icount" not in r.stdout and "| order0" not in r.stdout
    data = json.loads((tmp_path / "count-insn.json").read_text())
    assert data["unqueue"][0]["failed"] == ["see the guest's dmesg after the line in results.txt",
                                            "probes left armed"]
    assert data["unqueue"][0]["cases"] == [] and data["runs"][0]["paired"] == 9


def test_bench_count_report_unqueue_lines_are_not_runs(tmp_path):
    # An unqueue line that looks like a run (it has a result with ops) is
    # still not paired with a region: the plugin did not count it.
    def mixed(text):
        extra = json.dumps({"bench": "unqueue", "kind": "micro", "case": "order0", "order": 0, "folios": 31,
                            "queued": False, "rounds": 1, "calls": 1, "c_ns": 8, "rust_ns": 8, "clock_ns": 0,
                            "result": {"ops": 20480}})
        return text.replace("@@@ begin bench deferred-split\n", "@@@ begin bench deferred-split\n" + extra + "\n")
    run = _copy_run(COUNT / "series-insn", tmp_path / "runs" / "series-insn", edit=mixed)
    r = script("bench_count_report.py", tmp_path / "count-insn", run)
    assert r.returncode == 0 and "left out" not in r.stderr, r.stderr
    data = json.loads((tmp_path / "count-insn.json").read_text())
    assert data["runs"][0]["paired"] == 9 and len(data["unqueue"][0]["cases"]) == 7
    # c2c reports have no unqueue section, whatever results.txt holds.
    c2c = _copy_run(COUNT / "series-insn", tmp_path / "runs" / "series-c2c-2")
    (c2c / "plugin.json").write_text("".join(
        json.dumps({**json.loads(l), "vmemmap": []}) + "\n" for l in (c2c / "plugin.json").read_text().splitlines()))
    r = script("bench_count_report.py", tmp_path / "count-c2c", c2c)
    assert r.returncode == 0, r.stderr
    assert "unqueue" not in r.stdout and "unqueue" not in json.loads((tmp_path / "count-c2c.json").read_text())


def test_bench_count_report_unqueue_of_series_c_left_out(tmp_path):
    # In the C build folio_batch_unqueue_deferred_split() is the C one: its
    # module lines would be C against C, not Rust against C.
    lines = [l for l in (COUNT / "series-insn" / "results.txt").read_text().splitlines()
             if l.startswith('{"bench": "unqueue"')]
    run = _copy_run(COUNT / "series-c-insn", tmp_path / "runs" / "series-c-insn",
                    edit=lambda t: t.replace("@@@ end bench deferred-split", "\n".join(lines)
                                             + "\n@@@ end bench deferred-split"))
    r = script("bench_count_report.py", tmp_path / "count-insn", COUNT / "series-insn", run)
    assert r.returncode == 0, r.stderr
    assert ("series-c-insn loaded unqueue_bench too: left out (in series (C) both of its variants are C)."
            in r.stdout)
    assert r.stdout.count("Rust against C unqueue under -icount (unqueue_bench)") == 1
    assert [u["run"] for u in json.loads((tmp_path / "count-insn.json").read_text())["unqueue"]] == ["series-insn"]
