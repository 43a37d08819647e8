#!/usr/bin/env bash
# Assemble the kernel tree build/tree (VARIANT=base: build/tree-base, the
# base alone, for `make bench`): the base (scripts/base.sh), the files
# this series adds (rust/ mm/ Documentation/ tools/ of this repository, at
# their kernel paths) and the quilt series patches/ applied on top
# (patches/series, then patches/local.series; with FIXES=1 also the fixes
# of patches/fixes/, outside both series, which the tree otherwise leaves
# out: `make matrix MATRIX=hmm FIXES=1` shows the migrate_vma fix at work).
#
# Re-assembling is incremental: only files whose content changes are
# written, so the kernel build stays incremental. A file of build/tree that
# was edited by hand since the last assembly is never overwritten: the run
# stops and names it (move the edit into the repository, or FORCE=1).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

FORCE=${FORCE:-0}
case $FORCE in 0 | 1) ;; *) die "FORCE must be 0 or 1, not '$FORCE'" ;; esac
FIXES=${FIXES:-0}
case $FIXES in 0 | 1) ;; *) die "FIXES must be 0 or 1, not '$FIXES'" ;; esac
need patch sha256sum

base=$("$TOP/scripts/base.sh" | tail -n1)
manifest=$TREE/.series-manifest # "sha256  path" of every file we wrote
scratch=$BUILD/.tree-scratch

# The files the series adds, relative to the top of the tree.
overlay_files() {
	[ "$VARIANT" = series ] || return 0
	git -C "$TOP" ls-files -co --exclude-standard -- rust mm Documentation tools | sort -u |
		while read -r f; do [ -f "$TOP/$f" ] && echo "$f"; done
}

# The files the quilt series touches.
patched_files() {
	[ "$VARIANT" = series ] || return 0
	[ -f "$TOP/patches/series" ] || return 0
	series_patches | while read -r p; do
		grep -E '^\+\+\+ ' "$TOP/patches/$p" | awk '{print $2}' | sed 's|^b/||'
	done | grep -vx /dev/null | sort -u
}

# patches/series (the mail series), then patches/local.series (hooks of
# the bench harness, never mailed), then with FIXES=1 patches/fixes/*.patch.
series_patches() {
	[ "$VARIANT" = series ] || return 0
	local s
	for s in series local.series; do
		[ -f "$TOP/patches/$s" ] || continue
		sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TOP/patches/$s" | awk '{print $1}'
	done
	[ "$FIXES" = 1 ] || return 0
	(cd "$TOP/patches" && ls fixes/*.patch 2>/dev/null) || true
}

if [ ! -f "$TREE/.assembled" ]; then
	step "copying the base into $TREE"
	rm -rf "$TREE.tmp"
	cp -a "$base" "$TREE.tmp"
	rm -f "$TREE.tmp/.unpacked"
	: >"$TREE.tmp/.series-manifest"
	echo "$base" >"$TREE.tmp/.assembled"
	rm -rf "$TREE" && mv "$TREE.tmp" "$TREE"
fi
[ "$(cat "$TREE/.assembled")" = "$base" ] ||
	die "$TREE was assembled from $(cat "$TREE/.assembled"), not $base; 'make clean-tree' first"

# Hand edits: a file we wrote whose content is no longer what we wrote.
if [ "$FORCE" = 0 ] && [ -s "$manifest" ]; then
	edited=$(cd "$TREE" && { sha256sum --quiet -c "$manifest" 2>/dev/null || true; } | sed 's/: FAILED.*//')
	[ -z "$edited" ] ||
		die "edited in $TREE since the last assembly (move the change into the repository, or FORCE=1 to discard): $(echo "$edited" | xargs)"
fi

# Build the wanted content of every file we touch, now or last time, in a
# scratch copy holding only those files.
mapfile -t overlay < <(overlay_files)
# A failed `git ls-files` (no .git, or git's "dubious ownership" of a clone
# another user owns) goes unnoticed in the process substitution: it lists
# nothing, and the tree would be built without the series' own files.
[ "$VARIANT" != series ] || [ ${#overlay[@]} -gt 0 ] ||
	die "git lists no added files under rust/ mm/ Documentation/ tools/ in $TOP (git -C $TOP status says why)"
mapfile -t patched < <(patched_files)
mapfile -t previous < <(awk '{print $2}' "$manifest")
rm -rf "$scratch" && mkdir -p "$scratch"
for f in "${patched[@]}" "${previous[@]}"; do
	[ -f "$base/$f" ] || continue
	mkdir -p "$scratch/$(dirname "$f")"
	cp -p "$base/$f" "$scratch/$f"
done
for f in "${overlay[@]}"; do
	[ ! -e "$base/$f" ] || die "$f exists upstream: change it with a patch in patches/, not a copy"
	mkdir -p "$scratch/$(dirname "$f")"
	cp -p "$TOP/$f" "$scratch/$f"
done
n=0
while read -r p; do
	[ -f "$TOP/patches/$p" ] || die "patches/series or patches/local.series lists $p, which does not exist"
	out=$(cd "$scratch" && patch -p1 -F0 -N --no-backup-if-mismatch -r - <"$TOP/patches/$p" 2>&1) ||
		die "patches/$p does not apply to $base: $(echo "$out" | grep -iE 'fail|error|reject' | head -3 | xargs)"
	n=$((n + 1))
done < <(series_patches)

# Write what changed, drop what is gone, record what we wrote.
changed=0
: >"$manifest.new"
for f in $(printf '%s\n' "${overlay[@]}" "${patched[@]}" "${previous[@]}" | sort -u); do
	if [ -f "$scratch/$f" ]; then
		if ! cmp -s "$scratch/$f" "$TREE/$f"; then
			mkdir -p "$TREE/$(dirname "$f")"
			cp "$scratch/$f" "$TREE/$f.series-tmp" && mv "$TREE/$f.series-tmp" "$TREE/$f"
			changed=$((changed + 1))
		fi
		(cd "$TREE" && sha256sum "$f") >>"$manifest.new"
	elif [ -e "$TREE/$f" ]; then
		rm -f "$TREE/$f"
		changed=$((changed + 1))
	fi
done
mv "$manifest.new" "$manifest"
rm -rf "$scratch"
step "tree: ${#overlay[@]} added files, $n patches$([ "$FIXES" = 0 ] || echo " (with patches/fixes/)"), $changed files written"
