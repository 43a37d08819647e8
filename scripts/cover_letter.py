#!/usr/bin/env python3
"""Fill in the cover letter git format-patch wrote.

Usage: cover_letter.py SERIES_DIR COVER_TEXT CHANGELOG VERSION TEXT_OUT
       cover_letter.py --check CHANGELOG VERSION
       cover_letter.py --version CHANGELOG
       cover_letter.py --lint COVER_TEXT

COVER_TEXT (patches/cover-letter.<series>): subject on the first line,
blank line, then the letter, as sent. It is for people on a mailing
list, so it is checked (--lint checks only that): plain text (no
markdown headings, backticks, tables with pipes or emphasis), lines of
at most 75 columns (a line that is only a URL may be longer), at most
150 lines with the changelog, no fill-in marks and no names the list
cannot open (files of this repository, "seed"). A letter that breaks a
rule stops `make series`, each problem named with its line.

CHANGELOG: "#" comment lines, then a section per version N > 1, newest
first: a line "vN:" and what changed since vN-1. For VERSION > 1 the
"vVERSION:" section must exist; the sections v2..vVERSION go after the
letter as "Changes in vN:" blocks, as b4 writes them.

--check only checks CHANGELOG for VERSION (before any work is done);
--version prints the series' version: its newest "vN:" section, else 1.

TEXT_OUT: the subject and letter are written there too (for
`make series-b4`, which gives them to b4 as the cover letter).
"""

import re
import sys
from pathlib import Path


def sections_of(text, path):
    """{N: lines} of the "vN:" sections of a changelog."""
    sections, cur = {}, None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            continue
        m = re.fullmatch(r"v([0-9]+):\s*", line)
        if m:
            cur = int(m.group(1))
            if cur < 2 or cur in sections:
                sys.exit(f"{path}:{n}: 'v{cur}:' is not a new version above v1")
            sections[cur] = []
        elif cur is None:
            if line.strip():
                sys.exit(f"{path}:{n}: text before the first 'vN:' line: {line!r}")
        else:
            sections[cur].append(line)
    return sections


def changelog(text, version, path="the changelog"):
    """The "Changes in vN:" blocks of versions VERSION down to 2."""
    sections = sections_of(text, path)
    if version > 1 and not any(l.strip() for l in sections.get(version, [])):
        sys.exit(
            f"VERSION={version}: {path} has no 'v{version}:' section; "
            f"say what changed since v{version - 1} there first"
        )
    blocks = []
    for v in sorted((v for v in sections if v <= version), reverse=True):
        body = "\n".join(sections[v]).strip("\n")
        blocks.append(f"Changes in v{v}:\n{body}\n")
    return "\n".join(blocks)


# What a cover letter is read by: people on a mailing list, in plain text.
MAX_LINES = 150
MAX_COLUMNS = 75
URL_LINE = re.compile(r"\s*(\[\d+\]\s+)?\S*https?://\S+")
PLAIN_TEXT = (
    (re.compile(r"^#"), "a markdown heading"),
    (re.compile(r"`"), "a backtick (markdown code)"),
    (re.compile(r"^\s*\|.*\|\s*$|\S \| \S.* \| \S"), "a table with pipes"),
    (re.compile(r"\*\*|\]\(http"), "markdown emphasis or a markdown link"),
    (re.compile(r"@[A-Z][A-Z0-9_]*@"), "a fill-in mark"),
    (re.compile(r"\bseeds?\b", re.I), "a name only this repository knows (seed)"),
    (re.compile(r"(^|[\s(])(scripts|build|patches)/"),
     "a file of this repository, which the list cannot open"),
    (re.compile(r"mail\.plan|\.md\b|\bCOUNT=|\bWORKLOADS="),
     "a name only this repository knows"),
)


def lint(text, name, first_line=1):
    """The plain-text rules, as "name:line: problem" strings."""
    problems = []
    lines = text.splitlines()
    for n, line in enumerate(lines, first_line):
        if len(line) > MAX_COLUMNS and not URL_LINE.fullmatch(line):
            problems.append(f"{name}:{n}: longer than {MAX_COLUMNS} columns ({len(line)})")
        for pattern, what in PLAIN_TEXT:
            if pattern.search(line):
                problems.append(f"{name}:{n}: {what}: {line.strip()[:60]!r}")
    return problems


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        changelog(Path(sys.argv[2]).read_text(), int(sys.argv[3]), sys.argv[2])
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--version":
        print(max(sections_of(Path(sys.argv[2]).read_text(), sys.argv[2]), default=1))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--lint":
        cover = Path(sys.argv[2])
        problems = lint(cover.read_text(), cover.name)
        if problems:
            sys.exit("\n".join(problems))
        return
    if len(sys.argv) != 6:
        sys.exit("usage: " + __doc__.split("Usage: ")[1].split("\n\n")[0])
    series, cover_file = Path(sys.argv[1]), Path(sys.argv[2])
    cover = cover_file.read_text()
    changes = changelog(Path(sys.argv[3]).read_text(), int(sys.argv[4]), sys.argv[3])
    text_out = Path(sys.argv[5])
    subject, _, blurb = cover.partition("\n\n")
    blurb = blurb.strip("\n") + "\n"
    if changes:
        blurb += "\n" + changes
    problems = lint(subject + "\n\n" + blurb, cover_file.name)
    if len(blurb.splitlines()) + 2 > MAX_LINES:
        problems.append(f"{cover_file.name}: {len(blurb.splitlines()) + 2} lines with the "
                        f"changelog; a cover letter is read whole: at most {MAX_LINES}")
    if problems:
        sys.exit("cover letter: " + "\n".join(problems))
    letters = sorted(series.glob("*0000-cover-letter.patch"))
    if len(letters) != 1:
        sys.exit(f"{series}: expected one cover letter, found {len(letters)}")
    text = letters[0].read_text()
    if "*** SUBJECT HERE ***" not in text or "*** BLURB HERE ***" not in text:
        sys.exit(f"{letters[0]}: not a fresh git format-patch cover letter")
    text = text.replace("*** SUBJECT HERE ***", subject.strip(), 1)
    text = text.replace("*** BLURB HERE ***", blurb, 1)
    letters[0].write_text(text)
    text_out.write_text(subject.strip() + "\n\n" + blurb)


if __name__ == "__main__":
    main()
