#!/usr/bin/env python3
"""Fill in the cover letter git format-patch wrote.

Usage: cover_letter.py SERIES_DIR COVER_TEXT CHANGELOG VERSION TEXT_OUT [BENCH_MD [READS_MD [INSN_MD [C2C_MD [MODEL_MD]]]]]
       cover_letter.py --check CHANGELOG VERSION

COVER_TEXT: subject on the first line, blank line, then the blurb. Its
marks take the reports of `make bench` (build/bench/): @BENCH@ the deferred
split's exact counts and the Rust/C unqueue (deferred-split.md, without its
wall, sys and traced lock times, which move across boots under TCG),
@READS@ the writes to the hot folio per read (reads.md, without its
throughput tables), @INSN@ instructions per operation (count-insn.md, with
the function rows of series against base), @C2C@ cache-line transfers per
read (count-c2c.md, with the top lines of 16-byte reads of the series
with the switch on at the most vCPUs), @MODEL@ the projection onto the
seed's machine (model.md, at 1 and 64 threads, the constants left to
the results page). A report not
found becomes a line saying so. Prose is wrapped at 72 columns, as mail
is; table rows stay as they are.

CHANGELOG: "#" comment lines, then a section per version N > 1, newest
first: a line "vN:" and what changed since vN-1. For VERSION > 1 the
"vVERSION:" section must exist; the sections v2..vVERSION go after the
blurb as "Changes in vN:" blocks, as b4 writes them.

--check only checks CHANGELOG for VERSION (before any work is done).

TEXT_OUT: the filled subject and blurb are written there too (for
`make series-b4`, which gives them to b4 as the cover letter).
"""

import re
import sys
import textwrap
from pathlib import Path


def changelog(text, version):
    """The "Changes in vN:" blocks of versions VERSION down to 2."""
    sections, cur = {}, None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            continue
        m = re.fullmatch(r"v([0-9]+):\s*", line)
        if m:
            cur = int(m.group(1))
            if cur < 2 or cur in sections:
                sys.exit(f"changelog:{n}: 'v{cur}:' is not a new version above v1")
            sections[cur] = []
        elif cur is None:
            if line.strip():
                sys.exit(f"changelog:{n}: text before the first 'vN:' line: {line!r}")
        else:
            sections[cur].append(line)
    if version > 1 and not any(l.strip() for l in sections.get(version, [])):
        sys.exit(
            f"VERSION={version}: patches/changelog has no 'v{version}:' section; "
            f"say what changed since v{version - 1} there first"
        )
    blocks = []
    for v in sorted((v for v in sections if v <= version), reverse=True):
        body = "\n".join(sections[v]).strip("\n")
        blocks.append(f"Changes in v{v}:\n{body}\n")
    return "\n".join(blocks)


def wrap_prose(md):
    """Markdown with its paragraphs wrapped at 72 columns, tables as they are."""
    out = []
    for line in md.splitlines():
        if line.lstrip().startswith("|") or not line.strip():
            out.append(line)
        else:
            out.extend(textwrap.wrap(line, 72, break_long_words=False, break_on_hyphens=False))
    return "\n".join(out)


# Rows of deferred-split.md measured in time: across boots under TCG they
# move by 10% or more, so the mail gives the counts (and COUNT=insn's
# instructions per folio) instead.
TIME_ROW = re.compile(r"^\| [a-z]+ \| (wall s|sys s|lruvec lock (wait|hold), ms)")


def blocks(md):
    """Markdown split at blank lines."""
    return [b for b in md.strip().split("\n\n") if b.strip()]


def without_times(md):
    return "\n".join(l for l in md.splitlines() if not TIME_ROW.match(l))


def mechanism_only(md):
    """reads.md without its throughput tables (a table and the line before
    it that says M reads/s or MiB/s)."""
    out, skip = [], False
    for b in blocks(md):
        if not b.startswith("|"):
            skip = "reads/s" in b or "MiB/s" in b
            if skip and b.startswith("Read benchmarks"):
                continue
        if not skip:
            out.append(b)
    return "\n\n".join(out)


def insn_cover(md):
    """count-insn.md: its table, and of the functions' rows those of the
    series against the base (not on against off, nor the rounds' spread)."""
    out, mode = [], "keep"
    for b in blocks(md):
        if b.startswith("Where the rounds differ"):
            mode = "drop"
        elif b.startswith("Where they differ"):
            mode = "diff"
        elif not b.startswith("|"):
            mode = "keep"
        if mode == "drop":
            continue
        if mode == "diff" and b.startswith("|"):
            rows = b.splitlines()
            b = "\n".join(rows[:2] + [r for r in rows[2:] if "− base |" in r])
        out.append(b)
    return "\n\n".join(out)


def c2c_cover(md):
    """count-c2c.md: the transfer tables, and of the top lines those of
    16-byte reads of the series with the switch on at the most vCPUs,
    their first three (what still moves per read)."""
    bl = blocks(md)
    most = None
    for b in bl:
        m = re.match(r"Top lines, (\d+) vCPUs", b)
        if m:
            most = max(most or 0, int(m.group(1)))
    out, section, lst = [], None, None
    for b in bl:
        m = re.match(r"(?:\*\*)?(?:Top lines, )?(\d+) vCPUs", b)
        if m:
            section = int(m.group(1))
        if b.startswith("Top lines"):
            if section != most:
                lst = False
                continue
            out.append(b)
            lst = None
            continue
        if b.startswith("- "):
            head = b.splitlines()[0]
            lst = section == most and head.startswith("- small ") and "series-on" in head
        elif b.startswith("  |"):
            if lst:
                out.append("\n".join(b.splitlines()[:5]))
            continue
        else:
            lst = None
        if lst is False:
            continue
        out.append(b)
    return "\n\n".join(out)


def model_cover(md):
    """model.md without its table of constants (the results page has it,
    with their sources), its projections at 1 and 64 threads only: the
    thread counts the seed measured."""
    out = []
    for b in blocks(md):
        if b.startswith("| constant"):
            out.append("(The constants, each with its source: scripts/bench/results.md.)")
            continue
        if b.startswith("| threads"):
            rows = b.splitlines()
            b = "\n".join(rows[:2] + [r for r in rows[2:] if re.match(r"\| (1|64) \|", r)])
        out.append(b)
    return "\n\n".join(out)


MARKS = (
    ("@BENCH@", 6, without_times),
    ("@READS@", 7, mechanism_only),
    ("@INSN@", 8, insn_cover),
    ("@C2C@", 9, c2c_cover),
    ("@MODEL@", 10, model_cover),
)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        changelog(Path(sys.argv[2]).read_text(), int(sys.argv[3]))
        return
    if not 6 <= len(sys.argv) <= 11:
        sys.exit("usage: " + __doc__.split("Usage: ")[1].split("\n\n")[0])
    series, cover = Path(sys.argv[1]), Path(sys.argv[2]).read_text()
    changes = changelog(Path(sys.argv[3]).read_text(), int(sys.argv[4]))
    text_out = Path(sys.argv[5])
    subject, _, blurb = cover.partition("\n\n")
    for mark, i, part in MARKS:
        md = Path(sys.argv[i]) if len(sys.argv) > i else None
        if md and md.exists():
            table = wrap_prose(part(md.read_text()).strip())
        else:
            what = f": no {md.name}" if md else ""
            table = f"(no `make bench` results were found when this series was exported{what})"
        blurb = blurb.replace(mark, table)
    blurb = blurb.rstrip() + "\n"
    if changes:
        blurb += "\n" + changes
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
