#!/usr/bin/env python3
"""The mail series as a git branch, and back (`make edit`, `make absorb`).

Usage:
  series_edit.py edit   --top TOP --base-repo REPO --edit-dir DIR [--force]
  series_edit.py absorb --top TOP --edit-dir DIR

edit: builds one commit per block of patches/mail.plan on the pinned base
(the tag series-base of REPO, build/series-git), the way `make series` does:
the block's files copied from TOP, its quilt patches applied with
`patch -p1 -F0`, the block's message signed off by the git identity of TOP.
DIR (build/edit) is a clone of REPO with the commits on the branch `series`,
checked out. Every commit carries git notes: refs/notes/plan names its plan
block (notes follow `commit --amend` and `rebase`), refs/notes/commits holds
the block's notes after "---" (as `make series` does). An existing DIR is
only moved to the new commits when its branch holds nothing that is not in
the repository (else: `make absorb` first, or FORCE=1).

absorb: writes the branch checked out in DIR back into TOP: each commit's
added files (files the base does not have, under rust/ mm/ Documentation/
tools/) to their paths, its changes to existing files into the quilt
patch(es) of its plan block, its message (without the sign-off of TOP's git
identity) and notes into mail.plan. A commit with no plan note and a subject
no block has becomes a new block with a new quilt patch; the order of the
commits is the order of the plan and of patches/series; a block no commit
maps to is dropped. A quilt patch's section of one file is kept byte for byte
when it still turns the new preimage into the new postimage (so an unchanged
branch changes nothing, and a change shifts no line numbers of later
patches); else it is regenerated in its own style (`git diff --abbrev=7` for
a git-style section, else GNU `diff -u -p`, as `quilt refresh -p ab
--no-timestamps --no-index` writes it). Everything is computed in memory and
checked by rebuilding the series from it (every commit's tree must come out
the same) before any file of TOP is written; bad input changes nothing and
fails with one line.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, str(Path(__file__).resolve().parent))
import mail_plan  # noqa: E402

# Scratch files (patch runs, diffs) in memory when we can: the disk is busy with kernel builds.
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
TOP_DIRS = ("rust/", "mm/", "Documentation/", "tools/")
BRANCH = "series"
BASE_TAG = "series-base"
SYNCED = "refs/series-edit/synced"  # the branch tip the repository holds
PLAN_NOTES = "refs/notes/plan"
MAIL_NOTES = "refs/notes/commits"
META = "series-edit.json"
HUNK = re.compile(rb"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
ZERO = "0" * 40
BUILD_REF = "refs/series-edit/build"  # fast-import's scratch branch


class Refuse(Exception):
    """Bad input: one line for the user, nothing written."""


# ---------------------------------------------------------------- git


class Git:
    def __init__(self, path, env=None):
        self.path = str(path)
        self.env = dict(os.environ, LC_ALL="C", GIT_TERMINAL_PROMPT="0")
        for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            self.env.pop(k, None)
        if env:
            self.env.update(env)

    def run(self, *args, input=None, env=None, check=True, text=True):
        e = self.env if env is None else dict(self.env, **env)
        if isinstance(input, str):
            input = input.encode()
        p = subprocess.run(["git", "-C", self.path, *args], input=input, env=e,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if check and p.returncode != 0:
            raise Refuse(f"git {' '.join(args[:3])} in {self.path} failed: "
                         f"{p.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
        out = p.stdout
        if text:
            out = out.decode()
        return out if check else (p.returncode, out)

    def rev(self, name):
        rc, out = self.run("rev-parse", "-q", "--verify", name + "^{commit}", check=False)
        return out.strip() if rc == 0 else None

    def blob(self, sha):
        """A blob's content, through one `git cat-file --batch`."""
        if getattr(self, "_batch", None) is None:
            self._batch = subprocess.Popen(["git", "-C", self.path, "cat-file", "--batch"],
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           env=self.env)
        b = self._batch
        b.stdin.write(sha.encode() + b"\n")
        b.stdin.flush()
        head = b.stdout.readline().split()
        if len(head) != 3:
            raise Refuse(f"{self.path}: no object {sha}")
        data = b.stdout.read(int(head[2]) + 1)[:-1]
        return data

    def tree_entries(self, rev, paths=None):
        """{path: (mode, sha)} of the files of `rev` (all, or `paths`)."""
        args = ["ls-tree", "-r", "-z", "--full-tree", rev]
        if paths is not None:
            if not paths:
                return {}
            args += ["--", *paths]
        out = self.run(*args, text=False)
        res = {}
        for ent in out.split(b"\0"):
            if not ent:
                continue
            meta, path = ent.split(b"\t", 1)
            mode, _typ, sha = meta.decode().split()
            res[path.decode()] = (mode, sha)
        return res

    def note(self, ref, commit):
        rc, out = self.run("notes", "--ref", ref, "show", commit, check=False)
        return out if rc == 0 else ""


# ---------------------------------------------------------------- the plan


def parse_plan_text(text, what="mail.plan"):
    try:
        return mail_plan.parse(text)
    except SystemExit as e:
        raise Refuse(f"{what}: {str(e.code).removeprefix('mail.plan: ')}")


