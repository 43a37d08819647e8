#!/usr/bin/env python3
"""Read patches/mail.plan into one directory per mail patch.

Usage: mail_plan.py PLAN OUTDIR
Writes OUTDIR/NN/{message,notes,files,quilt,from,series}: the commit
message (subject, blank line, body), the notes below its "---" line (what
changed in this patch since the previous version of the series: the mail
carries them below its own "---", where git am drops them; empty if
none), the repository files it adds and the quilt patches it applies, one
per line, the patch's author if it is not the sender ("from:", empty if
none) and the name of the mail series it belongs to. OUTDIR/series lists
the series, one line each: "NAME FIRST LAST rfc|-" (the numbers of its
first and last block in the plan). Prints the number of patches.

The plan may be cut into series, each sent on its own: a line
"series: NAME [rfc]" right before a block's "patch:" line starts series
NAME there ("rfc": its mails are [RFC PATCH]); it runs to the next such
line. A series applies on top of the series before it in the plan. If
the plan has such lines, its first block must have one; without any, the
whole plan is one series, "series".

A block's "from: Name <email>" makes someone else the author of the patch
(their code, carried by the series): its message must then hold their own
"Signed-off-by: Name <email>", as submitting-patches.rst wants of a patch
sent on by someone else.
"""

import re
import sys
from pathlib import Path

PERSON = re.compile(r"[^<>@\"\n]+ <[^<>@\s]+@[^<>@\s]+>")
SOB = "Signed-off-by: "
MARKER = re.compile(r"series:[ \t]+([a-z0-9][a-z0-9-]*)(?:[ \t]+(rfc))?[ \t]*")
DEFAULT_SERIES = "series"


def is_marker(lines, i):
    """Whether lines[i] is a "series:" line: one right before a "patch:" line."""
    return (lines[i].startswith("series:") and i + 1 < len(lines)
            and lines[i + 1].startswith("patch:"))


def strip_blank(lines):
    """Drops the blank lines at both ends of `lines`, in place."""
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()


def parse(text):
    """The blocks of a plan, each a dict; "series" is the name of its series,
    "marker" the "series:" line right before it (None for the others)."""
    blocks, cur, marker, names = [], None, None, set()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#") and (cur is None or not cur["body"]):
            continue
        if is_marker(lines, i):
            m = MARKER.fullmatch(line)
            if not m:
                sys.exit(f"mail.plan: a series line is 'series: NAME [rfc]' (NAME: a-z, 0-9, "
                         f"'-'), not {line!r}")
            if m.group(1) in names:
                sys.exit(f"mail.plan: two 'series: {m.group(1)}' lines")
            names.add(m.group(1))
            marker = line
            continue
        if line.startswith("series:") and cur is None:
            sys.exit(f"mail.plan: a 'series:' line must be right before a 'patch:' line: "
                     f"{line!r}")
        if line.startswith("patch:"):
            if marker is not None:
                series = MARKER.fullmatch(marker).group(1)
            elif blocks:
                series = blocks[-1]["series"]
            else:
                series = DEFAULT_SERIES
            cur = {"subject": line[6:].strip(), "files": [], "quilt": [], "body": [],
                   "notes": None, "from": None, "series": series, "marker": marker}
            marker = None
            blocks.append(cur)
        elif cur is None:
            if line.strip():
                sys.exit(f"mail.plan: text before the first 'patch:': {line!r}")
        elif line.startswith("files:") and not cur["body"]:
            cur["files"] += line[6:].split()
        elif line.startswith("quilt:") and not cur["body"]:
            cur["quilt"] += line[6:].split()
        elif line.startswith("from:") and not cur["body"]:
            who = line[5:].strip()
            if cur["from"] is not None:
                sys.exit(f"mail.plan: two 'from:' lines in: {cur['subject']}")
            if not PERSON.fullmatch(who):
                sys.exit(f"mail.plan: 'from:' must be 'Name <email>', not {who!r}, in: "
                         f"{cur['subject']}")
            cur["from"] = who
        elif (line.startswith(("files:", "quilt:", "from:")) and cur["body"]
              and not any(l.strip() for l in cur["body"])):
            sys.exit(f"mail.plan: {line.split(':')[0]}: after the blank line that starts the "
                     f"message of: {cur['subject']}")
        elif cur["notes"] is not None:
            cur["notes"].append(line)
        elif line == "---" and cur["body"]:
            cur["notes"] = []
        else:
            cur["body"].append(line)
    for b in blocks:
        notes = b["notes"] or []
        strip_blank(notes)
        if b["notes"] is not None and not notes:
            sys.exit(f"mail.plan: '---' with no notes after it in: {b['subject']}")
        b["notes"] = notes
        strip_blank(b["body"])
        if len(b["subject"]) > 75:
            sys.exit(f"mail.plan: subject longer than 75 characters: {b['subject']}")
        if not b["body"]:
            sys.exit(f"mail.plan: no commit message for: {b['subject']}")
        check_signoffs(b)
    if names and blocks[0]["marker"] is None:
        sys.exit("mail.plan: the first block has no 'series:' line before it")
    return blocks


def series_of(blocks):
    """[(name, first, last, rfc)]: the series of a plan, in order; first and
    last are 1-based block numbers."""
    out = []
    for i, b in enumerate(blocks, 1):
        if not out or out[-1][0] != b["series"]:
            m = MARKER.fullmatch(b["marker"]) if b["marker"] else None
            out.append([b["series"], i, i, bool(m and m.group(2))])
        out[-1][2] = i
    return [tuple(s) for s in out]


def check_signoffs(b):
    """The sign-offs a block may carry: the sender's is added when the patch
    is made, so a block has none of its own but a co-developer's (right
    after their Co-developed-by:), and someone else's patch ("from:") has
    its author's first."""
    body, who = b["body"], b["from"]
    sobs = [(i, l[len(SOB):].strip()) for i, l in enumerate(body) if l.startswith(SOB)]
    if who and (not sobs or sobs[0][1] != who):
        sys.exit(f"mail.plan: 'from: {who}' but the first sign-off of its message is not "
                 f"'Signed-off-by: {who}', in: {b['subject']}")
    for i, person in sobs[1 if who else 0:]:
        if i == 0 or body[i - 1] != f"Co-developed-by: {person}":
            sys.exit(f"mail.plan: 'Signed-off-by: {person}' in the message of a patch that is "
                     f"not theirs (no 'from: {person}', no 'Co-developed-by: {person}' right "
                     f"before it), in: {b['subject']}")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: mail_plan.py PLAN OUTDIR")
    blocks = parse(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    for i, b in enumerate(blocks, 1):
        d = out / f"{i:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "message").write_text(b["subject"] + "\n\n" + "\n".join(b["body"]) + "\n")
        (d / "notes").write_text("".join(n + "\n" for n in b["notes"]))
        (d / "files").write_text("".join(f + "\n" for f in b["files"]))
        (d / "quilt").write_text("".join(q + "\n" for q in b["quilt"]))
        (d / "from").write_text(b["from"] + "\n" if b["from"] else "")
        (d / "series").write_text(b["series"] + "\n")
    (out / "series").write_text("".join(f"{name} {first} {last} {'rfc' if rfc else '-'}\n"
                                        for name, first, last, rfc in series_of(blocks)))
    print(len(blocks))


if __name__ == "__main__":
    main()
