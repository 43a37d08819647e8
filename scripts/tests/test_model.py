"""bench_model.py (make bench COUNT=insn|c2c, issue 18 item 3): the
projection of 16-byte read throughput from the exact counts, and its
section of the results page (bench_page.sh model).

The fixtures (fixtures/bench/model/count-{insn,c2c}.json) are hand-made in
the schema bench_count_report.py writes: 16-byte reads ("small") on five
file systems, base / series-off / series-on, 60 user instructions per read
and round kernel counts (ext4: base 1940, on 1740; xfs: base 2340, on
2140); c2c at 4 vCPUs (ext4 also at 2, which the model must not pick), a
timer line moving 0.1 per read everywhere, the hot folio's line in base and
series-off, an i_rwsem line (down_read/up_read) 0.6 per read on xfs and the
block device. The figures are made up, not measured.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
SCRIPTS = TOP / "scripts"
MODEL = Path(__file__).resolve().parent / "fixtures" / "bench" / "model"
INSN, C2C = MODEL / "count-insn.json", MODEL / "count-c2c.json"
sys.path.insert(0, str(SCRIPTS))
import bench_model  # noqa: E402

# Constants that make the arithmetic easy by hand: 1 instruction per ns, no
# boundary, 100 ns per transfer, 64 cores (no SMT), no degradation.
PLAIN = ["--ghz", "1", "--ipc", "1", "--boundary-ns", "0", "--transfer-ns", "100", "--cores", "64",
         "--smt-yield", "1", "--contention-slope", "0"]
K = dict(ghz=1.0, ipc=1.0, boundary_ns=0.0, transfer_ns=100.0, cores=64, smt_yield=1.0, contention_slope=0.0)


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPTS / "bench_model.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def cell(data, fs, n, variant, mit="default"):
    row = [r for r in data["projection"] if (r["fs"], r["threads"], r["mitigations"]) == (fs, n, mit)]
    assert len(row) == 1
    return row[0][variant]


def test_projection_by_hand(tmp_path):
    r = run(*PLAIN, INSN, C2C, tmp_path / "model")
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "model.json").read_text())
    ext4 = data["counts"]["ext4"]
    # The 4-vCPU run, not the 2-vCPU one; the folio line counted 0.5, used 2
    # (base's get and put); the timer's 0.1 is "other".
    assert ext4["base"]["c2c_vcpus"] == "4" and ext4["base"]["insns"] == 2000
    assert ext4["base"]["lines"] == {"hot folio": {"counted": 0.5, "used": 2}}
    assert ext4["base"]["other"] == pytest.approx(0.1)
    assert ext4["series"]["column"] == "series-on" and ext4["series"]["lines"]["hot folio"]["used"] == 0
    # ext4 base: t1 = 2000 ns -> 0.5 M/s; N >= 2: t = 2000 + (0.1 + 2) * 100
    # = 2210 ns, N / 2210 ns, capped at 1 / (2 * 100 ns) = 5 M/s from N = 16.
    assert cell(data, "ext4", 1, "base")["projected"] == pytest.approx(0.5)
    assert cell(data, "ext4", 2, "base")["projected"] == pytest.approx(2 / 2210 * 1e3)
    assert cell(data, "ext4", 8, "base")["projected"] == pytest.approx(8 / 2210 * 1e3)
    assert cell(data, "ext4", 8, "base")["capped_by"] is None
    for n in (16, 32, 64):
        assert cell(data, "ext4", n, "base")["projected"] == pytest.approx(5.0)
        assert cell(data, "ext4", n, "base")["capped_by"] == "hot folio"
    # ext4 series: t1 = 1800 ns; t = 1800 + 0.1 * 100 = 1810 ns, no cap.
    assert cell(data, "ext4", 1, "series")["projected"] == pytest.approx(1e3 / 1800)
    assert cell(data, "ext4", 64, "series")["projected"] == pytest.approx(64 / 1810 * 1e3)
    # Its seed columns and ratio: 15.0-15.7 at 64 threads for base.
    c = cell(data, "ext4", 64, "base")
    assert c["measured"] == [15.0, 15.7] and c["ratio"] == pytest.approx(5.0 / 15.35)
    # xfs series: i_rwsem counted 0.6, used 2; t = 2200 + (0.1 + 2) * 100 =
    # 2410 ns; capped at 5 M/s by i_rwsem.
    xfs = data["counts"]["xfs"]["series"]
    assert xfs["lines"]["i_rwsem"] == {"counted": 0.6, "used": 2}
    assert "down_read+0x1a" in xfs["rwsem_pcs"]
    assert cell(data, "xfs", 2, "series")["projected"] == pytest.approx(2 / 2410 * 1e3)
    assert cell(data, "xfs", 64, "series")["capped_by"] == "i_rwsem"
    # tmpfs base: its folio lock too, 4 writes per read: capped at 2.5 M/s.
    assert cell(data, "tmpfs", 64, "base")["projected"] == pytest.approx(1e3 / 400)
    # mitigations=off rows: t_b = 0 already here, so the same figures.
    assert cell(data, "ext4", 64, "series", "off")["projected"] == pytest.approx(64 / 1810 * 1e3)
    md = (tmp_path / "model.md").read_text()
    assert r.stdout == md
    assert "| 64 | 5.00* | 15.0-15.7 | 0.33 | 35.36 | 68.9-70.1 | 0.51 |" in md
    assert "**Where the model and the seed disagree.** base: projection/seed" in md


def test_as_counted(tmp_path):
    # The folio line as counted, 0.5 per read: t = 2000 + 0.6 * 100 = 2060
    # ns, cap 1 / (0.5 * 100 ns) = 20 M/s.
    r = run(*PLAIN, "--as-counted", INSN, C2C, tmp_path / "model")
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "model.json").read_text())
    assert cell(data, "ext4", 2, "base")["projected"] == pytest.approx(2 / 2060 * 1e3)
    assert cell(data, "ext4", 64, "base")["projected"] == pytest.approx(20.0)


def test_two_vcpus_when_asked(tmp_path):
    # At 2 vCPUs ext4's base moved 0.2 per read, 0.1 on the folio line.
    r = run(*PLAIN, "--c2c-vcpus", "2", INSN, C2C, tmp_path / "model")
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "model.json").read_text())
    assert data["counts"]["ext4"]["base"]["lines"]["hot folio"]["counted"] == 0.1
    assert "No c2c count for xfs base" in r.stdout


def test_contention_cap():
    # A line written twice per read, 100 ns a transfer: never above 5 M/s,
    # reached once the CPUs could do more, flat without degradation.
    xs = [bench_model.project(100, {"l": 2}, 0, n, K) for n in bench_model.THREADS]
    assert xs[0] == (pytest.approx(10.0), None)
    assert all(x <= 5.0 + 1e-9 for x, _ in xs[1:])
    assert xs[-1] == (pytest.approx(5.0), "l") and xs[-2] == (pytest.approx(5.0), "l")
    # With a contention slope it degrades as threads are added: 1 / (2 * 100
    # * (1 + 0.01 * (N - 2))) ns.
    k = dict(K, contention_slope=0.01)
    x32, _ = bench_model.project(100, {"l": 2}, 0, 32, k)
    x64, by = bench_model.project(100, {"l": 2}, 0, 64, k)
    assert x64 == pytest.approx(1e3 / (200 * 1.62)) and by == "l" and x64 < x32 < 5.0
    # The tighter of two lines caps; a line no read writes caps nothing.
    assert bench_model.project(100, {"a": 2, "b": 4}, 0, 64, K) == (pytest.approx(2.5), "b")
    assert bench_model.project(100, {"a": 0}, 0, 64, K)[1] is None
    # SMT: C = 32 cores, Y = 1.25: 64 threads do 40 threads' work.
    k = dict(K, cores=32, smt_yield=1.25)
    assert bench_model.project(1000, {}, 0, 64, k)[0] == pytest.approx(40.0)


def test_missing_c2c(tmp_path):
    for c2c in (tmp_path / "count-c2c.json", "-"):
        r = run(*PLAIN, INSN, c2c, tmp_path / "model")
        assert r.returncode == 0, r.stderr
        assert f"**No c2c counts ({c2c}): no cache-line transfers per read" in r.stdout
        data = json.loads((tmp_path / "model.json").read_text())
        assert data["inputs"]["c2c"] is None and data["notes"]
        # No contention: every thread at its one-thread cost.
        assert cell(data, "ext4", 64, "base") | {"measured": None} == dict(
            projected=pytest.approx(64 / 2000 * 1e3), capped_by=None, measured=None,
            ratio=pytest.approx(32 / 15.35))
        assert data["counts"]["ext4"]["base"]["lines"] == {}


def write(path, obj):
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def insn_with(**cols):
    data = json.loads(INSN.read_text())
    data["insn"][0]["columns"]["base"].update(cols)
    return data


@pytest.mark.parametrize("insn,c2c,error", [
    (None, C2C, "nope.json: No such file or directory"),
    ("{not json", C2C, "not JSON"),
    ([1, 2], C2C, "not a bench_count_report.py report"),
    ({"c2c": []}, C2C, "no \"insn\" list: not a count-insn.json"),
    ({"insn": [{"workload": "large", "fs": "ext4", "columns": {}}]}, C2C, "no 16-byte read (\"small\") rows"),
    (insn_with(kernel_per_op=-1), C2C, "small/blockdev/base kernel_per_op is -1, not a count"),
    (insn_with(user_per_op="60"), C2C, "user_per_op is '60', not a count"),
    (INSN, "{\"c2c\": 3}", "no \"c2c\" list: not a count-c2c.json"),
    (INSN, "", "not JSON"),
])
def test_bad_input(tmp_path, insn, c2c, error):
    i = tmp_path / "nope.json" if insn is None else insn if isinstance(insn, Path) else write(tmp_path / "i.json", insn)
    c = c2c if isinstance(c2c, Path) else write(tmp_path / "c.json", c2c)
    r = run(i, c, tmp_path / "model")
    assert r.returncode == 1
    assert r.stderr.startswith("bench_model: ") and error in r.stderr
    assert r.stderr.count("\n") == 1 and r.stdout == ""
    assert not (tmp_path / "model.md").exists() and not (tmp_path / "model.json").exists()


@pytest.mark.parametrize("args,error", [(["--ghz", "0"], "--ghz 0.0: out of range"),
                                        (["--transfer-ns", "x"], "invalid float value: 'x'"),
                                        (["--smt-yield", "0.5"], "--smt-yield 0.5: out of range"),
                                        (["--c2c-vcpus", "8"], "no 16-byte read (\"small\") rows at 8 vCPUs")])
def test_bad_settings(tmp_path, args, error):
    r = run(*args, INSN, C2C, tmp_path / "model")
    assert r.returncode == 1 and error in r.stderr and r.stderr.count("\n") == 1


def test_seed_table():
    # The seed's 64-thread rows as its cover letter gives them (base, series).
    s = bench_model.SEED
    assert s["default"]["ext4"][64] == ((15.0, 15.7), (68.9, 70.1))
    assert s["default"]["tmpfs"][64] == ((1.6, 1.7), (71.0, 72.0))
    assert s["default"]["xfs"][64] == ((11.3, 11.4), (20.4, 20.5))
    assert s["default"]["blockdev"][64] == ((14.7, 14.7), (28.8, 28.9))
    assert s["off"]["ext4"][64] == ((17.2, 17.2), (217.0, 220.0))
    assert s["off"]["tmpfs"][64] == ((1.8, 1.9), (230.0, 239.0))
    assert all(v[1] == ((1.6, 1.9), (1.7, 2.0)) for v in s["default"].values())


def test_bench_page_model_section(tmp_path):
    bench = tmp_path / "build" / "bench"
    assert run(INSN, C2C, bench / "model").returncode == 0
    (tmp_path / "page.md").write_text("unused\n")
    env = dict(os.environ, BUILD=str(tmp_path / "build"), BENCH_PAGE=str(tmp_path / "page.md"),
               LLVM_VERSION="22")
    p = subprocess.run(["bash", str(SCRIPTS / "bench_page.sh"), "model"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "page.md").read_text()
    assert page.startswith((SCRIPTS / "bench" / "results.head.md").read_text())
    section = page[page.index("<!-- begin model -->"):page.index("<!-- end model -->")]
    assert "## Projected scaling on the seed's machine, from the counts (model)" in section
    assert (bench / "model.md").read_text() in section
    # The committed page has no model section yet; another half keeps it.
    p = subprocess.run(["bash", str(SCRIPTS / "bench_page.sh")], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and (tmp_path / "page.md").read_text().count("<!-- begin model -->") == 1


def test_reads_what_bench_count_report_writes(tmp_path):
    """The model takes bench_count_report.py's own output (guest records
    and plugin regions as in test_reports.py), not just the fixtures."""
    def run_dir(name, modes, region):
        d = tmp_path / name
        d.mkdir()
        recs = [{"bench": "count", "workload": "small", "fs": "xfs", "mode": m, "round": 1, "threads": 2,
                 "pfn": 5, "result": {"ops": 1000}} for m in modes]
        (d / "results.txt").write_text("".join(json.dumps(r) + "\n" for r in recs))
        (d / "plugin.json").write_text("".join(json.dumps(region(m)) + "\n" for m in modes))
        (d / "guest.txt").write_text("accel=tcg smp=2\n")
        return d

    folio = {"addr": "0x1000", "vaddr": hex(0xFFFFEA0000000000 + 5 * 64), "transfers": 500,
             "read_transfers": 0, "what": "struct page pfn 0x5 (folio if head) [_refcount]",
             "pcs": [{"pc": "0xffffffff81000010", "sym": "folio_try_get+0x10", "transfers": 500}]}
    rwsem = {"addr": "0x3000", "vaddr": "0xffff888003000040", "transfers": 600, "read_transfers": 0,
             "what": "direct map, data of pfn 0x3000",
             "pcs": [{"pc": "0xffffffff81000020", "sym": "down_read+0x1a", "transfers": 600}]}

    kernel = {"base": 2340, "on": 2140, "off": 2390}

    def region(top):
        return lambda m: {"complete": True, "ops": 1000, "user": 60000, "kernel": kernel[m] * 1000,
                          "insns": 0, "transfers": sum(t["transfers"] for t in top(m)), "top": top(m)}

    def no_lines(mode):
        return []

    def lines(mode):  # the switch on: the folio's line no longer moves
        return [rwsem] if mode == "on" else [folio, rwsem]

    dirs = {"insn": [run_dir("base-insn", ["base"], region(no_lines)),
                     run_dir("series-insn", ["on", "off"], region(no_lines))],
            "c2c": [run_dir("base-c2c-2", ["base"], region(lines)),
                    run_dir("series-c2c-2", ["on", "off"], region(lines))]}
    for count, ds in dirs.items():
        r = subprocess.run([sys.executable, str(SCRIPTS / "bench_count_report.py"), tmp_path / f"count-{count}", *ds],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    r = run(*PLAIN, tmp_path / "count-insn.json", tmp_path / "count-c2c.json", tmp_path / "model")
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "model.json").read_text())
    xfs = data["counts"]["xfs"]
    assert xfs["base"]["insns"] == 2400 and xfs["series"]["insns"] == 2200
    assert xfs["base"]["lines"] == {"hot folio": {"counted": 0.5, "used": 2}, "i_rwsem": {"counted": 0.6, "used": 2}}
    assert xfs["series"]["lines"]["i_rwsem"] == {"counted": 0.6, "used": 2} and xfs["series"]["other"] == 0
    assert cell(data, "xfs", 64, "series")["capped_by"] == "i_rwsem"