class Plan:
    """patches/mail.plan as its preamble and one raw span per block, so that a
    block that does not change is written back byte for byte. The "series:"
    lines (mail_plan.py) are not part of a span: each is written before the
    first block of its series, wherever that block now is."""

    def __init__(self, text):
        self.text = text
        lines = text.split("\n")
        starts = [i for i, l in enumerate(lines) if l.startswith("patch:")]
        if not starts:
            raise Refuse("patches/mail.plan has no 'patch:' block")
        # A block's text starts at its "series:" line, if it has one.
        heads = [s - 1 if s > 0 and mail_plan.is_marker(lines, s - 1) else s for s in starts]
        self.preamble = "\n".join(lines[:heads[0]])
        self.has_preamble = heads[0] > 0
        self.spans, self.seps = [], []
        for k, s in enumerate(starts):
            e = heads[k + 1] if k + 1 < len(starts) else len(lines)
            span = lines[s:e]
            sep = []
            while span and span[-1] == "":
                sep.append(span.pop())
            self.spans.append("\n".join(span))
            self.seps.append(len(sep))
        self.blocks = parse_plan_text(text)
        assert len(self.blocks) == len(self.spans)
        self.markers = {b["series"]: b["marker"] for b in self.blocks if b["marker"]}

    def render(self, new_blocks):
        """The plan text of `new_blocks`, [(block, raw span or None)]: the
        preamble, then each block (its raw span if unchanged) after the
        "series:" line of its series if it is the first of it, the blank lines
        between blocks as they were at that position."""
        text = self.preamble + "\n" if self.has_preamble else ""
        last = len(new_blocks) - 1
        for j, (b, raw) in enumerate(new_blocks):
            if b["series"] in self.markers and (j == 0 or new_blocks[j - 1][0]["series"]
                                                != b["series"]):
                text += self.markers[b["series"]] + "\n"
            text += raw if raw is not None else render_block(b)
            if j < last:
                sep = self.seps[j] if j < len(self.seps) - 1 else 1
                text += "\n" * (max(sep, 1) + 1)
            else:
                text += "\n" * max(self.seps[-1], 1)
        return text


def render_block(b):
    lines = [f"patch: {b['subject']}"]
    if b.get("from"):
        lines.append(f"from: {b['from']}")
    if b["files"]:
        lines.append("files: " + " ".join(b["files"]))
    if b["quilt"]:
        lines.append("quilt: " + " ".join(b["quilt"]))
    lines.append("")
    lines += b["body"]
    if b["notes"]:
        lines += ["---"] + b["notes"]
    return "\n".join(lines)


def block_key(b):
    return (b["subject"], b.get("from"), tuple(b["files"]), tuple(b["quilt"]),
            tuple(b["body"]), tuple(b["notes"]))


def block_message(b, ident):
    """The commit message of a plan block, signed off as `git commit -s` does."""
    msg = b["subject"] + "\n\n" + "\n".join(b["body"]) + "\n"
    if ident:
        sob = f"Signed-off-by: {ident}"
        last = b["body"][-1] if b["body"] else ""
        if last != sob:
            para = []
            for l in reversed(b["body"]):
                if not l.strip():
                    break
                para.append(l)
            # Trailers, and the "[ what changed ]" notes of a patch passed
            # on (submitting-patches.rst), which git takes as part of them.
            trailers = para and all(re.match(r"^[A-Za-z0-9-]+: |^\[.*\]$", l) for l in para) \
                and any(re.match(r"^[A-Za-z0-9-]+: ", l) for l in para)
            msg += ("" if trailers else "\n") + sob + "\n"
    return msg


def read_series(top):
    text = (top / "patches/series").read_text()
    names = [l.split("#")[0].split()[0] for l in text.splitlines()
             if l.split("#")[0].strip()]
    return text, names


def render_series(old_text, old_names, names):
    if names == old_names:
        return old_text
    head = []
    for l in old_text.splitlines():
        if l.split("#")[0].strip():
            break
        head.append(l)
    return "".join(l + "\n" for l in head + names)


# ---------------------------------------------------------------- quilt patches


def strip1(label):
    label = label.split(b"\t")[0].strip()
    if label == b"/dev/null":
        return None
    parts = label.decode(errors="replace").split("/", 1)
    return parts[1] if len(parts) == 2 else parts[0]


class QuiltPatch:
    """A patch as its header (the description) and one section per file;
    header + sections is the patch, byte for byte."""

    def __init__(self, data):
        lines = data.splitlines(keepends=True)
        starts, git_open, i, n = [], False, 0, len(lines)
        while i < n:
            l = lines[i]
            if l.startswith(b"diff --git "):
                starts.append(i)
                git_open = True
                i += 1
                continue
            if l.startswith(b"--- ") and i + 1 < n and lines[i + 1].startswith(b"+++ "):
                if not git_open:
                    starts.append(i)
                git_open = False
                i += 2
                continue
            m = HUNK.match(l)
            if m and starts:
                git_open = False
                old = int(m.group(1)) if m.group(1) is not None else 1
                new = int(m.group(2)) if m.group(2) is not None else 1
                i += 1
                while i < n and (old > 0 or new > 0):
                    c = lines[i][:1]
                    if c in (b" ", b"\n", b"\r"):
                        old, new = old - 1, new - 1
                    elif c == b"-":
                        old -= 1
                    elif c == b"+":
                        new -= 1
                    elif c != b"\\":
                        break
                    i += 1
                while i < n and lines[i].startswith(b"\\"):
                    i += 1
                continue
            i += 1
        self.header = b"".join(lines[:starts[0]]) if starts else data
        self.sections = []  # [path, bytes, git_style]
        for k, s in enumerate(starts):
            e = starts[k + 1] if k + 1 < len(starts) else n
            sec = b"".join(lines[s:e])
            self.sections.append((section_path(lines[s:e]), sec,
                                  lines[s].startswith(b"diff --git ")))

    def paths(self):
        return [p for p, _, _ in self.sections]

    def section(self, path):
        for p, sec, git in self.sections:
            if p == path:
                return sec, git
        return None, False


