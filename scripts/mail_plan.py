#!/usr/bin/env python3
"""Read patches/mail.plan into one directory per mail patch.

Usage: mail_plan.py PLAN OUTDIR
Writes OUTDIR/NN/{message,notes,files,quilt,from}: the commit message
(subject, blank line, body), the notes below its "---" line (what changed
in this patch since the previous version of the series: the mail carries
them below its own "---", where git am drops them; empty if none), the
repository files it adds and the quilt patches it applies, one per line,
and the patch's author if it is not the sender ("from:", empty if none).
Prints the number of patches.

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


def strip_blank(lines):
    """Drops the blank lines at both ends of `lines`, in place."""
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()


def parse(text):
    blocks, cur = [], None
    for line in text.splitlines():
        if line.startswith("#") and (cur is None or not cur["body"]):
            continue
        if line.startswith("patch:"):
            cur = {"subject": line[6:].strip(), "files": [], "quilt": [], "body": [],
                   "notes": None, "from": None}
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
    return blocks


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
    print(len(blocks))


if __name__ == "__main__":
    main()
