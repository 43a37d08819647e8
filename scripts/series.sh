#!/usr/bin/env bash
# `make series`: the mail series, from patches/mail.plan, as a git
# format-patch series with a cover letter in SERIES_OUT (build/series).
#
# A git repository of the base (build/series-git) gets one commit per plan
# block: the block's files copied from this repository and its quilt
# patches applied, signed off by whoever runs this (git config user.name
# and user.email: the DCO sign-off must be the sender's own), authored by
# them too unless the block says "from:" (someone else's patch).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

VERSION=$(series_version)
"$TOP/scripts/cover_letter.py" --check "$TOP/patches/changelog" "$VERSION" || exit 1
out=${SERIES_OUT:-$BUILD/series}
plan=$TOP/patches/mail.plan
need git patch perl
name=$(git config user.name || true)
email=$(git config user.email || true)
if [ -z "$name" ] || [ -z "$email" ]; then
	die "set git config user.name and user.email: the patches are signed off by you"
fi

# The plan, checked: every added file and every quilt patch used once, the
# quilt patches in the order of patches/series.
planned_files=$(sed -n 's/^files:[[:space:]]*//p' "$plan" | tr ' ' '\n' | sed '/^$/d' | sort)
repo_files=$(git -C "$TOP" ls-files -- rust mm Documentation tools | sort)
[ "$planned_files" = "$repo_files" ] ||
	die "patches/mail.plan and the repository disagree on files: $(diff <(echo "$planned_files") <(echo "$repo_files") | grep '^[<>]' | xargs)"
planned_quilt=$(sed -n 's/^quilt:[[:space:]]*//p' "$plan" | tr ' ' '\n' | sed '/^$/d')
quilt=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TOP/patches/series")
[ "$planned_quilt" = "$quilt" ] ||
	die "patches/mail.plan must use every patch of patches/series once, in its order"

base=$("$TOP/scripts/base.sh" | tail -n1)
repo=$BUILD/series-git
series_git_import "$base"
git -C "$repo" checkout -q -f -B series series-base
git -C "$repo" clean -q -fdx
git -C "$repo" update-ref -d refs/notes/commits 2>/dev/null || true # notes of an earlier run

# One commit per block of the plan.
blocks=$BUILD/series-plan
rm -rf "$blocks"
n=$("$TOP/scripts/mail_plan.py" "$plan" "$blocks")
for d in "$blocks"/*/; do
	while read -r f; do
		mkdir -p "$repo/$(dirname "$f")"
		cp "$TOP/$f" "$repo/$f"
	done <"$d/files"
	while read -r p; do
		(cd "$repo" && patch -p1 -F0 -N -s --no-backup-if-mismatch <"$TOP/patches/$p") ||
			die "patches/$p does not apply in the order of the plan"
	done <"$d/quilt"
	git -C "$repo" add -A -f
	# A patch of someone else's ("from:" in the plan) keeps them as its author.
	author=()
	[ ! -s "$d/from" ] || author=(--author="$(cat "$d/from")")
	git -C "$repo" -c user.name="$name" -c user.email="$email" commit -q -s "${author[@]}" -F "$d/message"
	if [ -s "$d/notes" ]; then
		git -C "$repo" -c user.name="$name" -c user.email="$email" notes add -f -F "$d/notes"
	fi
done

# To/Cc from get_maintainer.pl, then the series with its cover letter.
rm -rf "$out" && mkdir -p "$out"
range=series-base..series
maint=$(git -C "$repo" diff "$range" | (cd "$repo" && perl scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats --separator , 2>/dev/null) || true)
to_args=() cc_args=()
# The authors of the patches the series carries for others ("from:").
while read -r who; do
	[ -z "$who" ] || cc_args+=(--cc="$who")
done < <(cat "$blocks"/*/from | sort -u)
IFS=, read -r -a people <<<"$maint"
for p in "${people[@]}"; do
	case $p in *linux-mm@* | *akpm@*) to_args+=(--to="$p") ;; ?*) cc_args+=(--cc="$p") ;; esac
done
git -C "$repo" -c user.name="$name" -c user.email="$email" format-patch -q \
	--cover-letter -v"$VERSION" --base=series-base --thread=shallow --notes \
	"${to_args[@]}" "${cc_args[@]}" -o "$out" "$range" >/dev/null
"$TOP/scripts/cover_letter.py" "$out" "$TOP/patches/cover-letter" "$TOP/patches/changelog" \
	"$VERSION" "$BUILD/series-cover.txt" "$BUILD/bench/deferred-split.md" "$BUILD/bench/reads.md" \
	"$BUILD/bench/count-insn.md" "$BUILD/bench/count-c2c.md" "$BUILD/bench/model.md"
step "series: $n patches and a cover letter in $out"
