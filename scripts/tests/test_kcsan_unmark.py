"""scripts/kcsan_unmark.py: the "before" tree of the KCSAN count.

Its markings must be the series' own (each marked text is made of lines
that patches/ adds, so a patch that changes one makes this fail rather
than the guest run count a tree that was not unmarked), and a marking it
cannot find must leave every file as it was.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
SCRIPT = TOP / "scripts/kcsan_unmark.py"
spec = importlib.util.spec_from_file_location("kcsan_unmark", SCRIPT)
ku = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ku)


def added_lines():
    """The lines patches/*.patch add, without the leading "+"."""
    lines = set()
    for p in (TOP / "patches").glob("*.patch"):
        for line in p.read_text(errors="replace").splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                lines.add(line[1:])
    return lines


@pytest.mark.parametrize("marking", ku.MARKINGS, ids=lambda m: m[1].split("(")[0].strip())
def test_marking_is_the_series_own(marking):
    rel, marked, plain, _ = marking
    added = added_lines()
    # The first line carries the marking; every line must be one the series adds.
    for line in marked.splitlines():
        assert line.strip() in {a.strip() for a in added}, f"{rel}: {line!r} is not added by patches/"
    assert marked != plain and "_ONCE" not in plain and "data_race" not in plain


def fake_tree(tmp_path, drop=None):
    for rel, marked, _, _ in ku.MARKINGS:
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        text = f.read_text() if f.exists() else "/* head */\n"
        if marked != drop:
            text += "\t" + marked + "\n"
        f.write_text(text)
    return tmp_path


def test_unmarks_every_marking(tmp_path):
    tree = fake_tree(tmp_path)
    out = subprocess.run([sys.executable, SCRIPT, tree], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert f"{len(ku.MARKINGS)} markings taken out" in out.stdout
    for rel, marked, plain, _ in ku.MARKINGS:
        text = (tree / rel).read_text()
        assert marked not in text and plain in text


def test_missing_marking_writes_nothing(tmp_path):
    missing = ku.MARKINGS[-1][1]
    tree = fake_tree(tmp_path, drop=missing)
    before = {p: p.read_text() for p in tree.rglob("*.c")}
    out = subprocess.run([sys.executable, SCRIPT, tree], capture_output=True, text=True)
    assert out.returncode != 0
    assert "found 0 times, not once; nothing written" in out.stderr
    assert {p: p.read_text() for p in tree.rglob("*.c")} == before


def test_bad_arguments(tmp_path):
    out = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
    assert out.returncode != 0 and "TREE" in out.stderr
    out = subprocess.run([sys.executable, SCRIPT, tmp_path / "nope"], capture_output=True, text=True)
    assert out.returncode != 0 and "is not a directory" in out.stderr
    out = subprocess.run([sys.executable, SCRIPT, tmp_path], capture_output=True, text=True)
    assert out.returncode != 0 and "not an assembled tree" in out.stderr
