"""`make fstests`: scripts/fstests.sh (host), scripts/guest/fstests (guest)
and scripts/fstests_report.py (the verdict), without a kernel, a guest or
an fstests checkout (CI has none).

- fstests.sh runs on a stub checkout (a `check` that is never run, a
  Makefile that makes ltp/fsx, tests with _begin_fstest tags) with the
  kernel steps (tree, config, build, image) and boot.sh replaced by stubs;
  the boot stub records what boot.sh would get (MODE, CONFIG, VARIANT,
  TIMEOUT, QEMU_ARGS, the disks, guest.conf) and leaves the results a guest
  would (fixtures/fstests).
- The guest script's local.config for each file system, and its run of
  check (a stub check, chrooted into /, as root) with a test that hangs
  past the test limit.
- The report on fixtures/fstests: base and series runs of two file
  systems. Their tmpfs halves are what fstests' real check wrote on the
  host (tmpfs in a private mount namespace, the checkout's generic/249.out
  given an extra line on the series run, a hanging test killed by the
  guest script's watchdog standing for generic/418); the ext4 halves are
  written in the same formats. Verdicts: two regressions (tmpfs
  generic/249 fails, generic/418 times out), a base failure (ext4
  generic/091), two tests not run (tmpfs generic/008, ext4 generic/430).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
TOP = SCRIPTS.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "fstests"
GUEST = SCRIPTS / "guest" / "fstests"
QEMU = shutil.which("qemu-system-x86_64")

# The stub checkout's tests and their groups.
STUB_TESTS = {
    "generic/001": "auto quick rw",
    "generic/075": "rw udf auto quick",
    "generic/249": "auto quick rw",
    "generic/418": "auto rw",
    "generic/013": "other ioctl udf auto quick",
    "generic/500": "auto stress rw",
    "ext4/001": "auto quick rw",
    "xfs/001": "auto quick rw",
}
MAKEFILE = """all:
\t@echo "built in $$(pwd)" >>"$$FSTESTS_MAKELOG"
\tmkdir -p ltp && printf '#!/bin/sh\\n' >ltp/fsx && chmod +x ltp/fsx
"""
BOOT_STUB = r"""#!/bin/bash
# boot.sh's stand-in: records what it was given, leaves a guest's results.
set -eu
echo "VARIANT=$VARIANT MODE=$MODE CONFIG=$CONFIG TIMEOUT=$TIMEOUT MEM=$MEM" >>"$BUILD/boot.log"
echo "$QEMU_ARGS" >"$BUILD/qemu-args.$VARIANT"
res=$(tr ' ' '\n' <<<"$QEMU_ARGS" | sed -n 's/^local,path=\([^,]*\),mount_tag=fstres.*/\1/p')
for d in $(tr ' ' '\n' <<<"$QEMU_ARGS" | sed -n 's/^file=\([^,]*\),if=virtio.*/\1/p'); do
	echo "$d $(stat -c %s "$d") $(du -k "$d" | cut -f1)" >>"$BUILD/disks.$VARIANT"
