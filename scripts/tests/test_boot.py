"""A boot that fails before the guest starts fails `make check`, and never
shows the results of an earlier run as its own.

The defect this guards against: after a passing run, `make check ACCEL=kvm`
on a host without usable KVM printed "boot.sh: error: ACCEL=kvm: no usable
KVM here ...", then the earlier run's "1254 passed, 0 failed", and exited 0
(the check target ignored boot.sh's status, and boot.sh died before it
cleared the old results).

No kernel is built and no guest boots: BUILD is a temporary directory with
a stand-in kernel and initramfs, an earlier passing run (fixtures/runs/pass)
in build/results/test-check, and qemu-system-x86_64 a stub first in PATH
that fails (so the KVM probe finds no usable KVM) and logs its calls.
`make check` runs with its prerequisites taken as made (make -o image -o
build): module.sh (nothing to build: no CONFIG_MODULES), boot.sh, results.py.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
OLD_LINE = "37 passed, 0 failed"  # the earlier run's closing line


@pytest.fixture
def host(tmp_path):
    build = tmp_path / "build"
    boot = build / "obj-test" / "arch" / "x86" / "boot"
    boot.mkdir(parents=True)
    (boot / "bzImage").write_text("not a kernel\n")
    (build / "obj-test" / ".config").write_text("CONFIG_KUNIT=y\n")
    (build / "initramfs.cpio").write_text("not an initramfs\n")
    old = build / "results" / "test-check"
    shutil.copytree(FIXTURES / "runs" / "pass", old)
    (old / "summary.txt").write_text((old / "summary.expected").read_text())
    assert (old / "summary.txt").read_text().splitlines()[-1] == OLD_LINE
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    qemu = bin_ / "qemu-system-x86_64"
    qemu.write_text('#!/bin/sh\necho "$*" >>"$QEMU_LOG"\nexit 1\n')
    qemu.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if k not in ("CONFIG", "VARIANT", "TESTS", "SMP", "MEM", "TIMEOUT", "LLVM_VERSION",
                        "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env.update(BUILD=str(build), PATH=f"{bin_}:{env['PATH']}", QEMU_LOG=str(tmp_path / "qemu.log"),
               HOST_CHECK_NESTED="1", ACCEL="kvm")
    return build, old, env, tmp_path / "qemu.log"


def guests_started(qemu_log):
    """QEMU runs that booted the initramfs (the KVM probe boots none)."""
    if not qemu_log.exists():
        return []
    return [l for l in qemu_log.read_text().splitlines() if "-initrd" in l]


def test_boot_sh_clears_the_old_run_first(host):
    build, old, env, qemu_log = host
    p = subprocess.run([str(TOP / "scripts" / "boot.sh")], env=dict(env, MODE="check"),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1
    assert "ACCEL=kvm: no usable KVM here" in p.stderr
    assert sorted(f.name for f in old.iterdir()) == ["boot.rc"]
    assert (old / "boot.rc").read_text() == "1\n"
    assert guests_started(qemu_log) == []


@pytest.mark.parametrize("why,settings", [
    ("ACCEL=kvm: no usable KVM here", {}),
    ("no initramfs at", {"ACCEL": "tcg", "rm": "initramfs.cpio"}),
    ("SMP must be a positive number", {"ACCEL": "tcg", "SMP": "0"}),
])
def test_make_check_fails_and_shows_no_old_results(host, why, settings):
    build, old, env, qemu_log = host
    settings = dict(settings)
    if "rm" in settings:
        (build / settings.pop("rm")).unlink()
    env = dict(env, **settings)
    p = subprocess.run(["make", "--no-print-directory", "-C", str(TOP), "-o", "image", "-o", "build",
                        "check"], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
    assert why in p.stderr
    assert OLD_LINE not in p.stdout and "passed, 0 failed" not in p.stdout
    last = p.stdout.splitlines()[-1]
    assert last.endswith(" failed") and not last.endswith(" 0 failed")
    assert "FAIL: scripts/boot.sh failed (rc=1); its error is above" in p.stdout
    assert not (old / "results.txt").exists()
    assert guests_started(qemu_log) == []


# `make check` on a guest run that fails: the QEMU stub "boots" by writing
# a fixture run to the two serial files boot.sh gives it (console, results).
GUEST_STUB = """#!/bin/sh
n=0
for a in "$@"; do
	case $a in file:*)
		n=$((n + 1))
		if [ $n = 1 ]; then cp "$FAKE_GUEST/console.log" "${a#file:}"; fi
		if [ $n = 2 ]; then cp "$FAKE_GUEST/results.txt" "${a#file:}"; fi
	esac