def section_path(lines):
    minus = plus = None
    for l in lines:
        if l.startswith(b"--- ") and minus is None:
            minus = strip1(l[4:])
        elif l.startswith(b"+++ ") and plus is None:
            plus = strip1(l[4:])
            break
    if plus or minus:
        return plus or minus
    m = re.match(rb"diff --git a/(\S+) b/(\S+)", lines[0])
    return m.group(2).decode() if m else None


def apply_patch(files, patch_bytes):
    """`patch -p1 -F0 -N` (as series.sh applies) to {path: bytes|None}; returns
    the files after it, or None if it does not apply."""
    with tempfile.TemporaryDirectory(prefix="absorb-", dir=SCRATCH) as d:
        for p, data in files.items():
            if data is not None:
                f = Path(d, p)
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_bytes(data)
        r = subprocess.run(["patch", "-p1", "-F0", "-N", "-s", "--no-backup-if-mismatch",
                            "-r", "-"], cwd=d, input=patch_bytes, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env=dict(os.environ, LC_ALL="C"))
        if r.returncode != 0:
            return None
        out = {}
        for p in files:
            f = Path(d, p)
            out[p] = f.read_bytes() if f.is_file() else None
        return out


def gnu_section(path, pre, post):
    """A file's section as `quilt refresh -p ab --no-timestamps --no-index`
    writes it (GNU diff -u -p)."""
    with tempfile.TemporaryDirectory(prefix="absorb-", dir=SCRATCH) as d:
        a, b = Path(d, "a"), Path(d, "b")
        a.write_bytes(pre or b"")
        b.write_bytes(post or b"")
        la = "/dev/null" if pre is None else f"a/{path}"
        lb = "/dev/null" if post is None else f"b/{path}"
        r = subprocess.run(["diff", "-u", "-p", "--label", la, "--label", lb, str(a), str(b)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(os.environ, LC_ALL="C"))
        if r.returncode == 2 or r.stdout.startswith(b"Binary files"):
            raise Refuse(f"{path}: cannot write its change as a text patch (binary?)")
        return r.stdout


# ---------------------------------------------------------------- building the series


class Builder:
    """Commits the series of a plan on the base in the object store of `git`,
    the way series.sh does (files copied, quilt patches applied with patch),
    without a working tree."""

    def __init__(self, git, base):
        self.git = git
        self.base = base
        self.base_files = git.tree_entries(base)

    def base_content(self, path):
        ent = self.base_files.get(path)
        return None if ent is None else (ent[0], self.git.blob(ent[1]))

    def build(self, blocks, read_added, read_quilt, messages, who):
        """One commit per block, through one `git fast-import`; returns
        [(commit, tree)]. `who`: the author and committer line, and its date;
        a block with "from:" has that author."""
        state = {}  # path -> (mode, bytes) or None

        def cur(p):
            return state[p] if p in state else self.base_content(p)

        stream = bytearray()
        for i, b in enumerate(blocks):
            changed = []
            for f in b["files"]:
                state[f] = read_added(f)
                changed.append(f)
            for q in b["quilt"]:
                data = read_quilt(q)
                paths = [p for p in QuiltPatch(data).paths() if p]
                before = {p: (cur(p)[1] if cur(p) else None) for p in paths}
                after = apply_patch(before, data)
                if after is None:
                    raise Refuse(f"patches/{q} does not apply in the order of the plan")
                for p in paths:
                    old = cur(p)
                    state[p] = None if after[p] is None else \
                        (old[0] if old else "100644", after[p])
                    changed.append(p)
            msg = messages[i].encode()
            date = " ".join(who.rsplit(" ", 2)[1:])
            author = f"{b['from']} {date}" if b.get("from") else who
            stream += b"commit %s\nmark :%d\nauthor %s\ncommitter %s\ndata %d\n%s\n" % (
                BUILD_REF.encode(), i + 1, author.encode(), who.encode(), len(msg), msg)
            if i == 0:
                stream += b"from %s\n" % self.base.encode()
            for p in dict.fromkeys(changed):
                if state[p] is None:
                    stream += b"D %s\n" % p.encode()
                else:
                    mode, data = state[p]
                    stream += b"M %s inline %s\ndata %d\n%s\n" % (
                        mode.encode(), p.encode(), len(data), data)
        if not blocks:
            return []
        with tempfile.TemporaryDirectory(prefix="series-edit-", dir=SCRATCH) as d:
            marks = Path(d, "marks")
            self.git.run("fast-import", "--quiet", "--force", f"--export-marks={marks}",
                         input=bytes(stream))
            commits = dict(l.split() for l in marks.read_text().splitlines())
        self.git.run("update-ref", "-d", BUILD_REF)
        shas = [commits[f":{i + 1}"] for i in range(len(blocks))]
        trees = dict(l.split() for l in self.git.run(
            "log", "--no-walk=unsorted", "--format=%H %T", *shas).splitlines())
        return [(c, trees[c]) for c in shas]


def repo_added(top):
    def read(path):
        f = top / path
        if not f.is_file():
            raise Refuse(f"patches/mail.plan names {path}, which the repository does not have")
        return ("100755" if os.access(f, os.X_OK) else "100644", f.read_bytes())
    return read


def repo_quilt(top):
    def read(name):
        f = top / "patches" / name
        if not f.is_file():
            raise Refuse(f"patches/{name} does not exist")
        return f.read_bytes()
    return read


def identity(top):
    g = Git(top)
    rc1, name = g.run("config", "user.name", check=False)
    rc2, email = g.run("config", "user.email", check=False)
    if rc1 or rc2 or not name.strip() or not email.strip():
        return None
    return f"{name.strip()} <{email.strip()}>"


def committer_env(ident):
    """`git notes add` commits in the edit clone, which has no identity of its
    own: the repository's (`ident`), else the series' fallback. Without one,
    on a machine with no git identity at all (a fresh CI machine's root), git
    refuses ("unable to auto-detect email address")."""
    m = re.fullmatch(r"(.*) <(.*)>", ident or "series <series@localhost>")
    env = {f"GIT_{who}_{k}": v for who in ("AUTHOR", "COMMITTER")
           for k, v in (("NAME", m.group(1)), ("EMAIL", m.group(2)))}
    return {k: v for k, v in env.items() if k not in os.environ}


def plan_note(b):
    lines = []
    if b["quilt"]:
        lines.append("quilt: " + " ".join(b["quilt"]))
    if b["files"]:
        lines.append("files: " + " ".join(b["files"]))
    return "\n".join(lines) + "\n"


def check_plan(top, plan):
    _, names = read_series(top)
    quilt = [q for b in plan.blocks for q in b["quilt"]]
    if quilt != names:
        raise Refuse("patches/mail.plan must use every patch of patches/series once, in its order")


def series_from_repo(top, git, base, ident):
    plan = Plan((top / "patches/mail.plan").read_text())
    check_plan(top, plan)
    base_date = git.run("log", "-1", "--format=%ad", "--date=raw", base).strip()
    who = f"{ident or 'series <series@localhost>'} {base_date}"
    messages = [block_message(b, ident) for b in plan.blocks]
    built = Builder(git, base).build(plan.blocks, repo_added(top), repo_quilt(top), messages,
                                     who)
    return plan, built


def branch_commits(git, base, tip):
    out = git.run("rev-list", "--reverse", "--topo-order", f"{base}..{tip}").split()
    return out


def commit_info(git, c):
    raw = git.run("cat-file", "commit", c, text=False)
    head, _, msg = raw.partition(b"\n\n")
    tree = parent = author = None
    parents = []
    for l in head.decode(errors="replace").splitlines():
        if l.startswith("tree "):
            tree = l[5:]
        elif l.startswith("parent "):
            parents.append(l[7:])
        elif l.startswith("author "):
            author = l[7:].rsplit(" ", 2)[0]  # "Name <email>", without the date
    return {"commit": c, "tree": tree, "parents": parents, "author": author,
            "message": msg.decode("utf-8", errors="replace")}


def in_progress(git):
    gd = Path(git.run("rev-parse", "--absolute-git-dir").strip())
    for f, what in (("rebase-merge", "a rebase"), ("rebase-apply", "a rebase or git am"),
                    ("MERGE_HEAD", "a merge"), ("CHERRY_PICK_HEAD", "a cherry-pick"),
                    ("REVERT_HEAD", "a revert"), ("BISECT_LOG", "a bisect")):
        if (gd / f).exists():
            return what
    return None


def dirty(git):
    """Uncommitted changes: changed or new files, and new files that only the
    base's catch-all "/*" of Debian's .gitignore hides (Debian's kernel source
    ignores every top-level entry; build products stay ignored)."""
    out = git.run("status", "--porcelain", "--untracked-files=normal", "--ignore-submodules")
    res = [l[3:] for l in out.splitlines() if l.strip()]
    ignored = [p for p in git.run("ls-files", "-z", "--others", "--ignored",
                                  "--exclude-standard").split("\0") if p]
    if not ignored:
        return res
    v = git.run("check-ignore", "-v", "-z", "--stdin", input="\0".join(ignored) + "\0",
                check=False)[1].split("\0")
    hidden = [v[i + 3] for i in range(0, len(v) - 3, 4) if v[i] == ".gitignore" and v[i + 2] == "/*"]
    if not hidden:
        return res
    with tempfile.TemporaryDirectory(prefix="absorb-", dir=SCRATCH) as d:
        # The tree's .gitignore files without the catch-all, in an empty repository.
        subprocess.run(["git", "init", "-q", d], check=True, env=git.env)
        for f in git.run("ls-files", "-z", "--", ".gitignore", "*/.gitignore").split("\0"):
            if f and Path(git.path, f).is_file():
                rules = Path(git.path, f).read_text(errors="replace").splitlines()
                if f == ".gitignore":
                    rules = [l for l in rules if l.strip() not in ("/*", "!/debian/")]
                Path(d, f).parent.mkdir(parents=True, exist_ok=True)
                Path(d, f).write_text("".join(l + "\n" for l in rules))
        r = subprocess.run(["git", "-C", d, "check-ignore", "--no-index", "-z", "--stdin"],
                           input=("\0".join(hidden) + "\0").encode(), stdout=subprocess.PIPE,
                           env=git.env)
        built = set(r.stdout.decode().split("\0"))
    return res + [p for p in hidden if p not in built]


# ---------------------------------------------------------------- make edit


def cmd_edit(a):
    top, edit = Path(a.top).resolve(), Path(a.edit_dir).resolve()
    src = Git(a.base_repo)
    base_commit = src.rev(BASE_TAG)
    if not base_commit:
        raise Refuse(f"{a.base_repo} has no tag {BASE_TAG}")
    base_tree = src.run("rev-parse", base_commit + "^{tree}").strip()
    ident = identity(top)
    fresh = not edit.exists()
    if not fresh:
        if not (edit / ".git" / META).is_file():
            raise Refuse(f"{edit} exists and is not an edit branch of the series "
                         f"(move it away, or set EDIT_DIR=)")
    else:
        edit.parent.mkdir(parents=True, exist_ok=True)
        tmp = edit.with_name(edit.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        # Hard links to the base repository's objects when on the same file system.
        same_fs = os.stat(a.base_repo).st_dev == os.stat(tmp.parent).st_dev
        subprocess.run(["git", "clone", "-q", "--local", "--no-checkout",
                        *([] if same_fs else ["--no-hardlinks"]), str(a.base_repo), str(tmp)],
                       check=True)
        g = Git(tmp)
        g.run("remote", "remove", "origin")
        g.run("config", "notes.rewriteRef", "refs/notes/*")  # notes follow amend and rebase
        g.run("config", "notes.rewriteMode", "concatenate")
        g.run("config", "feature.manyFiles", "true")  # a kernel tree: a smaller, faster index
        g.run("config", "notes.displayRef", PLAN_NOTES)
        (tmp / ".git" / META).write_text(json.dumps(
            {"base_commit": base_commit, "base_tree": base_tree, "top": str(top)}, indent=1) + "\n")
        tmp.rename(edit)
    git = Git(edit, env=committer_env(ident))
    meta = json.loads((edit / ".git" / META).read_text())
    if meta["base_tree"] != base_tree:
        raise Refuse(f"{edit} was made on another base (tree {meta['base_tree'][:12]}, "
                     f"now {base_tree[:12]}): move it away first")
    base = git.rev(BASE_TAG)
    if not base or git.run("rev-parse", base + "^{tree}").strip() != base_tree:
        raise Refuse(f"{edit}: the tag {BASE_TAG} is not the pinned base any more")

    plan, built = series_from_repo(top, git, base, ident)
    messages = [block_message(b, ident) for b in plan.blocks]
    tip = built[-1][0]

    old_tip = git.rev(f"refs/heads/{BRANCH}")
    if old_tip and not fresh:
        what = in_progress(git)
        if what:
            raise Refuse(f"{edit}: {what} is in progress; finish or abort it first")
        same = False
        commits = branch_commits(git, base, old_tip)
        if len(commits) == len(built):
            infos = [commit_info(git, c) for c in commits]
            same = all(i["tree"] == t and i["message"] == m
                       for i, (_, t), m in zip(infos, built, messages))
        if same and not dirty(git):
            head = git.run("symbolic-ref", "-q", "HEAD", check=False)[1].strip()
            if head != f"refs/heads/{BRANCH}":
                git.run("checkout", "-q", BRANCH)
            git.run("update-ref", SYNCED, old_tip)
            print(f"edit: {edit} (branch {BRANCH}) already holds the series: "
                  f"{len(built)} commits on {BASE_TAG}")
            return
        if not a.force:
            if dirty(git):
                raise Refuse(f"{edit} has uncommitted changes: commit them and 'make absorb', "
                             f"or FORCE=1 to discard them")
            if git.rev(SYNCED) != old_tip:
                raise Refuse(f"{edit}: branch {BRANCH} has commits that are not in the "
                             f"repository: 'make absorb' first, or FORCE=1 to discard them")
    for (c, _), b in zip(built, plan.blocks):
        git.run("notes", "--ref", PLAN_NOTES, "add", "-f", "-F", "-", c, input=plan_note(b))
        if b["notes"]:
            git.run("notes", "--ref", MAIL_NOTES, "add", "-f", "-F", "-", c,
                    input="\n".join(b["notes"]) + "\n")
    if fresh:
        print(f"edit: checking out the series in {edit} (a kernel tree: ~20 s)", flush=True)
    git.run("checkout", "-q", "-f", "-B", BRANCH, tip)
    if a.force:
        git.run("clean", "-q", "-fd")
    git.run("update-ref", SYNCED, tip)
    print(f"edit: {len(built)} commits on {BASE_TAG} (Linux 7.3.4) in {edit}, branch {BRANCH}; "
          f"change them with git (commit --fixup, rebase -i {BASE_TAG}), then 'make absorb'")


# ---------------------------------------------------------------- make absorb


def strip_signoff(msg, ident):
    lines = msg.rstrip("\n").split("\n")
    while ident and lines and lines[-1].strip() == f"Signed-off-by: {ident}":
        lines.pop()
    return "\n".join(lines)


def message_block(msg, ident, what):
    """(subject, body) of a commit message, as mail.plan holds it."""
    text = strip_signoff(msg, ident)
    lines = text.split("\n")
    subject = lines[0].strip()
    body = lines[1:]
    mail_plan.strip_blank(body)
    if not subject:
        raise Refuse(f"{what} has no subject")
    if len(lines) > 1 and lines[1].strip():
        raise Refuse(f"{what}: the subject must be one line followed by a blank line")
    if not body:
        raise Refuse(f"{what} has no commit message body (mail.plan needs one)")
    for l in body:
        if l.startswith(("patch:",)) or l == "---":
            raise Refuse(f"{what}: its message has a line {l!r}, which mail.plan cannot hold")
        # What git adds to the message of a conflicted rebase step and keeps
        # when the step is committed without an editor (cleanup=whitespace).
        if l.startswith("# Conflicts:"):
            raise Refuse(f"{what}: its message still has git's '# Conflicts:' comment "
                         f"from a rebase; reword the commit without it")
    return subject, [l.rstrip() for l in body]


def assign_series(new_blocks):
    """Each block stays in the series of the plan block it was; a new one
    joins the series of the block before it (the first, of the block after
    it). A series must stay one run of blocks: a commit moved across a
    "series:" line of mail.plan is refused (move the line in mail.plan)."""
    known = [b["series"] for b, _ in new_blocks]
    for k, (b, _) in enumerate(new_blocks):
        if b["series"] is None:
            before = [x for x in known[:k] if x is not None]
            after = [x for x in known[k + 1:] if x is not None]
            b["series"] = (before[-1:] or after[:1] or [mail_plan.DEFAULT_SERIES])[0]
    runs = []
    for b, _ in new_blocks:
        if not runs or runs[-1] != b["series"]:
            if b["series"] in runs:
                raise Refuse(f"series {b['series']}: its commits are no longer together (one "
                             f"moved across the 'series:' line of patches/mail.plan?): move "
                             f"it back, or move that line in mail.plan first")
            runs.append(b["series"])


def slug(subject, taken):
    s = re.sub(r"[^a-z0-9_]+", "-", subject.lower()).strip("-")
    if len(s) > 60:
        s = s[:60].rsplit("-", 1)[0]
    name, k = f"{s}.patch", 2
    while name in taken:
        name, k = f"{s}-{k}.patch", k + 1
    return name


def cmd_absorb(a):
    top, edit = Path(a.top).resolve(), Path(a.edit_dir).resolve()
    if not (edit / ".git" / META).is_file():
        raise Refuse(f"no edit branch in {edit}: run 'make edit' first")
    git = Git(edit)
    meta = json.loads((edit / ".git" / META).read_text())
    ident = identity(top)
    where = f"{os.path.relpath(edit, top) if str(edit).startswith(str(top)) else edit}"

    what = in_progress(git)
    if what:
        raise Refuse(f"{where}: {what} is in progress; finish or abort it first")
    rc, head = git.run("symbolic-ref", "-q", "--short", "HEAD", check=False)
    if rc != 0:
        raise Refuse(f"{where}: HEAD is detached; check out the branch to absorb "
                     f"(git checkout {BRANCH})")
    branch = head.strip()
    d = dirty(git)
    if d:
        raise Refuse(f"{where} has uncommitted changes ({len(d)} file{'s' if len(d) > 1 else ''}: "
                     f"{' '.join(d[:3])}{' ...' if len(d) > 3 else ''}): commit them (a new file with 'git add -f': "
                     f"the base's .gitignore ignores new files) or stash them first")

    # The base: the pinned base's tree, first-parent below the branch, no merges after it.
    base_tree = meta["base_tree"]
    tag = git.rev(BASE_TAG)
    if not tag or git.run("rev-parse", tag + "^{tree}").strip() != base_tree:
        raise Refuse(f"{where}: the tag {BASE_TAG} is not the pinned base any more; "
                     f"'make edit' in a new EDIT_DIR")
    log = git.run("log", "--first-parent", "-n", "2000", "--format=%H %T %P", "HEAD").splitlines()
    base = None
    for k, l in enumerate(log):
        c, t, *parents = l.split()
        if t == base_tree:
            base = c
            break
        if len(parents) != 1:
            break
    if base is None:
        raise Refuse(f"branch {branch} of {where} is not on the pinned base (Linux 7.3.4, tag "
                     f"{BASE_TAG}): rebase it there (git rebase --onto {BASE_TAG} <its base>)")
    commits = [commit_info(git, c) for c in branch_commits(git, base, "HEAD")]
    if not commits:
        raise Refuse(f"branch {branch} of {where} has no commits on {BASE_TAG}")
    for c in commits:
        if len(c["parents"]) != 1:
            raise Refuse(f"branch {branch} of {where} has a merge ({c['commit'][:12]}): "
                         f"the series must be linear")

    # The repository as it is.
    plan_text = (top / "patches/mail.plan").read_text()
    plan = Plan(plan_text)
    check_plan(top, plan)
    series_text, series_names = read_series(top)
    old = plan.blocks
    quilt = {q: QuiltPatch((top / "patches" / q).read_bytes()) for b in old for q in b["quilt"]}
    quilt_block = {q: i for i, b in enumerate(old) for q in b["quilt"]}
    file_block = {f: i for i, b in enumerate(old) for f in b["files"]}
    patched = {p for qp in quilt.values() for p in qp.paths() if p}
    builder = Builder(git, base)
    in_base = builder.base_files

    def label(i):
        return f"patch {i + 1} ({old[i]['subject']})"

    # Which plan block each commit is: its plan note, else its subject.
    claimed, mapping = set(), []
    for k, c in enumerate(commits):
        c["what"] = f"commit {k + 1} ({c['commit'][:12]} {c['message'].split(chr(10))[0][:50]})"
        note = git.note(PLAN_NOTES, c["commit"])
        bs = []
        for l in note.splitlines():
            if l.startswith("quilt:"):
                bs += [quilt_block[q] for q in l[6:].split() if q in quilt_block]
            elif l.startswith("files:"):
                bs += [file_block[f] for f in l[6:].split() if f in file_block]
        bs = [i for i in dict.fromkeys(bs) if i not in claimed]
        if not note.strip():
            subj = c["message"].split("\n")[0].strip()
            bs = [i for i, b in enumerate(old) if b["subject"] == subj and i not in claimed][:1]
        claimed.update(bs)
        mapping.append(sorted(bs))

    all_names = {p.name for p in (top / "patches").iterdir()}
    new_blocks, writes, deletes = [], {}, set()
    added_by = {}  # added file -> commit index that adds it
    new_quilt_texts = {}
    for k, c in enumerate(commits):
        bs = mapping[k]
        subject, body = message_block(c["message"], ident, c["what"])
        notes = git.note(MAIL_NOTES, c["commit"]).rstrip("\n").split("\n")
        mail_plan.strip_blank(notes)
        parent = c["parents"][0]
        raw = git.run("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", parent,
                      c["commit"], text=False).split(b"\0")
        changes = []  # (status, path, old mode, new mode, new sha)
        for j in range(0, len(raw) - 1, 2):
            om, nm, _os, ns, st = raw[j].decode()[1:].split()
            changes.append((st, raw[j + 1].decode(), om, nm, ns))
        if not changes:
            raise Refuse(f"{c['what']} changes nothing: drop it (git rebase -i)")

        old_files = [f for i in bs for f in old[i]["files"]]
        block_quilt = [q for i in bs for q in old[i]["quilt"]]
        if not bs:
            block_quilt = []
        files, assign = [], {}  # assign: quilt name -> [paths]
        new_name = None
        for st, p, om, nm, ns in changes:
            upstream = p in in_base
            if not upstream and p.startswith(TOP_DIRS):
                if st != "A":
                    j = added_by.get(p)
                    who = f"commit {j + 1}" if j is not None else "an earlier commit"
                    raise Refuse(f"{c['what']} changes {p}, which {who} adds: an added file is "
                                 f"kept whole in the patch that adds it (git commit --fixup there)")
                if bs and p not in file_block:
                    raise Refuse(f"{c['what']} adds {p}, which no plan block owns: add it in a "
                                 f"commit of its own (it becomes a new plan block)")
                added_by[p] = k
                files.append(p)
                continue
            if bs:
                if p not in patched:
                    raise Refuse(f"{c['what']} changes {p}, which no plan block owns: make that "
                                 f"change a commit of its own (it becomes a new plan block)")
                owners = [q for q in block_quilt if p in quilt[q].paths()]
                if owners:
                    target = owners[-1]
                elif block_quilt:
                    target = block_quilt[-1]
                else:
                    raise Refuse(f"{c['what']} changes {p}, but its plan block has no quilt "
                                 f"patch: make that change a commit of its own")
            else:
                if new_name is None:
                    new_name = slug(subject, all_names | set(new_quilt_texts))
                    block_quilt = [new_name]
                target = new_name
            if om != nm and om != "000000" and nm != "000000":
                raise Refuse(f"{c['what']} changes the mode of {p}, which a quilt patch cannot")
            assign.setdefault(target, []).append(p)
        # Keep the order of the files of the old blocks; new ones sorted, after them.
        files = [f for f in old_files if f in files] + sorted(f for f in files if f not in old_files)

        # The quilt patches of the block, one section per file.
        pre_all = builder.git.tree_entries(parent, [p for ps in assign.values() for p in ps])
        post_all = builder.git.tree_entries(c["commit"], [p for ps in assign.values() for p in ps])

        def content(ents, p):
            return git.blob(ents[p][1]) if p in ents else None

        sections_of = {q: {} for q in block_quilt}
        for q in block_quilt:
            qp = quilt.get(q)
            for p in assign.get(q, []):
                pre, post = content(pre_all, p), content(post_all, p)
                # Earlier quilt patches of the block on the same file keep their section.
                prior = [x for x in block_quilt[:block_quilt.index(q)]
                         if x in quilt and p in quilt[x].paths()]
                for x in prior:
                    sec, _ = quilt[x].section(p)
                    r = apply_patch({p: pre}, sec)
                    if r is None:
                        raise Refuse(f"{c['what']}: patches/{x} no longer applies to {p}; "
                                     f"fold the quilt patches of its plan block together first")
                    pre = r[p]
                    sections_of[x][p] = sec
                old_sec, git_style = qp.section(p) if qp else (None, False)
                if old_sec is not None and apply_patch({p: pre}, old_sec) == {p: post}:
                    sec = old_sec
                elif pre == post:
                    continue
                elif git_style and not prior:
                    sec = git.run("diff", "--abbrev=7", "--no-renames", "--no-color",
                                  "--no-ext-diff", "--no-textconv", "--diff-algorithm=myers",
                                  "--indent-heuristic", "--src-prefix=a/", "--dst-prefix=b/",
                                  "-U3", parent, c["commit"], "--", p, text=False)
                else:
                    sec = gnu_section(p, pre, post)
                sections_of[q][p] = sec
        for q in block_quilt:
            new_quilt_texts[q] = list(sections_of[q].items())

        used_quilt = [q for q in block_quilt if new_quilt_texts.get(q)]
        if not files and not used_quilt:
            raise Refuse(f"{c['what']} changes nothing the series keeps: drop it (git rebase -i)")
        # Someone else's patch keeps its author as "from:" (make edit made the
        # commit so; git commit --author makes a new one so).
        me = ident or "series <series@localhost>"
        author = c["author"] if (c["author"] or "").lower() != me.lower() else None
        b = {"subject": subject, "files": files, "quilt": used_quilt, "body": body,
             "notes": notes, "from": author, "series": old[bs[0]]["series"] if bs else None}
        if author and f"{mail_plan.SOB}{author}" not in body:
            raise Refuse(f"{c['what']} is authored by {author}, whose message has no "
                         f"'Signed-off-by: {author}': add it if the patch is theirs")
        raw_span = None
        if len(bs) == 1 and block_key(b) == block_key(old[bs[0]]):
            raw_span = plan.spans[bs[0]]
        new_blocks.append((b, raw_span))

    assign_series(new_blocks)

    # The new quilt patches' text: the old header, the old order of files.
    quilt_out = {}
    for q, sections in new_quilt_texts.items():
        if not sections:
            continue
        qp = quilt.get(q)
        secs = dict(sections)
        order = [p for p in (qp.paths() if qp else []) if p in secs]
        order += sorted(p for p in secs if p not in order)
        data = (qp.header if qp else b"") + b"".join(secs[p] for p in order)
        if qp is None or data != (top / "patches" / q).read_bytes():
            quilt_out[q] = data

    # Files of the repository to write and to remove.
    for k, (b, _) in enumerate(new_blocks):
        for f in b["files"]:
            ents = git.tree_entries(commits[k]["commit"], [f])
            mode, sha = ents[f]
            data = git.blob(sha)
            path = top / f
            if not path.is_file() or path.read_bytes() != data or \
                    os.access(path, os.X_OK) != (mode == "100755"):
                writes[f] = (mode, data)
    new_files = {f for b, _ in new_blocks for f in b["files"]}
    for b in old:
        for f in b["files"]:
            if f not in new_files:
                deletes.add(f)
    new_quilt_names = [q for b, _ in new_blocks for q in b["quilt"]]
    for q in series_names:
        if q not in new_quilt_names:
            deletes.add(f"patches/{q}")
    for q, data in quilt_out.items():
        writes[f"patches/{q}"] = ("100644", data)
    new_plan = plan.render(new_blocks)
    if new_plan != plan_text:
        writes["patches/mail.plan"] = ("100644", new_plan.encode())
    new_series = render_series(series_text, series_names, new_quilt_names)
    if new_series != series_text:
        writes["patches/series"] = ("100644", new_series.encode())

    # Check: the plan reads back as meant, and the series rebuilt from what would be
    # written is the branch, commit by commit.
    reread = parse_plan_text(new_plan, "the new mail.plan")
    if [(block_key(b), b["series"]) for b in reread] != \
            [(block_key(b), b["series"]) for b, _ in new_blocks]:
        raise Refuse("the commit messages do not read back from mail.plan the same "
                     "(a line 'patch:', 'files:', 'quilt:' or '---' in a message?)")

    def staged_added(f):
        if f in writes:
            return writes[f]
        return repo_added(top)(f)

    def staged_quilt(q):
        if f"patches/{q}" in writes:
            return writes[f"patches/{q}"][1]
        return repo_quilt(top)(q)

    messages = [c["message"] for c in commits]
    rebuilt = builder.build(reread, staged_added, staged_quilt, messages,
                            "absorb <absorb@localhost> 0 +0000")
    for k, ((_, tree), c) in enumerate(zip(rebuilt, commits)):
        if tree != c["tree"]:
            diff = git.run("diff", "--name-only", tree, c["tree"]).split()
            raise Refuse(f"internal error: the absorbed series does not rebuild {c['what']} "
                         f"({' '.join(diff[:3])}); nothing written")

    # Write: everything checked, each file replaced whole.
    for f, (mode, data) in writes.items():
        path = top / f
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".absorb-tmp")
        tmp.write_bytes(data)
        os.chmod(tmp, 0o755 if mode == "100755" else 0o644)
        os.replace(tmp, path)
    repo = Git(top)
    tracked = set(repo.run("ls-files", "-z", "--", *writes, *deletes).split("\0")) - {""} \
        if (writes or deletes) else set()
    for f in sorted(deletes):
        if f in tracked:
            repo.run("rm", "-q", "--cached", "--", f)
        (top / f).unlink(missing_ok=True)
    new = [f for f in writes if f not in tracked]
    if new:
        repo.run("add", "--intent-to-add", "--", *new)
    git.run("update-ref", SYNCED, git.rev("HEAD"))

    if not writes and not deletes:
        print(f"absorb: {len(commits)} commits of {where} (branch {branch}): "
              f"the repository already holds them")
        return
    print(f"absorb: {len(commits)} commits of {where} (branch {branch}) written back: "
          + ", ".join([*sorted(writes), *(f"{f} (removed)" for f in sorted(deletes))]))



def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("edit")
    e.add_argument("--top", required=True)
    e.add_argument("--base-repo", required=True)
    e.add_argument("--edit-dir", required=True)
    e.add_argument("--force", action="store_true")
    b = sub.add_parser("absorb")
    b.add_argument("--top", required=True)
    b.add_argument("--edit-dir", required=True)
    a = ap.parse_args()
    try:
        cmd_edit(a) if a.cmd == "edit" else cmd_absorb(a)
    except Refuse as err:
        print(f"{'edit' if a.cmd == 'edit' else 'absorb'}: error: {err}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
