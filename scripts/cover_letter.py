#!/usr/bin/env python3
"""Fill in the cover letter git format-patch wrote.

Usage: cover_letter.py SERIES_DIR COVER_TEXT [BENCH_MD]
COVER_TEXT: subject on the first line, blank line, then the blurb. Where
the blurb says @BENCH@, the `make bench` table goes (or a line saying
that no bench results were found).
"""

import sys
from pathlib import Path


def main():
    series, cover = Path(sys.argv[1]), Path(sys.argv[2]).read_text()
    bench = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    subject, _, blurb = cover.partition("\n\n")
    if bench and bench.exists():
        table = bench.read_text().strip()
    else:
        table = "(no `make bench` results were found when this series was exported)"
    blurb = blurb.replace("@BENCH@", table).rstrip() + "\n"
    letters = sorted(series.glob("*0000-cover-letter.patch"))
    if len(letters) != 1:
        sys.exit(f"{series}: expected one cover letter, found {len(letters)}")
    text = letters[0].read_text()
    if "*** SUBJECT HERE ***" not in text or "*** BLURB HERE ***" not in text:
        sys.exit(f"{letters[0]}: not a fresh git format-patch cover letter")
    text = text.replace("*** SUBJECT HERE ***", subject.strip(), 1)
    text = text.replace("*** BLURB HERE ***", blurb, 1)
    letters[0].write_text(text)


if __name__ == "__main__":
    main()