done
cp "$res/guest.conf" "$BUILD/guest.conf.$VARIANT"
run=$BUILD/results/$CONFIG-$MODE
[ "$VARIANT" = base ] && run+=-base
mkdir -p "$run"
cp -r "$FIXTURES/$VARIANT/." "$res/"
mv "$res/results.txt" "$res/boot.rc" "$res/qemu.rc" "$run/"
"""


def make_checkout(path):
    (path / "common").mkdir(parents=True)
    (path / "common" / "rc").write_text("# stub\n")
    (path / "check").write_text("#!/bin/bash\necho 'the stub check is never run on the host'\nexit 1\n")
    (path / "check").chmod(0o755)
    (path / "Makefile").write_text(MAKEFILE)
    (path / ".git").mkdir()
    (path / ".git" / "HEAD").write_text("ref: refs/heads/master\n")
    for name, tags in STUB_TESTS.items():
        d, n = name.split("/")
        (path / "tests" / d).mkdir(parents=True, exist_ok=True)
        t = path / "tests" / d / n
        t.write_text(f"#! /bin/bash\n# FS QA Test {n}\n. ./common/preamble\n_begin_fstest {tags}\n"
                     "echo 'Silence is golden'\nstatus=0\nexit\n")
        t.chmod(0o755)
        (path / "tests" / d / f"{n}.out").write_text(f"QA output created by {n}\nSilence is golden\n")
    return path


def snapshot(path):
    """Every file under path with its size, time and content."""
    return {str(f.relative_to(path)): (f.stat().st_size, f.stat().st_mtime_ns, f.read_bytes())
            for f in sorted(path.rglob("*")) if f.is_file()}


@pytest.fixture
def host(tmp_path):
    """A copy of the scripts with the kernel steps stubbed, a stub checkout,
    and the environment to run fstests.sh in."""
    scripts = tmp_path / "scripts"
    (scripts / "guest").mkdir(parents=True)
    for f in ("lib.sh", "fstests.sh", "fstests_report.py", "results.py"):
        shutil.copy2(SCRIPTS / f, scripts / f)
    shutil.copy2(GUEST, scripts / "guest" / "fstests")
    (scripts / "configs").symlink_to(SCRIPTS / "configs")
    for f in ("tree.sh", "config.sh", "build.sh", "image.sh"):
        (scripts / f).write_text(f'#!/bin/sh\necho "{f} ${{VARIANT:-series}}" >>"$BUILD/ran"\n')
        (scripts / f).chmod(0o755)
    (scripts / "boot.sh").write_text(BOOT_STUB)
    (scripts / "boot.sh").chmod(0o755)
    # The host tools fstests.sh looks for (make deps installs them; CI has
    # not all of them): stand-ins, never run.
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("qemu-system-x86_64", "autoconf", "libtoolize", "xfs_io", "mkfs.xfs", "xfs_repair",
                 "mkfs.ext4", "e2fsck", "gcc"):
        (bin_ / tool).write_text("#!/bin/sh\nexit 1\n")
        (bin_ / tool).chmod(0o755)
    checkout = make_checkout(tmp_path / "xfstests-dev")
    build = tmp_path / "build"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FSTESTS") and k not in (
               "CONFIG", "VARIANT", "TESTS", "SMP", "MEM", "TIMEOUT", "LLVM_VERSION", "ACCEL",
               "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env.update(BUILD=str(build), PATH=f"{bin_}:{env['PATH']}", FSTESTS=str(checkout),
               FSTESTS_MAKELOG=str(tmp_path / "make.log"), FIXTURES=str(FIXTURES))
    return dict(scripts=scripts, checkout=checkout, build=build, env=env, tmp=tmp_path)


def fstests_sh(host, *args, **env):
    e = dict(host["env"])
    for k, v in env.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return subprocess.run(["bash", str(host["scripts"] / "fstests.sh"), *args], capture_output=True,
                          text=True, env=e, timeout=300)


# --- fstests.sh: bad input, before any build or boot -------------------------

@pytest.mark.parametrize("env,msg", [
    ({"FSTESTS": None}, "no FSTESTS=: make fstests FSTESTS=<path to an xfstests-dev checkout> "
                        "(git clone git://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git)"),
    ({"FSTESTS": "/nonexistent"}, "FSTESTS=/nonexistent is not a directory"),
    # An empty directory, not "/": CI runs from /check/... (a directory
    # named check at the root).
    ({"FSTESTS": "{empty}"}, "is not an xfstests-dev checkout (no check)"),
    ({"FSTESTS": "{checkdir}"}, "is not an xfstests-dev checkout (no check)"),
    ({"FSTESTS_FS": "ext4,nfs"}, "FSTESTS_FS: unknown file system 'nfs' (tmpfs ext4 xfs)"),
    ({"FSTESTS_FS": "ext4,ext4"}, "FSTESTS_FS: 'ext4' twice"),
    ({"FSTESTS_GROUP": "rw,nosuch"}, "FSTESTS_GROUP: no test of"),
    ({"FSTESTS_GROUP": "r w"}, "FSTESTS_GROUP: 'r w' is not a group"),
    ({"FSTESTS_TESTS": "generic/999"}, "FSTESTS_TESTS: no test generic/999 in"),
    ({"FSTESTS_TESTS": "generic/1"}, "FSTESTS_TESTS: 'generic/1' is not a test"),
    ({"FSTESTS_TESTS": "xfs/001", "FSTESTS_FS": "ext4"},
     "FSTESTS_TESTS: xfs/001 runs on xfs only, which FSTESTS_FS (ext4) does not have"),
    ({"FSTESTS_EXCLUDE": "generic/999"}, "FSTESTS_EXCLUDE: no test generic/999 in"),
    ({"FSTESTS_EXCLUDE": "nosuch"}, "FSTESTS_EXCLUDE: no test of"),
    ({"FSTESTS_EXCLUDE": "auto"}, "no test left to run"),
    ({"FSTESTS_VARIANTS": "base,other"}, "FSTESTS_VARIANTS: unknown 'other' (base, series)"),
    ({"FSTESTS_TEST_LIMIT": "30m"}, "FSTESTS_TEST_LIMIT must be a number of seconds, not '30m'"),
    ({"FSTESTS_TIMEOUT": "0"}, "FSTESTS_TIMEOUT must be a number of seconds, not '0'"),
    ({"FSTESTS_DISK_SIZE": "512M"}, "FSTESTS_DISK_SIZE must look like 5G, not '512M'"),
    ({"CONFIG": "test"}, "make fstests builds CONFIG=fstests (scripts/configs/fstests.config), not CONFIG=test"),
    ({"MEM": "lots"}, "MEM must look like 2G or 1536M"),
])
@pytest.mark.parametrize("how", ["--check", "run"])
def test_bad_input_fails_in_one_line_before_any_build(host, env, msg, how):
    if env.get("FSTESTS") in ("{empty}", "{checkdir}"):
        d = host["tmp"] / "not-a-checkout"
        d.mkdir()
        if env["FSTESTS"] == "{checkdir}":
            # check is a directory, not the script
            for f in ("check", "common/rc", "tests/generic"):
                (d / f).mkdir(parents=True)
        env = dict(env, FSTESTS=str(d))
    p = fstests_sh(host, *([how] if how != "run" else []), **env)
    assert p.returncode != 0
    assert msg in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not (host["build"] / "ran").exists(), "a step ran"
    assert not (host["build"] / "boot.log").exists()
    assert not (host["build"] / "fstests-src").exists()


def test_check_passes_good_input_and_does_nothing(host):
    p = fstests_sh(host, "--check", FSTESTS_FS="xfs", FSTESTS_GROUP="rw", FSTESTS_EXCLUDE="stress")
    assert p.returncode == 0, p.stderr
    assert not (host["build"] / "ran").exists() and not (host["build"] / "fstests-src").exists()


# --- fstests.sh: the selection -----------------------------------------------

def lists(host, **env):
    p = fstests_sh(host, "--list", **env)
    assert p.returncode == 0, p.stderr
    return {l.split(": ")[0]: l.split(": ", 1)[1].split() if ": " in l else []
            for l in p.stdout.splitlines()}


def test_default_selection_is_the_pagecache_list_in_the_checkout(host):
    # Of the stub's tests, 013, 075, 249 and 418 are in the list; 001 and
    # 500 are not, nor the file systems' own directories.
    want = ["generic/013", "generic/075", "generic/249", "generic/418"]
    assert lists(host) == {"tmpfs": want, "ext4": want, "xfs": want}


def test_the_short_selection_is_its_part_of_the_list_in_the_checkout(host):
    # Of the stub's tests only 075 is one of the twelve; 013, 249 and 418
    # of the whole list: 418 is in both.
    want = ["generic/075", "generic/418"]
    assert lists(host, FSTESTS_GROUP="pagecache-short") == {"tmpfs": want, "ext4": want, "xfs": want}
    assert lists(host, FSTESTS_GROUP="pagecache,pagecache-short", FSTESTS_FS="ext4") == {
        "ext4": ["generic/013", "generic/075", "generic/249", "generic/418"]}


def test_groups_take_generic_and_the_file_system_s_own_tests(host):
    got = lists(host, FSTESTS_GROUP="rw", FSTESTS_EXCLUDE="stress,generic/249", FSTESTS_FS="ext4,xfs")
    assert got == {"ext4": ["ext4/001", "generic/001", "generic/075", "generic/418"],
                   "xfs": ["generic/001", "generic/075", "generic/418", "xfs/001"]}


def test_tests_override_groups_and_a_file_system_without_tests_is_left_out(host):
    got = lists(host, FSTESTS_TESTS="xfs/001,generic/075", FSTESTS_GROUP="rw", FSTESTS_FS="tmpfs,xfs")
    assert got == {"tmpfs": ["generic/075"], "xfs": ["generic/075", "xfs/001"]}
    assert lists(host, FSTESTS_TESTS="xfs/001") == {"xfs": ["xfs/001"]}


# --- fstests.sh: the whole flow on stubs -------------------------------------

def test_flow_builds_a_copy_boots_both_kernels_and_reports(host):
    before = snapshot(host["checkout"])
    p = fstests_sh(host)
    build = host["build"]
    # The fixtures' verdict: two regressions.
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.splitlines()[-1] == "fstests: 3 passed, 2 failed"
    assert "fstests: regression: tmpfs: generic/249: base passed, series failed" in p.stdout
    assert (build / "fstests.md").exists() and (build / "fstests.json").exists()

    # The checkout is untouched; the copy (without .git) is what was built.
    assert snapshot(host["checkout"]) == before
    made = (host["tmp"] / "make.log").read_text().splitlines()
    assert made == [f"built in {build / 'fstests-src'}"]
    assert (build / "fstests-src" / "ltp" / "fsx").exists()
    assert not (build / "fstests-src" / ".git").exists()
    assert (build / "fstests-src" / "tests" / "generic" / "075").exists()

    # The steps: the series tree and the initramfs, then per kernel its
    # tree, configuration and build, each before its boot.
    assert (build / "ran").read_text().splitlines() == [
        "tree.sh series", "image.sh series",
        "tree.sh base", "config.sh base", "build.sh base",
        "tree.sh series", "config.sh series", "build.sh series"]
    n = 4 * 3  # four tests of the default selection on three file systems
    assert (build / "boot.log").read_text().splitlines() == [
        f"VARIANT={v} MODE=fstests CONFIG=fstests TIMEOUT={1800 + 600 * n} MEM=4G" for v in ("base", "series")]

    for v in ("base", "series"):
        res = build / "results" / f"fstests-{v}"
        args = (build / f"qemu-args.{v}").read_text().split()
        assert args == [
            "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
            "-virtfs", f"local,path={build}/fstests-src,mount_tag=fstests,security_model=none,readonly=on",
            "-virtfs", f"local,path={res},mount_tag=fstres,security_model=none",
            "-drive", f"file={build}/fstests-disks-{v}/test.img,if=virtio,format=raw,cache=unsafe",
            "-drive", f"file={build}/fstests-disks-{v}/scratch.img,if=virtio,format=raw,cache=unsafe"]
        # Fresh sparse 5G disks for each boot, gone afterwards.
        for line in (build / f"disks.{v}").read_text().splitlines():
            _, size, used_kb = line.split()
            assert int(size) == 5 << 30 and int(used_kb) < 1024
        conf = (build / f"guest.conf.{v}").read_text()
        assert f"FSTESTS_VARIANT={v}\n" in conf
        assert "FSTESTS_FS='tmpfs ext4 xfs'\n" in conf
        for fs in ("tmpfs", "ext4", "xfs"):
            assert f"FSTESTS_LIST_{fs}='generic/013 generic/075 generic/249 generic/418'\n" in conf
        assert "FSTESTS_TEST_LIMIT=1800\n" in conf
        assert "FSTESTS_TEST_DEV=/dev/vda\nFSTESTS_SCRATCH_DEV=/dev/vdb\n" in conf
        # What boot.sh kept is beside fstests' results; its own directory gone.
        assert (res / "results.txt").exists() and (res / "boot.rc").exists()
        assert (res / "tmpfs" / "result.xml").exists()
    assert not list(build.glob("fstests-disks*"))
    assert not (build / "results" / "fstests-fstests").exists()
    assert not (build / "results" / "fstests-fstests-base").exists()


def test_copy_is_built_again_only_when_the_checkout_changed(host):
    make_log = host["tmp"] / "make.log"
    assert fstests_sh(host).returncode == 1
    assert fstests_sh(host, FSTESTS_VARIANTS="series").returncode == 1  # base: the last run's
    assert len(make_log.read_text().splitlines()) == 1
    test = host["checkout"] / "tests" / "generic" / "075"
    test.write_text(test.read_text() + "# changed\n")
    p = fstests_sh(host, FSTESTS_VARIANTS="series")
    assert p.returncode == 1, p.stderr
    assert len(make_log.read_text().splitlines()) == 2
    assert (host["build"] / "fstests-src" / "tests" / "generic" / "075").read_text().endswith("# changed\n")


def test_a_failed_fstests_build_stops_before_the_kernel(host):
    (host["checkout"] / "Makefile").write_text("all:\n\t@echo 'no xfs/xfs.h'; exit 1\n")
    p = fstests_sh(host)
    assert p.returncode != 0
    assert "building fstests failed" in p.stderr
    assert not (host["build"] / "ran").exists()
    # Not taken as built: the next run copies and builds again.
    assert not (host["build"] / "fstests-src.stamp").exists()


@pytest.mark.skipif(QEMU is None, reason="no qemu-system-x86_64")
def test_qemu_accepts_the_shares_and_disks(host, tmp_path):
    """QEMU_ARGS as fstests.sh passes it, to a QEMU that stops before the
    first instruction (-S): no kernel runs."""
    assert fstests_sh(host).returncode == 1
    args = (host["build"] / "qemu-args.series").read_text().split()
    disks = host["build"] / "fstests-disks-series"
    disks.mkdir()
    for d in ("test.img", "scratch.img"):
        with open(disks / d, "wb") as f:
            f.truncate(1 << 30)
    p = subprocess.run([QEMU, "-machine", "q35", "-accel", "tcg", "-S", "-nodefaults", "-display", "none",
                        "-monitor", "stdio", *args], input="info qtree\nquit\n", capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("virtio-9p-pci") == 3 and p.stdout.count("virtio-blk-pci") == 2, p.stdout


# --- the guest script ---------------------------------------------------------

def local_config(fs):
    return subprocess.run(["bash", str(GUEST), "local-config", fs], capture_output=True, text=True)


@pytest.mark.parametrize("fs,dev,scratch", [
    ("tmpfs", "tmpfs_test", "tmpfs_scratch"),
    ("ext4", "/dev/vda", "/dev/vdb"),
    ("xfs", "/dev/vda", "/dev/vdb"),
])
def test_guest_local_config(fs, dev, scratch):
    p = local_config(fs)
    assert p.returncode == 0, p.stderr
    # As check sources it: every setting exported.
    e = subprocess.run(["bash", "-c", f". /dev/stdin <<'EOF'\n{p.stdout}EOF\nenv"], capture_output=True,
                       text=True, env={"PATH": os.environ["PATH"]}).stdout.splitlines()
    for want in (f"FSTYP={fs}", f"TEST_DEV={dev}", "TEST_DIR=/run/fstests/test", f"SCRATCH_DEV={scratch}",
                 "SCRATCH_MNT=/run/fstests/scratch", f"RESULT_BASE=/run/fstests/results/{fs}",
                 "LOGGER_PROG=true"):
        assert want in e, (want, p.stdout)


def test_guest_tmpfs_local_config_is_the_one_check_ran_with():
    """The fixture's tmpfs local.config is the one a real check ran on."""
    assert local_config("tmpfs").stdout == (FIXTURES / "series" / "tmpfs" / "local.config").read_text()


