#!/usr/bin/env bash
# `make absorb`: the branch checked out in EDIT_DIR (build/edit, made by
# `make edit`) written back into the repository: added files to their
# paths, changes to upstream files into the quilt patches of patches/ that
# patches/mail.plan maps each commit to, messages into mail.plan; a new
# commit becomes a new plan block and quilt patch. Nothing is written unless
# the whole branch is absorbed (scripts/series_edit.py).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need git patch diff
exec /usr/bin/python3 "$TOP/scripts/series_edit.py" absorb --top "$TOP" --edit-dir "${EDIT_DIR:-$BUILD/edit}"
