#!/usr/bin/env python3
"""Read patches/mail.plan into one directory per mail patch.

Usage: mail_plan.py PLAN OUTDIR
Writes OUTDIR/NN/{message,notes,files,quilt}: the commit message (subject,
blank line, body), the notes below its "---" line (what changed in this
patch since the previous version of the series: the mail carries them
below its own "---", where git am drops them; empty if none), the
repository files it adds and the quilt patches it applies, one per line.
Prints the number of patches.
"""

import sys
from pathlib import Path


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
                   "notes": None}
            blocks.append(cur)
        elif cur is None:
            if line.strip():
                sys.exit(f"mail.plan: text before the first 'patch:': {line!r}")
        elif line.startswith("files:") and not cur["body"]:
            cur["files"] += line[6:].split()
        elif line.startswith("quilt:") and not cur["body"]:
            cur["quilt"] += line[6:].split()
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
    return blocks


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
    print(len(blocks))


if __name__ == "__main__":
    main()
