#!/usr/bin/env python3
"""Take the series' KCSAN markings out of an assembled tree (issue 17's
"before" count).

  kcsan_unmark.py TREE     rewrite TREE's mm/filemap.c, mm/page_alloc.c and
                           mm/shmem.c without the data_race()/READ_ONCE()/
                           WRITE_ONCE() the series added for KCSAN alone

Each marking is replaced by the plain access it marks, exactly once; a
marking that is not found (the series changed) is an error and nothing is
written. The markings that the lockless read needs for its validation
(READ_ONCE() of ->mapping, ->index and the flags word) and the series'
bitops stay: they are not KCSAN annotations but the reader's protocol.

Use: `make tree`, then `scripts/kcsan_unmark.py build/tree`, then
`make matrix MATRIX=kcsan MATRIX_TREE=0 FORCE=1`; `make tree FORCE=1`
puts the markings back.
"""

import sys
from pathlib import Path

# (file, marked text, plain text, the patch that adds the marking)
MARKINGS = [
    ("mm/filemap.c",
     "return data_race(_copy_to_iter(from, min(n, count), iter));",
     "return _copy_to_iter(from, min(n, count), iter);",
     "mm: filemap: read without folio references"),
    ("mm/internal.h",
     "if (READ_ONCE(file->f_ra.nolock) != nolock)\n\t\tWRITE_ONCE(file->f_ra.nolock, nolock);",
     "if (file->f_ra.nolock != nolock)\n\t\tfile->f_ra.nolock = nolock;",
     "mm: shmem: read without folio references"),
    ("include/linux/pagemap.h",
     "if (!READ_ONCE(iocb->ki_filp->f_ra.nolock) ||",
     "if (!iocb->ki_filp->f_ra.nolock ||",
     "mm: shmem: read without folio references"),
    ("mm/filemap.c",
     "if (READ_ONCE(filp->f_ra.prev_pos) != iocb->ki_pos)\n\t\tWRITE_ONCE(filp->f_ra.prev_pos, iocb->ki_pos);",
     "if (filp->f_ra.prev_pos != iocb->ki_pos)\n\t\tfilp->f_ra.prev_pos = iocb->ki_pos;",
     "mm: filemap: read without folio references"),
    ("mm/filemap.c",
     "loff_t last_pos = READ_ONCE(ra->prev_pos);",
     "loff_t last_pos = ra->prev_pos;",
     "mm: filemap: store prev_pos only when it changes"),
    ("mm/filemap.c",
     "if (READ_ONCE(ra->prev_pos) != last_pos)\n\t\tWRITE_ONCE(ra->prev_pos, last_pos);",
     "if (ra->prev_pos != last_pos)\n\t\tra->prev_pos = last_pos;",
     "mm: filemap: store prev_pos only when it changes"),
    ("mm/filemap.c",
     "sum += data_race(per_cpu(filemap_nolock_copied, cpu));",
     "sum += per_cpu(filemap_nolock_copied, cpu);",
     "mm: filemap: add a debugfs switch for lockless reads"),
    ("mm/page_alloc.c",
     "low = data_race(low_wmark_pages(zone));",
     "low = low_wmark_pages(zone);",
     "mm: free PG_rcu_free folios after a grace period"),
    ("mm/shmem.c",
     "loff_t last_pos = READ_ONCE(file->f_ra.prev_pos);",
     "loff_t last_pos = file->f_ra.prev_pos;",
     "mm: shmem: count accesses the way filemap_read() does"),
    ("mm/shmem.c",
     "if (retval && READ_ONCE(file->f_ra.prev_pos) != iocb->ki_pos)\n\t\tWRITE_ONCE(file->f_ra.prev_pos, iocb->ki_pos);",
     "if (retval && file->f_ra.prev_pos != iocb->ki_pos)\n\t\tfile->f_ra.prev_pos = iocb->ki_pos;",
     "mm: shmem: count accesses the way filemap_read() does"),
]


def unmark(tree):
    """The files of tree with every marking replaced: {path: text}."""
    texts = {}
    for rel, marked, plain, patch in MARKINGS:
        path = tree / rel
        if path not in texts:
            if not path.exists():
                raise SystemExit(f"kcsan_unmark: no {rel} in {tree} (not an assembled tree?)")
            texts[path] = path.read_text()
        n = texts[path].count(marked)
        if n != 1:
            first = marked.splitlines()[0].strip()
            raise SystemExit(f"kcsan_unmark: {rel}: '{first}' ({patch}) found {n} times, "
                             "not once; nothing written")
        texts[path] = texts[path].replace(marked, plain)
    return texts


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        raise SystemExit(__doc__.split("\n\n")[1])
    tree = Path(argv[1])
    if not tree.is_dir():
        raise SystemExit(f"kcsan_unmark: {tree} is not a directory")
    texts = unmark(tree)
    for path, text in texts.items():
        path.write_text(text)
    print(f"kcsan_unmark: {len(MARKINGS)} markings taken out of {tree} "
          f"({', '.join(sorted(str(p.relative_to(tree)) for p in texts))})")


if __name__ == "__main__":
    main(sys.argv)
