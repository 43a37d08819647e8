#!/usr/bin/env bash
# `make edit`: the mail series as a git branch to work on with plain git.
#
# EDIT_DIR (build/edit) becomes a clone of the base repository
# (build/series-git, tag series-base) with one commit per block of
# patches/mail.plan on the branch `series`, checked out: change it with
# `git commit --fixup`, `git rebase -i series-base`, `git am`, then
# `make absorb` writes it back into the repository. An existing EDIT_DIR is
# moved to the repository's series only if its branch holds nothing that is
# not absorbed yet (FORCE=1 discards that).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

FORCE=${FORCE:-0}
case $FORCE in 0 | 1) ;; *) die "FORCE must be 0 or 1, not '$FORCE'" ;; esac
need git patch
base=$("$TOP/scripts/base.sh" | tail -n1)
series_git_import "$base"
args=(edit --top "$TOP" --base-repo "$BUILD/series-git" --edit-dir "${EDIT_DIR:-$BUILD/edit}")
[ "$FORCE" = 0 ] || args+=(--force)
exec /usr/bin/python3 "$TOP/scripts/series_edit.py" "${args[@]}"
