"""scripts/kselftests.sh on a fresh clone, and its static-PIE check.

The defect this guards against: kselftests.sh asked which built binaries
were not static PIEs before the first build, when the binary directory did
not exist yet; `find` failed, pipefail and set -e ended the script at once,
without a word, and CI's fresh clone stopped at "make: *** [Makefile:81:
kselftests] Error 1" (a build directory that already held the binaries
never took that path). Now the check has nothing to say about a directory
that is not there (and lib.sh's ERR trap, test_lib.py, names any command
that ends a script this way).

No kernel is involved: the tree is a stub whose `headers` target makes an
empty include directory and whose selftests Makefile links a trivial
program once per test of scripts/guest/tests.txt, with $(EXTRA_CFLAGS) as
kselftests.sh passes them (or, STUB_FLAGS set, with those instead).
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]

TOP_MAKEFILE = """headers:
\tmkdir -p $(O)/usr/include
"""

SELFTESTS_MAKEFILE = """FLAGS := $(if $(STUB_FLAGS),$(STUB_FLAGS),$(EXTRA_CFLAGS))
all:
\tmkdir -p $(O)/kselftest/mm
\tprintf 'int main(void) { return 0; }\\n' > $(O)/t.c
\t$(CC) $(FLAGS) -o $(O)/t $(O)/t.c
\tfor t in $(NAMES); do cp $(O)/t $(O)/kselftest/mm/$$t; done
"""


def guest_programs():
    """The programs tests.txt runs (fields 3.., the first that starts ./ and is
    not one of the suite's scripts)."""
    names = set()
    for line in (TOP / "scripts/guest/tests.txt").read_text().splitlines():
        f = line.split()
        if not f or f[0].startswith(("#", "@")):
            continue
        for w in f[2:]:
            if w.startswith("./") and not w.endswith(".sh"):
                names.add(w[2:])
                break
    return sorted(names)


def guest_scripts():
    """The suite's scripts tests.txt runs (run_vmtests.sh)."""
    names = set()
    for line in (TOP / "scripts/guest/tests.txt").read_text().splitlines():
        f = line.split()
        if f and not f[0].startswith(("#", "@")):
            names.update(w[2:] for w in f[2:] if w.startswith("./") and w.endswith(".sh"))
    return sorted(names)


def run(build, **env):
    tree = build / "tree"
    (tree / "tools/testing/selftests").mkdir(parents=True, exist_ok=True)
    (tree / "Makefile").write_text(TOP_MAKEFILE)
    (tree / "tools/testing/selftests/Makefile").write_text(SELFTESTS_MAKEFILE)
    # The suite's scripts are the source tree's.
    (tree / "tools/testing/selftests/mm").mkdir(parents=True, exist_ok=True)
    if "NO_SCRIPTS" not in env:
        for script in guest_scripts():
            (tree / "tools/testing/selftests/mm" / script).write_text("#!/bin/bash\n")
    e = dict(os.environ, BUILD=str(build), NAMES=" ".join(guest_programs()), **env)
    e.pop("VARIANT", None)
    return subprocess.run([str(TOP / "scripts/kselftests.sh")], env=e, capture_output=True,
                          text=True, timeout=120)


needs_gcc = pytest.mark.skipif(not shutil.which("gcc") or not shutil.which("readelf"),
                               reason="gcc and readelf (make deps)")


@needs_gcc
def test_fresh_build_dir_builds_static_pies(tmp_path):
    build = tmp_path / "build"
    assert not (build / "kselftest").exists()
    r = run(build)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "binaries in" in r.stdout
    bins = sorted(p.name for p in (build / "kselftest/kselftest/mm").iterdir() if p.name != "t")
    assert set(guest_programs()) <= set(bins)
    h = subprocess.run(["readelf", "-lhW", str(build / "kselftest/kselftest/mm" / bins[0])],
                       capture_output=True, text=True).stdout
    assert "DYN" in h and "INTERP" not in h


@needs_gcc
def test_non_pie_binaries_fail_the_build_by_name(tmp_path):
    r = run(tmp_path / "build", STUB_FLAGS="-static -no-pie")
    assert r.returncode != 0
    assert "kselftests not static PIE:" in r.stderr
    assert guest_programs()[0] in r.stderr


@needs_gcc
def test_a_non_pie_leftover_is_built_again(tmp_path):
    build = tmp_path / "build"
    assert run(build, STUB_FLAGS="-static -no-pie").returncode != 0
    r = run(build)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "binaries are not static PIE: building them again" in r.stdout


@needs_gcc
def test_a_missing_suite_script_fails_by_name(tmp_path):
    """run_vmtests.sh comes from the source tree: without it the build fails, naming it."""
    build = tmp_path / "build"
    tree = build / "tree" / "tools/testing/selftests/mm"
    tree.mkdir(parents=True)
    r = run(build)
    assert r.returncode == 0, r.stdout + r.stderr
    (tree / "run_vmtests.sh").unlink()
    r = run(build, NO_SCRIPTS="1")
    assert r.returncode != 0
    assert "kselftests not built: run_vmtests.sh" in r.stderr
