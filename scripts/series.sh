#!/usr/bin/env bash
# `make series`: the mail series of patches/mail.plan, each as a git
# format-patch series with its cover letter in SERIES_OUT/<name>
# (build/series/<name>).
#
# The plan's "series: NAME [rfc]" lines cut it into series sent on their
# own (mail_plan.py); SERIES=NAME exports one of them, all by default. A
# git repository of the base (build/series-git) gets one commit per plan
# block, all series in plan order: the block's files copied from this
# repository and its quilt patches applied, signed off by whoever runs
# this (git config user.name and user.email: the DCO sign-off must be the
# sender's own), authored by them too unless the block says "from:"
# (someone else's patch). refs/series/<name> is the last commit of a
# series. Each series is formatted with --base=series-base: the cover
# letter of a series after the first also carries a prerequisite-patch-id:
# line for each patch of the series before it, which it applies on (the
# patch-id of its mail, which b4 looks up in the list's archive).
#
# Each series has its own cover letter (patches/cover-letter.<name>) and
# changelog (patches/changelog.<name>), whose newest "vN:" section is its
# version (v1 without one; VERSION=N, with one series, asks for vN).
# To/Cc are per mail (mail_recipients.py); MAIL_CC= adds people to every
# mail of the series exported, MAIL_LISTS= the lists every mail goes to
# (default linux-mm@kvack.org: both series are mm's, also their mails to
# splice, fuse or the block layer).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=${SERIES_OUT:-$BUILD/series}
plan=$TOP/patches/mail.plan
need git patch perl
[ -z "${VERSION:-}" ] || series_version >/dev/null

# The plan, parsed, and the series asked for: all checked before anything
# in $out is touched.
blocks=$(mktemp -d)
trap 'rm -rf "$blocks"' EXIT
n=$("$TOP/scripts/mail_plan.py" "$plan" "$blocks") || exit 1
select_series "$blocks"
[ -z "${VERSION:-}" ] || [ ${#selected[@]} = 1 ] ||
	die "VERSION=$VERSION: say which series it is for (SERIES=${all[0]}, ...)"
declare -A version
for s in "${selected[@]}"; do
	for f in "cover-letter.$s" "changelog.$s"; do
		[ -f "$TOP/patches/$f" ] || die "series $s has no patches/$f"
	done
	"$TOP/scripts/cover_letter.py" --lint "$TOP/patches/cover-letter.$s" || exit 1
	version[$s]=${VERSION:-$("$TOP/scripts/cover_letter.py" --version "$TOP/patches/changelog.$s")}
	"$TOP/scripts/cover_letter.py" --check "$TOP/patches/changelog.$s" "${version[$s]}" || exit 1
done
lists=${MAIL_LISTS-linux-mm@kvack.org}
"$TOP/scripts/mail_recipients.py" --cc "${MAIL_CC:-}" --lists "$lists" --check || exit 1
name=$(git config user.name || true)
email=$(git config user.email || true)
if [ -z "$name" ] || [ -z "$email" ]; then
	die "set git config user.name and user.email: the patches are signed off by you"
fi
# Written anyway (the tests export with a placeholder), but not sendable:
# the list replies to From: and the sign-off must name a person.
case ${email##*@} in
*.example | *.invalid | *.test | *.localhost | localhost | *noreply*)
	step "series: warning: $name <$email> cannot receive replies; set git config user.name and user.email to yours before sending" ;;
esac

# Every added file and every quilt patch used once, the quilt patches in
# the order of patches/series.
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
commits=()
for d in "$blocks"/[0-9]*/; do
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
	commits+=("$(git -C "$repo" rev-parse HEAD)")
done
while read -r s first last _; do
	git -C "$repo" update-ref "refs/series/$s" "${commits[last - 1]}"
done <"$blocks/series"

# Each series asked for: its patches on top of the series before it, To/Cc
# per mail, its cover letter. A directory of the old single-series layout
# goes.
rm -f "$out"/*.patch
for s in "${selected[@]}"; do
	read -r _ first last rfc < <(awk -v s="$s" '$1 == s' "$blocks/series")
	start=series-base
	[ "$first" = 1 ] || start=${commits[first - 2]}
	dir=$out/$s
	rm -rf "$dir" && mkdir -p "$dir"
	opts=(--cover-letter --base=series-base --thread=shallow --notes)
	[ "${version[$s]}" = 1 ] || opts+=(-v"${version[$s]}")
	[ "$rfc" != rfc ] || opts+=(--rfc)
	git -C "$repo" -c user.name="$name" -c user.email="$email" format-patch -q \
		"${opts[@]}" -o "$dir" "$start..${commits[last - 1]}" >/dev/null
	if [ "$start" != series-base ]; then
		# The patch-ids of the series before, as the list's archive will see
		# their mails (git patch-id --stable of each mail; format-patch
		# --base computes them without the indent heuristic its diffs use,
		# so one of them came out another id).
		ids=$(git -C "$repo" format-patch --stdout "series-base..$start" |
			git -C "$repo" patch-id --stable | awk '{ print $1 }')
		letter=("$dir"/*0000-cover-letter.patch)
		awk -v ids="$ids" '/^prerequisite-patch-id: / { next } { print }
			/^base-commit: / { n = split(ids, id, "\n"); for (i = 1; i <= n; i++) print "prerequisite-patch-id: " id[i] }' \
			"${letter[0]}" >"${letter[0]}.tmp" && mv "${letter[0]}.tmp" "${letter[0]}"
	fi
	"$TOP/scripts/mail_recipients.py" --cc "${MAIL_CC:-}" --lists "$lists" "$repo" "$name <$email>" "$dir"/*.patch \
		>"$BUILD/series-recipients.$s.txt"
	"$TOP/scripts/cover_letter.py" "$dir" "$TOP/patches/cover-letter.$s" "$TOP/patches/changelog.$s" \
		"${version[$s]}" "$BUILD/series-cover.$s.txt"
	cover=$(tail -n1 "$BUILD/series-recipients.$s.txt")
	kind=PATCH
	[ "$rfc" != rfc ] || kind="RFC PATCH"
	step "series $s: $kind v${version[$s]}, $((last - first + 1)) patches and a cover letter (${cover%%  *}) in $dir"
done
step "series: ${#selected[@]} of ${#all[@]} series (${selected[*]}) from $n plan blocks"
