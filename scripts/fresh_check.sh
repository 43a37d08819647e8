#!/usr/bin/env bash
# `make fresh-check`: CI's run here, before pushing. CI runs `.ci/run`
# (`make check`) on a clean clone on a fresh machine; a build directory that
# already holds earlier results hides what only a first run takes (a CI run
# once failed at once in kselftests.sh, which looked into a directory that
# only an earlier run had made). This clones HEAD (committed work only, as
# CI sees it) into $BUILD/fresh/repo and runs its .ci/run there, with its
# own build/ inside the clone.
#
# The packages are this machine's (make deps finds them installed); the
# clone has its own ccache, so its kernel build is cold, as CI's (build/'s
# ccache would not help: the tree's path is part of what ccache hashes, and
# with it shared only 11% of the compiles hit).
# Ends as .ci/run does, with "N passed, N failed"; the clone is kept for
# reading (build/fresh/repo/build/results/), and removed by the next run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need git
dest=$BUILD/fresh
uncommitted=$(git -C "$TOP" status --porcelain --untracked-files=normal)
if [ -n "$uncommitted" ]; then
	step "fresh-check: uncommitted changes are not in it (CI sees only commits): $(wc -l <<<"$uncommitted") paths"
fi
rm -rf "$dest" && mkdir -p "$dest"
git clone -q --no-hardlinks "$TOP" "$dest/repo"
step "fresh-check: $(git -C "$dest/repo" log -1 --format='%h %s' | cut -c1-72) in $dest/repo"
env=(env -u BUILD -u KERNEL_SRC -u KERNEL_TARBALL -u CONFIG -u TESTS -u VARIANT -u MAKEFLAGS -u MAKELEVEL -u MFLAGS
	-u CCACHE_DIR)
start=$(date +%s)
rc=0
"${env[@]}" "$dest/repo/.ci/run" || rc=$?
step "fresh-check: .ci/run exited $rc after $((($(date +%s) - start) / 60)) min"
exit "$rc"
