#!/usr/bin/env bash
# `make series-b4`: the mail series of `make series` as `b4 send` would
# send them, written to SERIES_B4_OUT/<name> (build/series-b4/<name>) by
# b4's own dry run (`b4 send -o`: nothing is sent, nothing is looked up on
# the network).
#
# SERIES=NAME does one series of patches/mail.plan, all by default. b4
# (PyPI, the version pinned below) is installed into build/b4-venv. In
# build/series-git each series of `make series` (refs/series/<name>) is
# enrolled with `b4 prep -e` as branch b4/<name> (cover letter kept in the
# branch description, its version and its RFC prefix, To/Cc from
# `b4 prep --auto-to-cc`, which runs get_maintainer.pl on the series);
# a series after the first gets the patch-ids of the series before it and
# the base as its b4 prerequisites (b4 prep --edit-deps). The mails b4
# writes are checked against build/series/<name>: the same patches in the
# same order, the same base-commit and prerequisite-patch-id lines.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

B4_VERSION=0.16.0
out=${SERIES_B4_OUT:-$BUILD/series-b4}
series_out=${SERIES_OUT:-$BUILD/series}
repo=$BUILD/series-git
venv=$BUILD/b4-venv
need git python3
[ -z "${VERSION:-}" ] || series_version >/dev/null

plan_dir=$(mktemp -d)
trap 'rm -rf "$plan_dir"' EXIT
"$TOP/scripts/mail_plan.py" "$TOP/patches/mail.plan" "$plan_dir" >/dev/null || exit 1
select_series "$plan_dir"
[ -z "${VERSION:-}" ] || [ ${#selected[@]} = 1 ] ||
	die "VERSION=$VERSION: say which series it is for (SERIES=${all[0]}, ...)"
for s in "${selected[@]}"; do
	{ git -C "$repo" rev-parse -q --verify "refs/series/$s" >/dev/null 2>&1 &&
		[ -f "$BUILD/series-cover.$s.txt" ] && ls "$series_out/$s"/*.patch >/dev/null 2>&1; } ||
		die "no series $s in $repo and $series_out/$s; run 'make series'"
done

if [ "$("$venv/bin/b4" --version 2>/dev/null)" != "$B4_VERSION" ]; then
	step "series-b4: installing b4 $B4_VERSION into $venv"
	python3 -m venv --help >/dev/null 2>&1 ||
		die "python3 has no venv module (Debian: apt-get install python3-venv)"
	rm -rf "$venv"
	python3 -m venv "$venv" >/dev/null
	"$venv/bin/pip" install -q "b4==$B4_VERSION" || die "pip could not install b4==$B4_VERSION"
fi
b4() { (cd "$repo" && "$venv/bin/b4" "$@"); }
git -C "$repo" config b4.prep-cover-strategy branch-description

# The trailer lines of a cover letter ($1) that say what it applies to.
base_lines() { grep -E '^(base-commit|prerequisite-patch-id): ' "$1" || true; }
# The subjects of mails, without their [PATCH ...] prefix.
subjects() { sed -n '/^Subject:/{:a;N;/\n[^ ]/!ba;s/\n[^ ].*//;s/\n */ /g;p}' "$@" | sed 's/^Subject: \[[^]]*\] //'; }
# The addresses of header $1 of mail $2.
addresses() { sed -n "/^$1:/,/^[A-Z][a-zA-Z-]*: /p" "$2" | grep -o '<[^>]*>\|[^ ,<]*@[^ ,>]*' | sort -u | wc -l; }

start=series-base
for s in "${all[@]}"; do
	prev_start=$start
	start=refs/series/$s
	case " ${selected[*]} " in *" $s "*) ;; *) continue ;; esac
	read -r _ _ _ rfc < <(awk -v s="$s" '$1 == s' "$plan_dir/series")
	version=${VERSION:-$("$TOP/scripts/cover_letter.py" --version "$TOP/patches/changelog.$s")}
	mapfile -t mails < <(find "$series_out/$s" -maxdepth 1 -name '*.patch' | sort)

	# A fresh b4 branch of the series, every run (b4 keeps its state in the
	# branch and its config).
	git -C "$repo" checkout -q -f -B "b4/$s" "refs/series/$s"
	git -C "$repo" branch -q -f "b4/base-$s" "$prev_start"
	git -C "$repo" config --remove-section "branch.b4/$s" 2>/dev/null || true
	b4 prep -e "b4/base-$s" >/dev/null 2>&1 || die "b4 prep -e failed (run it in $repo to see why)"
	[ "$version" = 1 ] || b4 prep --force-revision "$version" >/dev/null 2>&1 ||
		die "b4 prep --force-revision $version failed"
	[ "$rfc" != rfc ] || b4 prep --set-prefixes RFC >/dev/null 2>&1 || die "b4 prep --set-prefixes RFC failed"
	git -C "$repo" config "branch.b4/$s.description" "$(cat "$BUILD/series-cover.$s.txt")"
	if [ "$prev_start" != series-base ]; then
		# The series before this one, as b4 prerequisites: their patch-ids,
		# then the base they and this series apply to.
		deps=$plan_dir/deps-$s
		git -C "$repo" format-patch --stdout "series-base..$prev_start" |
			git -C "$repo" patch-id --stable | awk '{ print "patch-id: " $1 }' >"$deps"
		echo "base-commit: $(git -C "$repo" rev-parse series-base)" >>"$deps"
		GIT_EDITOR="cp $deps" b4 prep --edit-deps >/dev/null 2>&1 || die "b4 prep --edit-deps failed"
	fi
	b4 prep --auto-to-cc >/dev/null 2>&1 || die "b4 prep --auto-to-cc failed"

	# b4 send refuses its default (web) endpoint without signing; an SMTP
	# server that is never used keeps the dry run offline and unsigned.
	rm -rf "${out:?}/$s" && mkdir -p "$out"
	GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=sendemail.smtpserver GIT_CONFIG_VALUE_0=/bin/false \
		b4 send --no-sign -o "$out/$s" >"$LOGS/series-b4-$s.log" 2>&1 ||
		die "b4 send -o failed; see $LOGS/series-b4-$s.log"

	# The same patches, in the same order, on the same base.
	mapfile -t emls < <(find "$out/$s" -maxdepth 1 -name '*.eml' | sort)
	[ ${#emls[@]} = ${#mails[@]} ] || die "$s: b4 wrote ${#emls[@]} mails, make series ${#mails[@]}"
	diff <(subjects "${mails[@]}") <(subjects "${emls[@]}") >&2 ||
		die "$s: b4's subjects differ from those of make series (above: < make series, > b4)"
	want=$(base_lines "${mails[0]}")
	{ [ -n "$want" ] && [ "$want" = "$(base_lines "${emls[0]}")" ]; } ||
		die "$s: b4's cover letter does not carry the base-commit and prerequisite-patch-id lines of make series"
	# b4 puts RFC after PATCH ([PATCH RFC]); git format-patch --rfc, before.
	prefix=PATCH
	[ "$rfc" != rfc ] || prefix+=" RFC"
	[ "$version" = 1 ] || prefix+=" v$version"
	grep -q "^Subject: \[$prefix 0*/" "${emls[0]}" || die "$s: b4's cover letter is not [$prefix 0/..]"
	step "series-b4 $s: ${#emls[@]} mails as b4 $B4_VERSION would send them (To: $(addresses To "${emls[0]}"), Cc: $(addresses Cc "${emls[0]}")) in $out/$s"
	echo "Send them with: cd $repo && git checkout b4/$s && $venv/bin/b4 send (or git send-email $series_out/$s/*.patch)"
done