done
"""


@pytest.mark.parametrize("fixture,tests,rc,last", [
    ("pass", "transhuge-stress,unqueue_bench,rcu_free_test", 0, "37 passed, 0 failed"),
    ("kunit-not-ok", "rcu_free_test-quick", 2, "11 passed, 1 failed"),  # a real "not ok"
    ("unended", "transhuge-stress,unqueue_bench,rcu_free_test", 2, "32 passed, 3 failed"),
    ("kasan", "transhuge-stress,unqueue_bench,rcu_free_test", 2, "36 passed, 1 failed"),
])
def test_make_check_on_a_guest_run(host, fixture, tests, rc, last):
    build, old, env, qemu_log = host
    qemu = Path(env["PATH"].split(":")[0]) / "qemu-system-x86_64"
    qemu.write_text(GUEST_STUB)
    env = dict(env, ACCEL="tcg", TESTS=tests, FAKE_GUEST=str(FIXTURES / "runs" / fixture))
    p = subprocess.run(["make", "--no-print-directory", "-C", str(TOP), "-o", "image", "-o", "build",
                        "check"], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == rc, p.stdout + p.stderr
    assert p.stdout.splitlines()[-1] == last
    assert "host      make host-check" in p.stdout  # counted (skipped inside the host checks)


# The KVM probe where QEMU aborts under KVM (as on a host whose KVM cannot
# set an MSR): bash used to report the abort ("boot.sh: line 76: ...
# Aborted ..."). Now one line names the accelerator and why, and the second
# boot reads the reason from the cache without probing again.
PROBE_ABORTS = """#!/bin/sh
echo "$*" >>"$QEMU_LOG"
case $* in *-initrd*) exit 0 ;; esac
echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
kill -ABRT $$
"""


def test_accelerator_line(host):
    build, old, env, qemu_log = host
    qemu = Path(env["PATH"].split(":")[0]) / "qemu-system-x86_64"
    qemu.write_text(PROBE_ABORTS)
    env = dict(env, ACCEL="auto", MODE="demo")
    if not os.path.exists("/dev/kvm"):
        why = "KVM: no /dev/kvm"
    elif not os.access("/dev/kvm", os.R_OK | os.W_OK):
        why = "KVM: /dev/kvm is not readable and writable by "
    else:
        why = "KVM: QEMU died of SIGABRT: failed to set MSR 0x10a to 0x69"
    for run in (1, 2):
        p = subprocess.run([str(TOP / "scripts" / "boot.sh")], env=env,
                           capture_output=True, text=True, timeout=120)
        out = p.stdout + p.stderr
        assert "Aborted" not in out and not re.search(r"line \d+:", out), out
        lines = [l for l in out.splitlines() if "boot: accelerator" in l]
        assert len(lines) == 1, out
        assert f"boot: accelerator tcg ({why}" in lines[0], out
        if run == 2 and why.startswith("KVM: QEMU"):
            assert lines[0].endswith(", probed earlier in this host boot)"), out
    probes = [l for l in qemu_log.read_text().splitlines() if "-initrd" not in l]
    assert len(probes) <= 1  # the second boot used the cached verdict
