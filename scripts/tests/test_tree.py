"""scripts/tree.sh on a small stand-in kernel: the quilt series, and the
fixes of patches/fixes/ only with FIXES=1 (and gone again without it).

Run: /usr/bin/python3 -m pytest scripts/tests/test_tree.py
"""

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def patch(path, old, new):
    return (f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{old}\n+{new}\n")


def make_repo(tmp_path):
    top = tmp_path / "repo"
    (top / "scripts").mkdir(parents=True)
    for f in ("tree.sh", "lib.sh", "base.sh"):
        shutil.copy2(REPO / "scripts" / f, top / "scripts" / f)
    (top / "mm").mkdir()
    (top / "mm/added.c").write_text("int added;\n")
    (top / "patches/fixes").mkdir(parents=True)
    (top / "patches/series").write_text("one.patch\n")
    (top / "patches/one.patch").write_text(patch("mm/folio.c", "int folio;", "int folio_series;"))
    (top / "patches/fixes/fix.patch").write_text(
        "Subject: [PATCH] mm/other: a fix outside the series\n\nWhy.\n\n---\n"
        + patch("mm/other.c", "int other;", "int other_fixed;"))
    subprocess.run(["git", "init", "-q"], cwd=top, check=True)
    subprocess.run(["git", "add", "-A"], cwd=top, check=True)
    kernel = tmp_path / "kernel"
    (kernel / "mm").mkdir(parents=True)
    (kernel / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\n")
    (kernel / "mm/folio.c").write_text("int folio;\n")
    (kernel / "mm/other.c").write_text("int other;\n")
    return top, kernel


def tree(top, kernel, tmp_path, **env):
    e = dict(os.environ, KERNEL_SRC=str(kernel), BUILD=str(tmp_path / "build"), **env)
    e.pop("VARIANT", None)
    return subprocess.run([str(top / "scripts/tree.sh")], env=e, text=True,
                          capture_output=True)


def test_fixes_only_with_fixes_1(tmp_path):
    top, kernel = make_repo(tmp_path)
    t = tmp_path / "build/tree"
    p = tree(top, kernel, tmp_path)
    assert p.returncode == 0, p.stderr
    assert (t / "mm/folio.c").read_text() == "int folio_series;\n"
    assert (t / "mm/other.c").read_text() == "int other;\n"
    assert (t / "mm/added.c").read_text() == "int added;\n"
    p = tree(top, kernel, tmp_path, FIXES="1")
    assert p.returncode == 0, p.stderr
    assert "with patches/fixes/" in p.stderr + p.stdout
    assert (t / "mm/other.c").read_text() == "int other_fixed;\n"
    assert (t / "mm/folio.c").read_text() == "int folio_series;\n"
    # Without FIXES=1 again, the fixed file is the base's again.
    p = tree(top, kernel, tmp_path)
    assert p.returncode == 0, p.stderr
    assert (t / "mm/other.c").read_text() == "int other;\n"


def test_fixes_must_be_0_or_1(tmp_path):
    top, kernel = make_repo(tmp_path)
    p = tree(top, kernel, tmp_path, FIXES="yes")
    assert p.returncode != 0 and "FIXES must be 0 or 1, not 'yes'" in p.stderr