def test_guest_local_config_refuses_other_file_systems():
    p = local_config("btrfs")
    assert p.returncode != 0 and "unknown file system 'btrfs'" in p.stderr


STUB_CHECK = r"""#!/bin/bash
# check's stand-in: sources HOST_OPTIONS and prints as check does.
. "$HOST_OPTIONS"
mkdir -p "$RESULT_BASE"
env >"$RESULT_BASE/env"
echo "$*" >"$RESULT_BASE/args"
echo "FSTYP         -- $FSTYP"
[ "$1" = -R ] && shift 2
for t in "$@"; do
	printf '%-12s' "$t"
	bash -c "exec ./tests/$t" >/dev/null 2>&1
	sts=$?
	if [ $sts = 0 ]; then
		echo " 1s"
	else
		echo "[failed, exit status $sts]- output mismatch (see $RESULT_BASE/$t.out.bad)"
	fi
done 2>/dev/null # check keeps bash's "Killed" in the test's output
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
def test_guest_runs_check_and_kills_a_test_past_the_limit(tmp_path):
    fst = tmp_path / "fst"
    src = fst / "src"
    (src / "tests" / "generic").mkdir(parents=True)
    (fst / "results").mkdir()
    (src / "check").write_text(STUB_CHECK)
    for name, body in (("001", "exit 0"), ("002", f"sleep 30 &\necho $! >{tmp_path}/sleep.pid\nwait"),
                       ("003", "exit 0")):
        (src / "tests" / "generic" / name).write_text(f"#!/bin/bash\n{body}\n")
    for f in [src / "check", *(src / "tests" / "generic").iterdir()]:
        f.chmod(0o755)
    port = tmp_path / "port"
    kmsg = tmp_path / "kmsg"
    env = dict(os.environ, FSTESTS_SOURCED="1", FSTESTS_ROOT="/", FSTESTS_DIR=str(fst), FSTESTS_OUT=str(port),
               FSTESTS_KMSG=str(kmsg), FSTESTS_TEST_LIMIT="2",
               FSTESTS_LIST_tmpfs="generic/001 generic/002 generic/003")
    p = subprocess.run(["bash", "-c", f". {GUEST} && run_fs tmpfs"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    res = fst / "results" / "tmpfs"
    lines = port.read_text().splitlines()
    assert lines[0] == "@@@ begin fstests tmpfs" and lines[-1] == "@@@ end fstests tmpfs rc=0"
    assert "generic/001  1s" in lines and "generic/003  1s" in lines
    assert any(l.startswith("generic/002 [failed, exit status 137]") for l in lines), lines
    assert (res / "timeouts").read_text() == "generic/002 2\n"
    log = kmsg.read_text().splitlines()
    assert log[0] == "series: fstests on tmpfs" and log[1].startswith("fstests: generic/002 killed after ")
    # check ran in a clean environment with the generated config.
    assert (res / "args").read_text() == "-R xunit generic/001 generic/002 generic/003\n"
    env_seen = (res / "env").read_text().splitlines()
    assert f"HOST_OPTIONS={fst}/results/tmpfs/local.config" in env_seen
    assert f"RESULT_BASE={fst}/results/tmpfs" in env_seen and "FSTESTS_SOURCED=1" not in env_seen
    # What the test started went with it.
    sleep = Path(f"/proc/{(tmp_path / 'sleep.pid').read_text().strip()}/cmdline")
    assert not sleep.exists() or b"sleep" not in sleep.read_bytes()
    # The report reads it: generic/002 timed out.
    (fst / "results" / "guest.conf").write_text(
        "FSTESTS_FS='tmpfs'\nFSTESTS_LIST_tmpfs='generic/001 generic/002 generic/003'\nFSTESTS_TEST_LIMIT=2\n")
    (fst / "results" / "results.txt").write_text(port.read_text() + "@@@ done\n")
    base = tmp_path / "base"
    shutil.copytree(fst / "results", base)
    (base / "tmpfs" / "timeouts").unlink()
    (base / "tmpfs" / "check.output").write_text("generic/001  1s\ngeneric/002  1s\ngeneric/003  1s\n")
    r, data = report(tmp_path, base, fst / "results")
    assert r.returncode == 1
    assert data["tests"]["tmpfs"]["generic/002"]["series"] == {
        "state": "timeout", "why": ["killed after 2s (FSTESTS_TEST_LIMIT)"]}


def test_guest_runs_no_check_without_tests(tmp_path):
    """check without tests would run its whole auto group."""
    port = tmp_path / "port"
    env = dict(os.environ, FSTESTS_SOURCED="1", FSTESTS_ROOT=str(tmp_path), FSTESTS_DIR="/fst",
               FSTESTS_OUT=str(port), FSTESTS_KMSG=str(tmp_path / "kmsg"), FSTESTS_LIST_tmpfs="")
    p = subprocess.run(["bash", "-c", f". {GUEST} && run_fs tmpfs"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert port.read_text().splitlines() == [
        "@@@ begin fstests tmpfs", "fstests: no test for tmpfs", "@@@ end fstests tmpfs rc=2"]


# --- the report ---------------------------------------------------------------

def report(tmp_path, base, series):
    prefix = tmp_path / "out" / "fstests"
    p = subprocess.run([sys.executable, str(SCRIPTS / "fstests_report.py"), str(prefix), str(base), str(series)],
                       capture_output=True, text=True)
    data = json.loads((prefix.parent / "fstests.json").read_text()) if p.returncode in (0, 1) else None
    return p, data


def copy_run(tmp_path, variant, name=None):
    dst = tmp_path / (name or variant)
    shutil.copytree(FIXTURES / variant, dst)
    return dst


def test_report_fixture_verdicts(tmp_path):
    p, data = report(tmp_path, FIXTURES / "base", FIXTURES / "series")
    assert p.returncode == 1
    assert p.stdout.splitlines()[-1] == "fstests: 3 passed, 2 failed"
    got = {(g["fs"], g["test"]): (g["base"], g["series"]) for g in data["regressions"]}
    assert got == {("tmpfs", "generic/249"): ("pass", "fail"), ("tmpfs", "generic/418"): ("pass", "timeout")}
    reg = {g["test"]: g["why"] for g in data["regressions"]}
    assert reg["generic/249"] == ["- output mismatch (see /run/fstests/results/tmpfs/generic/249.out.bad)",
                                  "-an extra line"]
    assert reg["generic/418"] == ["killed after 15s (FSTESTS_TEST_LIMIT)"]
    # Failing on both: the base's, with its reason.
    assert [(g["fs"], g["test"]) for g in data["base_failures"]] == [("ext4", "generic/091")]
    assert data["base_failures"][0]["why"][0].startswith("- output mismatch")
    assert "+fsx -N 10000 -l 500000 -r PSIZE -t BSIZE -w BSIZE -Z -R -W failed: see 091.0.fsxlog" in \
        data["base_failures"][0]["why"]
    # Not run, with fstests' reason.
    assert [(g["fs"], g["test"], g["why"]) for g in data["notrun"]] == [
        ("tmpfs", "generic/008", ["xfs_io fzero  failed (old kernel/wrong fs?)"]),
        ("ext4", "generic/430", ["xfs_io copy_range  failed (old kernel/wrong fs?)"])]
    md = (tmp_path / "out" / "fstests.md").read_text()
    assert "| tmpfs | 4 passed, 1 not run | 2 passed, 1 failed, 1 not run, 1 timed out |" in md
    assert "| ext4 | 1 passed, 1 failed, 1 not run | 1 passed, 1 failed, 1 not run |" in md
    assert "## Regressions: 2" in md and "## Failing on both (the base's): 1" in md and "## Not run: 2" in md


def test_report_same_results_pass(tmp_path):
    p, data = report(tmp_path, FIXTURES / "base", FIXTURES / "base")
    assert p.returncode == 0, p.stdout
    assert p.stdout.splitlines()[-1] == "fstests: 5 passed, 0 failed"
    assert data["regressions"] == [] and len(data["base_failures"]) == 1 and len(data["notrun"]) == 2


def test_report_reads_check_output_where_the_xunit_report_stops(tmp_path):
    """A check killed in the middle: result.xml has the tests before, the
    output names the one that was running; the rest were never reached."""
    series = copy_run(tmp_path, "series")
    (series / "ext4" / "result.xml").unlink()
    out = (series / "ext4" / "check.output").read_text().splitlines()
    cut = out[:out.index("generic/075        12s") + 1] + ["generic/091       "]
    (series / "ext4" / "check.output").write_text("\n".join(cut) + "\n")
    (series / "qemu.rc").write_text("124\n")
    txt = (series / "results.txt").read_text()
    (series / "results.txt").write_text(txt[:txt.index("@@@ begin fstests ext4")])
    p, data = report(tmp_path, FIXTURES / "base", series)
    ext4 = data["tests"]["ext4"]
    assert ext4["generic/075"]["series"]["state"] == "pass"
    assert ext4["generic/091"]["series"] == {
        "state": "timeout", "why": ["running when the boot hit its time limit (FSTESTS_TIMEOUT)"]}
    assert ext4["generic/430"]["series"] == {"state": "missing", "why": ["never reached"]}
    # 091 fails on base: not a regression; 430 is not run on base, and not
    # reached on the series: a regression. The guest did not finish: +1.
    assert p.stdout.splitlines()[-1] == "fstests: 3 passed, 4 failed"
    assert "the series guest stopped before its init finished" in p.stdout
    # Without the time limit it is the guest that stopped: a crash.
    (series / "qemu.rc").write_text("0\n")
    p, data = report(tmp_path, FIXTURES / "base", series)
    assert data["tests"]["ext4"]["generic/091"]["series"]["state"] == "crash"


def test_report_compares_the_file_systems_the_series_run_was_asked_for(tmp_path):
    """A series run of FSTESTS_FS=tmpfs against a base run of tmpfs and ext4:
    ext4 is not compared (not a regression of every base test), and said so."""
    series = copy_run(tmp_path, "base", "series-tmpfs")
    conf = (series / "guest.conf").read_text()
    (series / "guest.conf").write_text(conf.replace("FSTESTS_FS='tmpfs ext4'", "FSTESTS_FS='tmpfs'"))
    p, data = report(tmp_path, FIXTURES / "base", series)
    assert p.returncode == 0, p.stdout
    assert data["base_only"] == ["ext4"] and [r["fs"] for r in data["rows"]] == ["tmpfs"]
    assert "Run on base only, not compared" in (tmp_path / "out" / "fstests.md").read_text()


def test_report_notrun_on_base_and_failing_on_series_is_a_regression(tmp_path):
    series = copy_run(tmp_path, "series")
    xml = (series / "ext4" / "result.xml").read_text()
    (series / "ext4" / "result.xml").write_text(xml.replace(
        '<skipped message="xfs_io copy_range  failed (old kernel/wrong fs?)" />',
        '<failure message="- output mismatch (see 430.out.bad)" type="TestFail" />'))
    p, data = report(tmp_path, FIXTURES / "base", series)
    assert ("ext4", "generic/430", "notrun", "fail") in {
        (g["fs"], g["test"], g["base"], g["series"]) for g in data["regressions"]}


def test_report_a_test_passing_on_base_and_not_run_on_series_is_a_regression(tmp_path):
    series = copy_run(tmp_path, "series")
    xml = (series / "ext4" / "result.xml").read_text()
    (series / "ext4" / "result.xml").write_text(xml.replace(
        '<testcase classname="xfstests.global" name="generic/075" time="12">\n\t</testcase>',
        '<testcase classname="xfstests.global" name="generic/075" time="0">\n'
        '\t\t<skipped message="fsx not built" />\n\t</testcase>'))
    p, data = report(tmp_path, FIXTURES / "base", series)
    assert ("ext4", "generic/075", "pass", "notrun") in {
        (g["fs"], g["test"], g["base"], g["series"]) for g in data["regressions"]}


def test_report_kernel_report_only_on_series_fails(tmp_path):
    base = copy_run(tmp_path, "base")
    series = copy_run(tmp_path, "base", "series")
    warn = "[  120.5] WARNING: CPU: 1 PID: 77 at mm/filemap.c:123 filemap_read+0x1a/0x200"
    txt = (series / "results.txt").read_text()
    (series / "results.txt").write_text(txt.replace("@@@ end dmesg boot", warn + "\n@@@ end dmesg boot"))
    p, data = report(tmp_path, base, series)
    assert p.returncode == 1 and len(data["new_reports"]) == 1
    assert p.stdout.splitlines()[-1] == "fstests: 5 passed, 1 failed"
    # The same report on base (other pid, CPU, offsets) is the base's.
    txt = (base / "results.txt").read_text()
    (base / "results.txt").write_text(txt.replace(
        "@@@ end dmesg boot", "[   99.0] WARNING: CPU: 0 PID: 12 at mm/filemap.c:123 filemap_read+0x1b/0x200\n"
        "@@@ end dmesg boot"))
    p, data = report(tmp_path, base, series)
    assert p.returncode == 0 and data["new_reports"] == []


def test_report_a_run_that_could_not_set_up_is_an_error(tmp_path):
    series = copy_run(tmp_path, "series")
    (series / "results.txt").write_text(
        "@@@ begin fstests setup\nmount: mounting hostroot on /newroot failed: No such device\n"
        "@@@ end fstests setup rc=1\n@@@ done\n")
    for fs in ("tmpfs", "ext4"):
        shutil.rmtree(series / fs)
    p, _ = report(tmp_path, FIXTURES / "base", series)
    assert p.returncode == 2
    assert "could not set up fstests" in p.stderr and "mounting hostroot" in p.stderr


def test_report_no_results_is_an_error(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    p, _ = report(tmp_path, FIXTURES / "base", empty)
    assert p.returncode == 2 and "no fstests results (did the guest boot? no results.txt)" in p.stderr


def test_report_a_stuck_test_names_why_the_rest_never_ran(tmp_path):
    series = copy_run(tmp_path, "series")
    shutil.rmtree(series / "ext4")
    txt = (series / "results.txt").read_text()
    (series / "results.txt").write_text(txt[:txt.index("@@@ begin fstests ext4")] + "@@@ done\n")
    (series / "stopped").write_text("generic/418 could not be killed (stuck in the kernel); nothing ran after it\n")
    p, data = report(tmp_path, FIXTURES / "base", series)
    assert data["tests"]["ext4"]["generic/075"]["series"] == {
        "state": "missing",
        "why": ["never reached: generic/418 could not be killed (stuck in the kernel); nothing ran after it"]}


# --- the kernel configuration -------------------------------------------------

TREE = TOP / "build" / "tree"


@pytest.mark.skipif(not (TREE / "Kconfig").exists(), reason="no assembled tree (make tree)")
def test_fstests_config_names_only_options_that_exist():
    """config.sh fails a build on an option that does not come out set: a
    misspelt name would cost a configure step; here it costs nothing."""
    frag = (SCRIPTS / "configs" / "fstests.config").read_text().splitlines()
    assert frag[0] == "#include test.config"
    names = [l.split("=")[0][len("CONFIG_"):] for l in frag if l.startswith("CONFIG_")]
    assert names
    p = subprocess.run(["grep", "-rhoE", "--include=Kconfig*", r"^(menu)?config [A-Za-z0-9_]+$", str(TREE)],
                       capture_output=True, text=True)
    known = {l.split()[1] for l in p.stdout.splitlines()}
    assert [n for n in names if n not in known] == []
