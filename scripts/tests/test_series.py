"""The mail series: the "series:" lines of patches/mail.plan (mail_plan.py,
and series_edit.py's make edit/absorb round trip of them), the cover
letters' rules (cover_letter.py), the recipients of each mail
(mail_recipients.py), and `make series`, `make series-check` and
`make series-b4` with SERIES= (series.sh, series_check.sh, series_b4.sh).

The scripts run on a small made-up kernel tree (a Makefile that says 7.3.4,
a MAINTAINERS, the real scripts/get_maintainer.pl of build/base and a
checkpatch.pl that finds nothing) and a made-up repository with a plan of
two series, "one" and "two" (rfc); series_check.sh runs without builds
(SERIES_CHECK_CONFIGS= empty), so nothing here builds a kernel. The tests
that need get_maintainer.pl are skipped without an unpacked base
(`make base`).

Run: /usr/bin/python3 -m pytest scripts/tests/test_series.py
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
REAL_BUILD = Path(os.environ.get("BUILD", REPO / "build"))
sys.dont_write_bytecode = True
sys.path.insert(0, str(SCRIPTS))
import cover_letter  # noqa: E402
import mail_plan  # noqa: E402
import series_edit  # noqa: E402


def script(name, *args, env=None, cwd=None):
    e = dict(os.environ, LC_ALL="C")
    for k in ("BUILD", "SERIES", "VERSION", "MAIL_CC", "FROM", "SERIES_OUT",
              "SERIES_CHECK_CONFIGS", "KERNEL_SRC", "KERNEL_TARBALL"):
        e.pop(k, None)
    e.update(env or {})
    cmd = [sys.executable] if name.endswith(".py") else ["bash"]
    return subprocess.run([*cmd, str(SCRIPTS / name), *map(str, args)], capture_output=True,
                          text=True, timeout=300, env=e, cwd=cwd)


# ---------------------------------------------------------------- the plan's series lines

PLAN = """# the preamble

series: one
patch: mm: add a thing
files: mm/thing.c
quilt: mm-hook.patch

Add the thing.

Cc: Extra Person <extra@example.org>

patch: mm: their change
from: Ann Author <ann@example.org>
quilt: mm-their.patch

Their change.

Signed-off-by: Ann Author <ann@example.org>

series: two rfc
patch: fs: use the thing
quilt: fs-hook.patch

