"""A kernel build killed in the middle does not break every later build.

The defect this guards against: a `make series-check` killed at a session's
end left drivers/acpi/acpica/.nsarguments.o.cmd cut short in
build/obj-check-perf, and the next run failed its perf build at every patch
("unterminated call to function 'wildcard': missing ')'"). kmake
(scripts/lib.sh) now marks a build directory while make runs in it; a mark
left behind means the build was killed, and the targets whose .cmd files
that build wrote are removed, so that Kbuild builds them again.

No kernel is built: `make` is a stub first in PATH that writes a .cmd file
and a target, and is killed halfway through when asked to.
"""

import os
import subprocess
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]

STUB = """#!/bin/bash
# Stand-in for make: writes one target and its .cmd, the .cmd in two steps.
o=${O:?}
for a in "$@"; do case $a in O=*) o=${a#O=} ;; esac; done
mkdir -p "$o/drivers"
echo object > "$o/drivers/new.o"
printf 'savedcmd_drivers/new.o := clang\\ndeps := $(wildcard include/config/' > "$o/drivers/.new.o.cmd"
# Killed with the shell that runs kmake, as a session's end or ^C kills both.
[ -n "$KILL_ME" ] && kill -9 $PPID $$
printf 'A)\\n' >> "$o/drivers/.new.o.cmd"
"""


def kmake(tmp_path, obj, **env):
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    stub = bindir / "make"
    stub.write_text(STUB)
    stub.chmod(0o755)
    script = f'. "{TOP}/scripts/lib.sh"; TREE=/nonexistent; LLVM_VERSION=19; kmake "{obj}" bzImage'
    e = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", O=str(obj), **env)
    return subprocess.run(["bash", "-c", script], env=e, capture_output=True, text=True)


def test_a_killed_build_is_mended_by_the_next(tmp_path):
    obj = tmp_path / "obj"
    (obj / "drivers").mkdir(parents=True)
    old_cmd = obj / "drivers" / ".old.o.cmd"
    old_cmd.write_text("savedcmd_drivers/old.o := clang\n")
    (obj / "drivers" / "old.o").write_text("object\n")
    time.sleep(0.05)

    r = kmake(tmp_path, obj, KILL_ME="1")
    assert r.returncode != 0
    cut = (obj / "drivers" / ".new.o.cmd").read_text()
    assert not cut.endswith("\n")  # what Kbuild would stop at
    assert (obj / ".kmake-running").exists()

    r = subprocess.run(["bash", "-c", f'. "{TOP}/scripts/lib.sh"; kmake_mend "{obj}"'],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "the last build in" in r.stderr and "1 targets" in r.stderr
    assert not (obj / "drivers" / ".new.o.cmd").exists()
    assert not (obj / "drivers" / "new.o").exists()
    assert not (obj / ".kmake-running").exists()
    # Written before the killed build: kept.
    assert old_cmd.exists() and (obj / "drivers" / "old.o").exists()

    r = kmake(tmp_path, obj)
    assert r.returncode == 0, r.stderr
    assert (obj / "drivers" / ".new.o.cmd").read_text().endswith("A)\n")


def test_a_build_that_ends_leaves_no_mark(tmp_path):
    obj = tmp_path / "obj"
    r = kmake(tmp_path, obj)
    assert r.returncode == 0, r.stderr
    assert not (obj / ".kmake-running").exists()
    assert "interrupted" not in r.stderr
    r = kmake(tmp_path, obj)
    assert "interrupted" not in r.stderr
