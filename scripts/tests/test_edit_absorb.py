"""`make edit` and `make absorb` (scripts/edit.sh, scripts/absorb.sh,
scripts/series_edit.py), on the host: no kernel build.

Everything runs on clones in a temporary directory: the repository's HEAD
with the scripts of this working tree on top, a BUILD that links the real
build/base and build/download and holds a clone of build/series-git (the
pinned base as a git repository), and one edit branch (`make edit`, a kernel
checkout) shared by the tests; each test resets it and absorbs into a clone
of its own. Needs build/series-git (`make series`); skipped without it.

Run: /usr/bin/python3 -m pytest scripts/tests/test_edit_absorb.py
"""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REAL_BUILD = Path(os.environ.get("BUILD", REPO / "build"))


# As on a fresh machine (CI's): no global or system git configuration, so no
# identity. `make edit` must commit its notes all the same; the tests' own
# commits say who they are (run() below).
NO_IDENTITY = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
TESTER = {"GIT_AUTHOR_NAME": "Edit Tester", "GIT_AUTHOR_EMAIL": "edit@example.org",
          "GIT_COMMITTER_NAME": "Edit Tester", "GIT_COMMITTER_EMAIL": "edit@example.org"}


def run(cmd, cwd, env=None, check=True, input=None):
    e = dict(os.environ, LC_ALL="C", GIT_EDITOR="true", **NO_IDENTITY)
    for k in ("BUILD", "EDIT_DIR", *TESTER):
        e.pop(k, None)
    if cmd[0] == "git":
        e.update(TESTER)
    if env:
        e.update(env)
    p = subprocess.run(cmd, cwd=cwd, env=e, input=input, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and p.returncode != 0:
        raise AssertionError(f"{cmd} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def git(cwd, *args, **kw):
    return run(["git", *args], cwd, **kw).stdout


class Env:
    pass


@pytest.fixture(scope="session")
def env(tmp_path_factory, request):
    marker = REAL_BUILD / "series-git.base"
    real_repo = REAL_BUILD / "series-git"
    if marker.is_file() and (real_repo / ".git").is_dir():
        base = Path(marker.read_text().strip())
        if base.parent != REAL_BUILD / "base" or not (base / ".unpacked").is_file():
            real_repo = None
    else:
        real_repo = None
    if real_repo is None:
        # No usable build/series-git (a fresh clone: `make check` never runs
        # `make series`): import the base into the test's own BUILD below, as
        # `make series` would. The base itself must be there (`make base`).
        bases = sorted(p.parent for p in (REAL_BUILD / "base").glob("*/.unpacked"))
        if not bases:
            pytest.skip("no unpacked base in build/base: run 'make base'")
        base = bases[0]
    # The edit branch is a kernel checkout (~2 GB): in memory when there is room,
    # as the disk is busy with kernel builds here.
    shm = shutil.disk_usage("/dev/shm").free if os.access("/dev/shm", os.W_OK) else 0
    if shm > 6 << 30:
        t = Path(tempfile.mkdtemp(prefix="test-edit-absorb-", dir="/dev/shm"))
        request.addfinalizer(lambda: shutil.rmtree(t, ignore_errors=True))
    else:
        t = tmp_path_factory.mktemp("edit-absorb")
    e = Env()
    # The repository: HEAD, with this working tree's scripts and Makefile committed on top.
    e.top = t / "top"
    git(t, "clone", "-q", str(REPO), str(e.top))
    shutil.rmtree(e.top / "scripts")
    shutil.copytree(REPO / "scripts", e.top / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    shutil.copy(REPO / "Makefile", e.top / "Makefile")
    for k, v in (("user.name", "Edit Tester"), ("user.email", "edit@example.org")):
        git(e.top, "config", k, v)
    git(e.top, "add", "-A")
    git(e.top, "commit", "-q", "--allow-empty", "-m", "the scripts under test")
    # BUILD: the real base and download, a clone of the base repository.
    e.build = t / "build"
    e.build.mkdir()
    for d in ("base", "download"):
        os.symlink(REAL_BUILD / d, e.build / d)
    if real_repo is not None:
        git(t, "clone", "-q", "--local", "--no-hardlinks", "--no-checkout", str(real_repo),
            str(e.build / "series-git"))
        (e.build / "series-git.base").write_text(f"{e.build / 'base' / base.name}\n")
    else:
        run(["bash", "-c", '. scripts/lib.sh && series_git_import "$1"', "import",
             str(e.build / "base" / base.name)], e.top, env={**os.environ, "BUILD": str(e.build)})
    e.edit = t / "edit"
    e.vars = [f"BUILD={e.build}", f"EDIT_DIR={e.edit}"]
    p = run(["make", "--no-print-directory", "edit", *e.vars], e.top)
    assert "26 commits" in p.stdout or "commits on series-base" in p.stdout, p.stdout
    e.tip = git(e.edit, "rev-parse", "series").strip()
    e.commits = git(e.edit, "rev-list", "--reverse", "series-base..series").split()
    e.n = 0
    return e


@pytest.fixture
def ws(env):
    """A fresh clone of the repository, and the edit branch as `make edit` left it."""
    env.n += 1
    top = env.top.parent / f"top{env.n}"
    git(env.top.parent, "clone", "-q", str(env.top), str(top))
    for k, v in (("user.name", "Edit Tester"), ("user.email", "edit@example.org")):
        git(top, "config", k, v)
    gd = env.edit / ".git"
    if (gd / "rebase-merge").exists() or (gd / "rebase-apply").exists():
        git(env.edit, "rebase", "--abort", check=False)
    git(env.edit, "checkout", "-q", "-f", "-B", "series", env.tip)
    git(env.edit, "clean", "-q", "-f", "-d", "-x", "--", "mm", "Documentation", "rust")
    git(env.edit, "update-ref", "refs/series-edit/synced", env.tip)
    env.ws = top
    return top


def absorb(env, top, check=True):
    return run(["make", "--no-print-directory", "absorb", *env.vars], top, check=check)


def status(top):
    return sorted(f"{l[:2].strip()} {l[3:]}" for l in git(top, "status", "--porcelain").splitlines())


def own_commit(env, room=0):
    """The number (1-based) of the first commit after the first that is ours
    (authored as the first commit is, not someone else's patch carried with
    `from:`) and whose subject has `room` columns to spare under 75: the
    tests that change a mail's author or subject pick it by that, not by its
    place in the series, which changes as mails are added."""
    first = git(env.edit, "log", "-1", "--format=%ae", env.commits[0]).strip()
    for k, c in enumerate(env.commits[1:], start=2):
        author, subject = git(env.edit, "log", "-1", "--format=%ae%n%s", c).split("\n")[:2]
        if author == first and len(subject) + room <= 75:
            return k
    raise AssertionError("no commit of ours with a short enough subject")


def rebase_edit(env, n, action="edit", editor=None):
    """git rebase -i with commit `n` (1-based) marked `action`."""
    c = env.commits[n - 1][:12]
    seq = f"sed -i 's/^pick {c[:7]}[0-9a-f]* /{action} {c} /'"
    e = {"GIT_SEQUENCE_EDITOR": seq}
    if editor:
        e["GIT_EDITOR"] = editor
    run(["git", "rebase", "-q", "-i", upstream(env, n)], env.edit, env=e)


def upstream(env, n):
    """Where a rebase of commit `n` and the ones after it starts."""
    return env.commits[n - 2] if n > 1 else "series-base"


def commit_of(env, quilt_name):
    for k, c in enumerate(env.commits):
        if f"quilt: {quilt_name}" in git(env.edit, "notes", "--ref", "plan", "show", c):
            return k + 1
    raise AssertionError(quilt_name)


def test_round_trip_unchanged(env, ws):
    p = absorb(env, ws)
    assert "already holds" in p.stdout
    assert status(ws) == []


def test_one_line_change_in_one_commit(env, ws):
    # A line that a commit adds to mm/filemap.c and that no later commit touches.
    name = "mm-filemap-read-without-folio-references.patch"
    n = commit_of(env, name)
    c = env.commits[n - 1]
    at = git(env.edit, "show", f"{c}:mm/filemap.c").split("\n")
    tip = git(env.edit, "show", f"{env.tip}:mm/filemap.c").split("\n")
    added = [l[1:] for l in git(env.edit, "show", "--format=", c, "--", "mm/filemap.c").split("\n")
             if l.startswith("+ * ") and len(l) > 20]
    line = next(l for l in added if at.count(l) == 1 and tip.count(l) == 1 and
                at[at.index(l) - 4:at.index(l) + 5] == tip[tip.index(l) - 4:tip.index(l) + 5])
    rebase_edit(env, n)
    f = env.edit / "mm/filemap.c"
    f.write_text(f.read_text().replace(line + "\n", line + " (edited)\n", 1))
    git(env.edit, "commit", "-q", "-a", "--amend", "--no-edit")
    git(env.edit, "rebase", "--continue")
    absorb(env, ws)
    assert status(ws) == [f"M patches/{name}"]
    d = git(ws, "diff", "-U0", f"patches/{name}").split("\n")
    assert [l for l in d if l.startswith(("-", "+")) and not l.startswith(("---", "+++"))] == \
        [f"-+{line}", f"++{line} (edited)"]


def test_reword_changes_only_the_plan(env, ws):
    rebase_edit(env, own_commit(env, room=len(" (reworded)")), "reword",
                editor="sed -i '1s/$/ (reworded)/; 3s/^/Reworded: /'")
    absorb(env, ws)
    assert status(ws) == ["M patches/mail.plan"]
    d = git(ws, "diff", "-U0", "patches/mail.plan")
    assert "(reworded)" in d and "+Reworded: " in d
    assert len([l for l in d.split("\n") if l.startswith("+") and not l.startswith("+++")]) == 2


def test_fixup_of_an_added_file(env, ws):
    f = env.edit / "rust/kernel/mm/list_lru.rs"
    text = f.read_text()
    f.write_text(text + "// edited\n")
    n = next(k + 1 for k, c in enumerate(env.commits)
             if "rust/kernel/mm/list_lru.rs" in git(env.edit, "show", "--format=", "--name-only", c))
    git(env.edit, "commit", "-q", "-a", f"--fixup={env.commits[n - 1]}")
    run(["git", "rebase", "-q", "-i", "--autosquash", upstream(env, n)], env.edit,
        env={"GIT_SEQUENCE_EDITOR": "true"})
    absorb(env, ws)
    assert status(ws) == ["M rust/kernel/mm/list_lru.rs"]
    assert (ws / "rust/kernel/mm/list_lru.rs").read_text() == text + "// edited\n"


def test_new_commit_becomes_a_plan_block_and_a_quilt_patch(env, ws):
    f = env.edit / "mm/vmscan.c"
    f.write_text(f.read_text().replace("\n", "\n/* edited */\n", 3))
    (env.edit / "Documentation/mm/edit_test.rst").write_text("Edit test\n=========\n")
    git(env.edit, "add", "-f", "mm/vmscan.c", "Documentation/mm/edit_test.rst")
    git(env.edit, "commit", "-q", "-m", "mm/vmscan: an edit test",
        "-m", "A new commit with a new file and an edit of an upstream file.")
    absorb(env, ws)
    name = "mm-vmscan-an-edit-test.patch"
    assert status(ws) == ["A Documentation/mm/edit_test.rst", f"A patches/{name}",
                          "M patches/mail.plan", "M patches/series"]
    plan = (ws / "patches/mail.plan").read_text()
    assert plan.endswith("\n\npatch: mm/vmscan: an edit test\n"
                         "files: Documentation/mm/edit_test.rst\n"
                         f"quilt: {name}\n\n"
                         "A new commit with a new file and an edit of an upstream file.\n")
    assert (ws / "patches/series").read_text().endswith(f"\n{name}\n")
    patch = (ws / "patches" / name).read_text()
    assert patch.startswith("--- a/mm/vmscan.c\n+++ b/mm/vmscan.c\n@@ ")
    assert patch.count("\n+/* edited */") == 3


def test_reorder(env, ws):
    a = commit_of(env, "splice-dont-steal-page-cache-folios.patch")
    b = commit_of(env, "fuse-dont-move-a-pg_rcu_free-folio.patch")
    assert b == a + 1
    ca, cb = env.commits[a - 1][:7], env.commits[b - 1][:7]
    swap = (f"sed -i -e '/^pick {ca}/{{h;d}}' -e '/^pick {cb}/{{G}}'")
    run(["git", "rebase", "-q", "-i", upstream(env, a)], env.edit,
        env={"GIT_SEQUENCE_EDITOR": swap})
    absorb(env, ws)
    assert status(ws) == ["M patches/mail.plan", "M patches/series"]
    series = (ws / "patches/series").read_text()
    assert series.index("fuse-dont") < series.index("splice-dont")
    plan = (ws / "patches/mail.plan").read_text()
    assert plan.index("patch: fuse:") < plan.index("patch: splice:")
    old = (env.top / "patches/mail.plan").read_text()
    assert sorted(plan.split("\n")) == sorted(old.split("\n"))


def with_series_lines(ws):
    """The plan's "series:" lines, as the repository has them (committed in
    ws if HEAD's plan predates them)."""
    plan = ws / "patches/mail.plan"
    text = plan.read_text()
    if "\nseries: split\n" not in text:
        text = text.replace("\npatch: rust: kunit: add mark_skipped()\n",
                            "\nseries: split\npatch: rust: kunit: add mark_skipped()\n", 1)
        text = text.replace("\npatch: mm: add PG_rcu_free\n",
                            "\nseries: rcu-free rfc\npatch: mm: add PG_rcu_free\n", 1)
        plan.write_text(text)
        git(ws, "commit", "-q", "-a", "-m", "series lines")


def test_reword_the_first_block_of_a_series_keeps_its_series_line(env, ws):
    with_series_lines(ws)
    n = commit_of(env, "mm-add-pg_rcu_free.patch")
    rebase_edit(env, n, "reword", editor="sed -i '3s/^/Reworded: /'")
    absorb(env, ws)
    assert status(ws) == ["M patches/mail.plan"]
    plan = (ws / "patches/mail.plan").read_text()
    assert "\n\nseries: rcu-free rfc\npatch: mm: add PG_rcu_free\n" in plan
    assert "\n\nseries: split\npatch: rust: kunit: add mark_skipped()\n" in plan
    d = git(ws, "diff", "-U0", "patches/mail.plan")
    added = [l for l in d.split("\n") if l.startswith("+") and not l.startswith("+++")]
    assert len(added) == 1 and added[0].startswith("+Reworded: "), d


def test_refuses_a_commit_moved_across_a_series_line(env, ws):
    with_series_lines(ws)
    a = commit_of(env, "selftests-mm-add-deferred_split_stress.patch")
    b = commit_of(env, "mm-add-pg_rcu_free.patch")
    assert b == a + 1
    ca, cb = env.commits[a - 1][:7], env.commits[b - 1][:7]
    swap = (f"sed -i -e '/^pick {ca}/{{h;d}}' -e '/^pick {cb}/{{G}}'")
    run(["git", "rebase", "-q", "-i", upstream(env, a)], env.edit,
        env={"GIT_SEQUENCE_EDITOR": swap})
    refused(env, ws, "series split: its commits are no longer together")


def refused(env, ws, words):
    before = git(ws, "rev-parse", "HEAD")
    p = absorb(env, ws, check=False)
    assert p.returncode != 0
    lines = [l for l in p.stderr.splitlines() if not l.startswith("make")]
    assert len(lines) == 1, p.stderr
    assert words in lines[0], lines[0]
    assert status(ws) == [] and git(ws, "rev-parse", "HEAD") == before
    return lines[0]


def test_refuses_a_branch_not_on_the_pinned_base(env, ws):
    # Another base: the pinned one with a change, as a commit of its own (a newer
    # upstream), and a commit of the series on it.
    git(env.edit, "checkout", "-q", "-B", "other", "series-base")
    f = env.edit / "mm/vmscan.c"
    f.write_text(f.read_text() + "/* 7.3.5 */\n")
    git(env.edit, "commit", "-q", "-a", "-m", "Linux 7.3.5")
    other = git(env.edit, "commit-tree", "other^{tree}", "-m", "Linux 7.3.5").strip()
    git(env.edit, "checkout", "-q", "-B", "series", other)
    git(env.edit, "cherry-pick", env.commits[0])
    refused(env, ws, "not on the pinned base")


def test_refuses_a_file_no_plan_block_owns(env, ws):
    owned = [l for q in (env.top / "patches").glob("*.patch") for l in q.read_text().splitlines()
             if l.startswith("+++ b/")]
    assert "+++ b/mm/mremap.c" not in owned
    rebase_edit(env, 3)
    f = env.edit / "mm/mremap.c"
    f.write_text(f.read_text() + "/* stray */\n")
    git(env.edit, "commit", "-q", "-a", "--amend", "--no-edit")
    git(env.edit, "rebase", "--continue")
    msg = refused(env, ws, "no plan block owns")
    assert "mm/mremap.c" in msg


def test_refuses_a_message_with_gits_conflict_comment(env, ws):
    # A conflicted rebase step committed without an editor keeps git's
    # "# Conflicts:" comment in the message; it must not reach a mail.
    rebase_edit(env, 3)
    m = git(env.edit, "log", "-1", "--format=%B").rstrip("\n")
    git(env.edit, "commit", "-q", "--amend", "--cleanup=whitespace",
        "-m", m + "\n\n# Conflicts:\n#\tmm/filemap.c\n")
    git(env.edit, "rebase", "--continue")
    msg = refused(env, ws, "# Conflicts:")
    assert "reword" in msg
    assert status(ws) == []


def test_author_becomes_from(env, ws):
    # Someone else's patch: absorb keeps its author as "from:", and make
    # edit makes the commit theirs again.
    n = own_commit(env)
    rebase_edit(env, n)
    m = git(env.edit, "log", "-1", "--format=%B").rstrip("\n").split("\n")
    m.insert(len(m) - 1, "Signed-off-by: Ann Other <ann@example.org>")
    git(env.edit, "commit", "-q", "--amend", "--author=Ann Other <ann@example.org>",
        "-m", "\n".join(m))
    git(env.edit, "rebase", "--continue")
    absorb(env, ws)
    assert status(ws) == ["M patches/mail.plan"]
    plan = (ws / "patches/mail.plan").read_text()
    subject = git(env.edit, "log", "-1", "--format=%s", env.commits[n - 1]).strip()
    assert f"patch: {subject}\nfrom: Ann Other <ann@example.org>\n" in plan


def test_refuses_an_author_without_their_signoff(env, ws):
    rebase_edit(env, own_commit(env))
    git(env.edit, "commit", "-q", "--amend", "--no-edit", "--author=Ann Other <ann@example.org>")
    git(env.edit, "rebase", "--continue")
    msg = refused(env, ws, "is authored by Ann Other <ann@example.org>")
    assert "Signed-off-by: Ann Other <ann@example.org>" in msg


def test_refuses_uncommitted_changes(env, ws):
    f = env.edit / "mm/filemap.c"
    f.write_text(f.read_text() + "/* not committed */\n")
    msg = refused(env, ws, "uncommitted changes")
    assert "mm/filemap.c" in msg


def test_refuses_a_new_file_not_added(env, ws):
    (env.edit / "mm/new_file.c").write_text("/* new, not added */\n")
    msg = refused(env, ws, "uncommitted changes")
    assert "mm/new_file.c" in msg and "git add -f" in msg


def test_edit_keeps_commits_not_absorbed(env, ws):
    f = env.edit / "mm/filemap.c"
    f.write_text(f.read_text() + "/* new work */\n")
    git(env.edit, "commit", "-q", "-a", "-m", "mm: new work", "-m", "Not absorbed yet.")
    tip = git(env.edit, "rev-parse", "HEAD")
    p = run(["make", "--no-print-directory", "edit", *env.vars], ws, check=False)
    assert p.returncode != 0 and "make absorb" in p.stderr and "not in the" in p.stderr
    assert git(env.edit, "rev-parse", "HEAD") == tip