Use the thing.
"""


def test_series_lines(tmp_path):
    blocks = mail_plan.parse(PLAN)
    assert [b["series"] for b in blocks] == ["one", "one", "two"]
    assert mail_plan.series_of(blocks) == [("one", 1, 2, False), ("two", 3, 3, True)]
    assert "series:" not in "".join(l for b in blocks for l in b["body"])
    (tmp_path / "plan").write_text(PLAN)
    p = script("mail_plan.py", tmp_path / "plan", tmp_path / "out")
    assert (p.returncode, p.stdout) == (0, "3\n"), p.stderr
    assert (tmp_path / "out/series").read_text() == "one 1 2 -\ntwo 3 3 rfc\n"
    assert (tmp_path / "out/03/series").read_text() == "two\n"


def test_a_plan_without_series_lines_is_one_series():
    blocks = mail_plan.parse(PLAN.replace("series: one\n", "").replace("series: two rfc\n", ""))
    assert mail_plan.series_of(blocks) == [("series", 1, 3, False)]


@pytest.mark.parametrize("plan,error", [
    (PLAN.replace("series: one\n", ""), "the first block has no 'series:' line"),
    (PLAN.replace("series: two rfc", "series: one"), "two 'series: one' lines"),
    (PLAN.replace("series: two rfc", "series: Two"), "a series line is 'series: NAME [rfc]'"),
    (PLAN.replace("series: two rfc", "series: two RFC now"), "a series line is"),
    (PLAN.replace("series: one\npatch", "series: one\n\npatch"),
     "a 'series:' line must be right before a 'patch:' line"),
])
def test_series_line_errors(tmp_path, plan, error):
    (tmp_path / "plan").write_text(plan)
    p = script("mail_plan.py", tmp_path / "plan", tmp_path / "out")
    assert p.returncode != 0 and error in p.stderr, p.stderr


def test_the_real_plan_is_two_series():
    blocks = mail_plan.parse((REPO / "patches/mail.plan").read_text())
    (one, first, last, rfc), (two, first2, last2, rfc2) = mail_plan.series_of(blocks)
    assert (one, rfc, two, rfc2) == ("split", False, "rcu-free", True)
    assert blocks[first - 1]["subject"] == "rust: kunit: add mark_skipped()"
    assert blocks[last - 1]["subject"] == \
        "selftests/mm: add a stress test of the deferred split paths"
    assert blocks[first2 - 1]["subject"] == "mm: add PG_rcu_free"
    assert blocks[last2 - 1]["subject"].startswith("docs/mm: ")
    assert last2 == len(blocks)
    for name in ("split", "rcu-free"):
        assert (REPO / f"patches/cover-letter.{name}").is_file()
        assert (REPO / f"patches/changelog.{name}").is_file()


def absorbed(text, keep):
    """What make absorb writes for a branch whose commits are the plan's
    blocks `keep` (indices, in that order; None: a new commit), each one
    unchanged unless negative (then its message is changed)."""
    plan = series_edit.Plan(text)
    new = []
    for i in keep:
        if i is None:
            new.append(({"subject": "mm: new", "files": [], "quilt": ["new.patch"],
                         "body": ["New."], "notes": [], "from": None, "series": None}, None))
            continue
        b = dict(plan.blocks[abs(i)], series=plan.blocks[abs(i)]["series"])
        if i < 0:
            new.append((dict(b, body=b["body"] + ["", "Changed."]), None))
        else:
            new.append((b, plan.spans[i]))
    series_edit.assign_series(new)
    return plan.render(new)


def test_edit_absorb_keeps_the_series_lines():
    real = (REPO / "patches/mail.plan").read_text()
    n = len(series_edit.Plan(real).blocks)
    # An unchanged branch writes the plan back byte for byte.
    assert absorbed(real, range(n)) == real
    assert absorbed(PLAN, range(3)) == PLAN
    # A changed block is rendered again; its series line stays before it.
    out = absorbed(PLAN, [0, 1, -2])
    assert "\nseries: two rfc\npatch: fs: use the thing\n" in out and "Changed." in out
    # The first block of a series dropped: the line moves to the next one.
    out = absorbed(PLAN, [1, 2])
    assert out.startswith("# the preamble\n\nseries: one\npatch: mm: their change\n")
    # Reordered within a series, a new commit: each keeps (or joins) its series.
    out = absorbed(PLAN, [1, 0, 2, None])
    assert [b["series"] for b in mail_plan.parse(out)] == ["one", "one", "two", "two"]
    assert "series: one\npatch: mm: their change" in out


def test_edit_absorb_refuses_a_commit_moved_across_a_series_line():
    with pytest.raises(series_edit.Refuse, match="series one: its commits are no longer"):
        absorbed(PLAN, [0, 2, 1])


# ---------------------------------------------------------------- cover letters

REAL_LETTERS = [REPO / "patches/cover-letter.split", REPO / "patches/cover-letter.rcu-free"]


@pytest.mark.parametrize("letter", REAL_LETTERS, ids=lambda p: p.name)
def test_real_cover_letters_are_plain_text(letter):
    text = letter.read_text()
    assert cover_letter.lint(text, letter.name) == []
    assert len(text.splitlines()) <= 150
    assert all(len(l) <= 75 for l in text.splitlines() if "://" not in l)
    assert not re.search(r"@[A-Z_]+@|^#|`|\|.*\||\bseed\b|scripts/|results\.md", text, re.M)
    assert "lore.kernel.org/" in text
    first = text.split("\n\n")[1]  # the first paragraph, after the subject
    assert "QEMU" in first and re.search(r"\d,\d{3} -> \d", first)


def test_split_cover_letter_says_what_is_carried():
    text = REAL_LETTERS[0].read_text()
    assert "Joanne Koong" in text and "mm-new" in text and "kprobe" in text.split("\n\n")[1]
    assert "Needs input:" in text and "Known costs:" in text


def test_rcu_free_cover_letter_asks_the_questions():
    text = " ".join(REAL_LETTERS[1].read_text().split())
    for words in ("mm/rcu_free.c", "mm/rcu_free_rust.rs", "CONFIG_RUST=n",
                  "PAGE_RCU_FREE_RUST=n", "Who maintains", "What would retire one",
                  "default n", "Needs input:", "Known costs:", "defrag_mode", "MGLRU",
                  "Hugh", "uptodate", "refault", "64K reads", "switched off",
                  "CAHk-=wjLjgfwgSZ1RDk4YdNFcV0ntosMO5AmBoHD76Zb3HFY7Q", "kas/linux.git",
                  "-icount", "real hardware"):
        assert words in text, words
    assert "64 threads" not in text and "model" not in text.lower()


@pytest.mark.parametrize("line,problem", [
    ("## Results", "markdown heading"),
    ("See `make bench`.", "backtick"),
    ("| fs | base | series |", "table with pipes"),
    ("ext4 | 1.0 | 0.8 | x", "table with pipes"),
    ("It is **fast**.", "emphasis"),
    ("@BENCH@", "fill-in mark"),
    ("As seed 002 says.", "seed"),
    ("Run scripts/bench.sh for it.", "file of this repository"),
    ("The tables of results.md.", "only this repository knows"),
    ("x" * 76, "longer than 75 columns"),
])
def test_cover_letter_rules(tmp_path, line, problem):
    letter = tmp_path / "cover-letter.x"
    letter.write_text(f"mm: subject\n\nA paragraph.\n{line}\n")
    p = script("cover_letter.py", "--lint", letter)
    assert p.returncode != 0 and problem in p.stderr and "cover-letter.x:4:" in p.stderr
    ok = tmp_path / "ok"
    ok.write_text("mm: subject\n\nA paragraph, at most 75 columns; __folio_put() is C.\n"
                  "[1] https://lore.kernel.org/linux-mm/" + "x" * 80 + "@example.org/\n")
    assert script("cover_letter.py", "--lint", ok).returncode == 0


def test_cover_letter_over_150_lines_is_refused(tmp_path):
    series = tmp_path / "s"
    series.mkdir()
    (series / "0000-cover-letter.patch").write_text(
        "Subject: [PATCH 0/1] *** SUBJECT HERE ***\n\n*** BLURB HERE ***\n")
    (tmp_path / "changelog").write_text("# none\n")
    (tmp_path / "cover").write_text("mm: s\n\n" + "line\n" * 149)
    p = script("cover_letter.py", series, tmp_path / "cover", tmp_path / "changelog", 1,
               tmp_path / "text")
    assert p.returncode != 0 and "at most 150" in p.stderr
    assert "*** BLURB HERE ***" in (series / "0000-cover-letter.patch").read_text()


# ---------------------------------------------------------------- recipients (stub get_maintainer)

STUB_GET_MAINTAINER = r"""#!/usr/bin/perl
# Who looks after a file, by its directory: mm/ or fs/.
my ($m, $r, $l) = (1, 1, 1);
my %seen;
foreach my $a (@ARGV) {
    if ($a eq "--nom") { $m = 0 } elsif ($a eq "--nor") { $r = 0 } elsif ($a eq "--nol") { $l = 0 }
    next unless -f $a;
    open(my $f, "<", $a) or die;
    while (<$f>) {
        next unless m{^\+\+\+ b/(\w+)/};
        my $d = $1;
        my @out;
        push @out, "\"$d, Maintainer\" <$d-m\@example.org>" if $m;
        push @out, "$d Reviewer <$d-r\@example.org>" if $r;
        push @out, "linux-$d\@example.org" if $l;
        foreach (@out) { print "$_\n" unless $seen{$_}++ }
    }
}
"""


def mail(path, frm, subject, files, trailers=""):
    diff = "".join(f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -1 +1 @@\n-a\n+b\n"
                   for f in files)
    path.write_text(f"From 0 Mon Sep 17 00:00:00 2001\nFrom: {frm}\nDate: x\n"
                    f"Subject: [PATCH] {subject}\n\nWhy.\n{trailers}\n---\n {files[0]} | 2 +-\n\n"
                    f"{diff}")


def headers(path):
    head = path.read_text().split("\n\n", 1)[0]

    def people(name):
        m = re.search(rf"^{name}: (.*(?:\n[ \t].*)*)", head, re.M)
        return [p.strip() for p in re.findall(r'(?:"[^"]*"|[^,"])+',
                                              re.sub(r"\n\s+", " ", m.group(1)))] if m else []
    return people("To"), people("Cc")


def test_recipients_per_mail(tmp_path):
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts/get_maintainer.pl").write_text(STUB_GET_MAINTAINER)
    d = tmp_path / "mails"
    d.mkdir()
    me = "Me Sender <me@example.org>"
    mail(d / "0001-a.patch", me, "mm: a", ["mm/a.c"],
         "\nSuggested-by: Sug Gester <sg@example.org>\nCc: Trailer Person <t@example.org>\n"
         "Co-developed-by: Co Dev <co@example.org>\nSigned-off-by: Co Dev <co@example.org>\n"
         "CC: stable@example.org # 7.3+\n"
         "Signed-off-by: Me Sender <me@example.org>\n")
    mail(d / "0002-b.patch", "Ann Author <ann@example.org>", "fs: b", ["fs/b.c"])
    mail(d / "0003-c.patch", me, "mm: c", ["mm/c.c", "fs/c.c"])
    (d / "0000-cover-letter.patch").write_text(
        "From 0 Mon Sep 17 00:00:00 2001\nFrom: Me Sender <me@example.org>\n"
        "Subject: [PATCH 0/3] x\n\nBlurb.\n")
    # Another Mm Reviewer, at another address, is another person (MAINTAINERS
    # has two Wei Xus): named too. The lists go to every mail.
    p = script("mail_recipients.py", "--cc", '"Doe, Jo" <jo@example.org>, Mm Reviewer <r2@example.org>',
               "--lists", "all@example.org", repo, me, *sorted(d.iterdir()))
    assert p.returncode == 0, p.stderr
    to, cc = headers(d / "0001-a.patch")
    assert to == ['"mm, Maintainer" <mm-m@example.org>']
    assert cc == ["Sug Gester <sg@example.org>", "Trailer Person <t@example.org>",
                  "Co Dev <co@example.org>", "stable@example.org",
                  "mm Reviewer <mm-r@example.org>", "linux-mm@example.org", "all@example.org",
                  '"Doe, Jo" <jo@example.org>', "Mm Reviewer <r2@example.org>"]
    to, cc = headers(d / "0002-b.patch")
    assert to == ['"fs, Maintainer" <fs-m@example.org>']
    assert cc[0] == "Ann Author <ann@example.org>" and "linux-fsdevel" not in " ".join(cc)
    assert not any("mm" in x for x in to + cc) and "all@example.org" in cc
    assert "Mm Reviewer <r2@example.org>" in cc
    to, cc = headers(d / "0003-c.patch")
    assert to == ['"mm, Maintainer" <mm-m@example.org>', '"fs, Maintainer" <fs-m@example.org>']
    assert "Ann Author <ann@example.org>" not in cc and "Trailer Person <t@example.org>" not in cc
    # The cover letter: every maintainer To, everyone else Cc, once each, not the sender.
    to, cc = headers(d / "0000-cover-letter.patch")
    assert to == ['"mm, Maintainer" <mm-m@example.org>', '"fs, Maintainer" <fs-m@example.org>']
    assert sorted(cc) == sorted(["Sug Gester <sg@example.org>", "Trailer Person <t@example.org>",
                                 "Co Dev <co@example.org>", "stable@example.org",
                                 "mm Reviewer <mm-r@example.org>",
                                 "linux-mm@example.org", "all@example.org",
                                 '"Doe, Jo" <jo@example.org>', "Mm Reviewer <r2@example.org>",
                                 "Ann Author <ann@example.org>",
                                 "fs Reviewer <fs-r@example.org>", "linux-fs@example.org"])
    assert "me@example.org" not in (d / "0000-cover-letter.patch").read_text().split("Subject")[1]
    assert p.stdout.splitlines()[-1] == "2 To, 12 Cc  0000-cover-letter.patch"


def test_recipients_bad_cc(tmp_path):
    p = script("mail_recipients.py", "--cc", "Nobody", "--check")
    assert p.returncode != 0 and "not an address: 'Nobody'" in p.stderr


# ---------------------------------------------------------------- make series on a small tree

MAINTAINERS = """List of maintainers

MEMORY THING
M:\tMm Maintainer <mm@example.org>
R:\tMm Reviewer <mmrev@example.org>
L:\tlinux-mm@example.org
S:\tMaintained
F:\tmm/

SPLICE
M:\tFs Maintainer <fs@example.org>
L:\tlinux-fsdevel@example.org
S:\tMaintained
F:\tfs/splice.c

REAL-TIME THING
M:\tRt Maintainer <rt@example.org>
L:\tlinux-rt@example.org
S:\tMaintained
K:\tPREEMPT_RT
"""

QUILT = {
    "mm-hook.patch": ("mm/folio.c", "int folio;\n", "int folio;\nint thing; /* a mutex on PREEMPT_RT */\n"),
    "mm-their.patch": ("mm/other.c", "int other;\n", "int other2;\n"),
    "fs-hook.patch": ("fs/splice.c", "int splice;\n", "int splice;\nint use_thing;\n"),
}
COVER = "{subject}\n\nWhy this series, in plain text.\n"


def quilt_patch(path, before, after):
    a, b = before.splitlines(), after.splitlines()
    body = "".join(f"-{l}\n" for l in a) + "".join(f"+{l}\n" for l in b)
    return f"--- a/{path}\n+++ b/{path}\n@@ -1,{len(a)} +1,{len(b)} @@\n{body}"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    get_maintainer = sorted(REAL_BUILD.glob("base/*/scripts/get_maintainer.pl"))
    if not get_maintainer:
        pytest.skip("no unpacked base in build/base (make base): no get_maintainer.pl")
    t = tmp_path_factory.mktemp("series")
    k = t / "kernel"
    for d in ("Documentation", "arch", "include", "drivers", "fs", "init", "ipc", "kernel",
              "lib", "mm", "scripts"):
        (k / d).mkdir(parents=True)
        (k / d / "keep").write_text("")
    for f in ("COPYING", "CREDITS", "Kbuild", "README"):
        (k / f).write_text("")
    (k / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\n")
    (k / "MAINTAINERS").write_text(MAINTAINERS)
    for path, before, _ in QUILT.values():
        (k / path).write_text(before)
    shutil.copy(get_maintainer[0], k / "scripts/get_maintainer.pl")
    (k / "scripts/checkpatch.pl").write_text("#!/usr/bin/perl\nexit 0;\n")
    top = t / "top"
    shutil.copytree(SCRIPTS, top / "scripts",
                    ignore=shutil.ignore_patterns("tests", "__pycache__", "bench", "guest"))
    (top / "mm").mkdir()
    (top / "mm/thing.c").write_text("int thing_impl;\n")
    pt = top / "patches"
    pt.mkdir()
    (pt / "mail.plan").write_text(PLAN)
    (pt / "series").write_text("".join(f"{q}\n" for q in QUILT))
    for q, (path, before, after) in QUILT.items():
        (pt / q).write_text(quilt_patch(path, before, after))
    (pt / "checkpatch.ignore").write_text("# none\n")
    for name, subject in (("one", "mm: the thing"), ("two", "fs: the thing's users")):
        (pt / f"cover-letter.{name}").write_text(COVER.format(subject=subject))
        (pt / f"changelog.{name}").write_text("# nothing posted yet\n")
    git = ["git", "-C", str(top)]
    subprocess.run([*git, "init", "-q"], check=True)
    for k_, v in (("user.name", "Test Sender"), ("user.email", "sender@example.org")):
        subprocess.run([*git, "config", k_, v], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "the series"], check=True)

    class S:
        pass
    s = S()
    s.top, s.kernel, s.build = top, k, t / "build"
    s.out = s.build / "series"
    s.env = {"BUILD": str(s.build), "KERNEL_SRC": str(k), "GIT_CONFIG_GLOBAL": "/dev/null",
             "GIT_CONFIG_NOSYSTEM": "1"}

    def run(name, env=None):
        e = dict(s.env, **(env or {}))
        for k_ in list(e):
            if e[k_] is None:
                del e[k_]
        p = subprocess.run(["bash", str(top / "scripts" / name)], capture_output=True, text=True,
                           timeout=300, env=dict({k_: v for k_, v in os.environ.items()
                                                  if k_ not in ("BUILD", "SERIES", "VERSION",
                                                                "MAIL_CC", "FROM")},
                                                 LC_ALL="C", **e), cwd=top)
        return p
    s.run = run
    p = run("series.sh")
    assert p.returncode == 0, p.stdout + p.stderr
    s.first_stdout = p.stdout
    return s


def snapshot(d):
    return {str(f.relative_to(d)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(d.rglob("*")) if f.is_file()}


def test_make_series_writes_both_series(small):
    one, two = small.out / "one", small.out / "two"
    assert sorted(f.name for f in one.iterdir()) == [
        "0000-cover-letter.patch", "0001-mm-add-a-thing.patch", "0002-mm-their-change.patch"]
    assert sorted(f.name for f in two.iterdir()) == [
        "0000-cover-letter.patch", "0001-fs-use-the-thing.patch"]
    c1 = (one / "0000-cover-letter.patch").read_text()
    c2 = (two / "0000-cover-letter.patch").read_text()
    assert "Subject: [PATCH 0/2] mm: the thing\n" in c1
    assert "Subject: [RFC PATCH 0/1] fs: the thing's users\n" in c2
    assert "Subject: [RFC PATCH 1/1] fs: use the thing\n" in (two / "0001-fs-use-the-thing.patch").read_text()
    assert "Why this series, in plain text." in c2
    assert "series one: PATCH v1, 2 patches" in small.first_stdout
    assert "series two: RFC PATCH v1, 1 patches" in small.first_stdout


def test_the_second_series_names_its_prerequisites(small):
    base = subprocess.run(["git", "-C", str(small.build / "series-git"), "rev-parse",
                           "series-base"], capture_output=True, text=True).stdout.strip()
    c1 = (small.out / "one/0000-cover-letter.patch").read_text()
    c2 = (small.out / "two/0000-cover-letter.patch").read_text()
    assert f"\nbase-commit: {base}\n" in c1 and "prerequisite-patch-id" not in c1
    # The patch-ids of the first series' mails, as the list's archive computes them.
    ids = subprocess.run(["git", "patch-id", "--stable"], capture_output=True, text=True,
                         input="".join(f.read_text() for f in sorted((small.out / "one")
                                                                     .glob("000[1-9]-*")))).stdout
    want = "".join(f"prerequisite-patch-id: {l.split()[0]}\n" for l in ids.splitlines())
    assert len(want.splitlines()) == 2
    assert f"\nbase-commit: {base}\n{want}" in c2
    # What git am users do: the first series, then the second, on the base.
    repo = small.build / "series-git"
    g = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*g, "checkout", "-q", "-f", "-B", "am-test", "series-base"], check=True)
    mails = sorted((small.out / "one").glob("000[1-9]-*")) + \
        sorted((small.out / "two").glob("000[1-9]-*"))
    subprocess.run([*g, "am", "-q", *map(str, mails)], check=True)
    assert (repo / "fs/splice.c").read_text() == "int splice;\nint use_thing;\n"


def test_recipients_of_the_small_series(small):
    to, cc = headers(small.out / "one/0001-mm-add-a-thing.patch")
    assert to == ["Mm Maintainer <mm@example.org>"]
    assert "Extra Person <extra@example.org>" in cc and "Mm Reviewer <mmrev@example.org>" in cc
    assert "linux-mm@example.org" in cc and not any("fs" in x or "ann@" in x for x in to + cc)
    # A MAINTAINERS keyword the mail's text matches (K:), not its files: Cc.
    assert "Rt Maintainer <rt@example.org>" in cc and "linux-rt@example.org" in cc
    to, cc = headers(small.out / "one/0002-mm-their-change.patch")
    assert cc[0] == "Ann Author <ann@example.org>"
    to, cc = headers(small.out / "two/0001-fs-use-the-thing.patch")
    assert to == ["Fs Maintainer <fs@example.org>"] and "linux-fsdevel@example.org" in cc
    # MAIL_LISTS (default linux-mm@kvack.org) goes to every mail, but no
    # maintainer of mm/ for a mail that only touches fs/.
    assert "linux-mm@kvack.org" in cc
    assert not any("mm@example" in x or "mmrev" in x or "ann@" in x for x in to + cc)
    to, cc = headers(small.out / "one/0000-cover-letter.patch")
    assert to == ["Mm Maintainer <mm@example.org>"] and "Ann Author <ann@example.org>" in cc
    assert "Rt Maintainer <rt@example.org>" in cc
    assert not any("sender@" in x for x in to + cc)


def test_series_selects_one_and_mail_cc(small):
    before = snapshot(small.out / "one")
    p = small.run("series.sh", {"SERIES": "two", "MAIL_CC": "All Of Us <all@example.org>"})
    assert p.returncode == 0, p.stderr
    assert "series two:" in p.stdout and "series one:" not in p.stdout
    assert snapshot(small.out / "one") == before
    assert "All Of Us <all@example.org>" in headers(small.out / "two/0001-fs-use-the-thing.patch")[1]
    p = small.run("series.sh")
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("env,error", [
    ({"SERIES": "foo"}, "unknown SERIES 'foo' (patches/mail.plan has: one two)"),
    ({"VERSION": "2"}, "VERSION=2: say which series it is for"),
    ({"VERSION": "2", "SERIES": "one"}, "has no 'v2:' section"),
    ({"MAIL_CC": "nobody"}, "not an address"),
])
def test_series_bad_input_changes_nothing(small, env, error):
    before = snapshot(small.build)
    p = small.run("series.sh", env)
    assert p.returncode != 0 and error in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert snapshot(small.build) == before


def test_series_refuses_a_markdown_cover_letter(small):
    letter = small.top / "patches/cover-letter.one"
    good = letter.read_text()
    before = snapshot(small.build)
    try:
        letter.write_text(good + "\n## Numbers\n\n| a | b |\n")
        p = small.run("series.sh")
    finally:
        letter.write_text(good)
    assert p.returncode != 0 and "cover-letter.one:5: a markdown heading" in p.stderr
    assert snapshot(small.build) == before


def test_series_check_takes_series(small):
    env = {"SERIES_CHECK_CONFIGS": ""}
    p = small.run("series_check.sh", dict(env, SERIES="two"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "series-check two: 1 patches applied with git am" in p.stdout
    results = (small.build / "series-check-two.txt").read_text()
    assert results == "01 checkpatch ok  fs-use-the-thing\nseries two: checkpatch only, no build\n"
    # The prerequisites were applied first, unchecked.
    log = subprocess.run(["git", "-C", str(small.build / "series-git"), "log", "--format=%s",
                          "series-base..series-check-two"], capture_output=True, text=True).stdout
    assert log.splitlines() == ["fs: use the thing", "mm: their change", "mm: add a thing"]
    p = small.run("series_check.sh", env)
    assert p.returncode == 0, p.stderr
    assert "series-check one: 2 patches" in p.stdout and "series-check two: 1 patches" in p.stdout
    p = small.run("series_check.sh", dict(env, SERIES="one", FROM="2"))
    assert p.returncode == 0 and "checking from patch 2" in p.stdout, p.stderr


@pytest.mark.parametrize("script_name", ["series_check.sh", "series_b4.sh"])
@pytest.mark.parametrize("env,error", [
    ({"SERIES": "foo"}, "unknown SERIES 'foo' (patches/mail.plan has: one two)"),
])
def test_series_check_and_b4_bad_series(small, script_name, env, error):
    before = snapshot(small.build)
    p = small.run(script_name, dict(env, SERIES_CHECK_CONFIGS=""))
    assert p.returncode != 0 and error in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert snapshot(small.build) == before


def test_series_check_from_needs_one_series(small):
    p = small.run("series_check.sh", {"SERIES_CHECK_CONFIGS": "", "FROM": "2"})
    assert p.returncode != 0 and "FROM=2: say which series" in p.stderr


def test_series_warns_of_a_sender_no_one_can_reply_to(small):
    p = small.run("series.sh", {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.email",
                                "GIT_CONFIG_VALUE_0": "someone@users.noreply.a-seed.example"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "cannot receive replies" in p.stdout + p.stderr
    assert "cannot receive replies" not in small.first_stdout
