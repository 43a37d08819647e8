#!/usr/bin/env bash
# `make series-b4`: the mail series of `make series` as `b4 send` would
# send it, written to SERIES_B4_OUT (build/series-b4) by b4's own dry run
# (`b4 send -o`: nothing is sent, nothing is looked up on the network).
#
# b4 (PyPI, the version pinned below) is installed into build/b4-venv. In
# build/series-git the branch of `make series` is enrolled with
# `b4 prep -e` as b4/series (cover letter kept in the branch description,
# revision VERSION, To/Cc from `b4 prep --auto-to-cc`, which runs
# get_maintainer.pl), and the mails b4 writes are checked against
# build/series: the same patches in the same order, the same base-commit.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

B4_VERSION=0.16.0
VERSION=$(series_version)
out=${SERIES_B4_OUT:-$BUILD/series-b4}
series=${SERIES_OUT:-$BUILD/series}
repo=$BUILD/series-git
cover=$BUILD/series-cover.txt
venv=$BUILD/b4-venv
need git python3

{ git -C "$repo" rev-parse -q --verify series >/dev/null 2>&1 && [ -f "$cover" ]; } ||
	die "no series in $repo; run 'make series' first"
mapfile -t mails < <(find "$series" -maxdepth 1 -name "v$VERSION-*.patch" | sort)
[ ${#mails[@]} -gt 1 ] || die "no v$VERSION mails in $series; run 'make series VERSION=$VERSION'"

if [ "$("$venv/bin/b4" --version 2>/dev/null)" != "$B4_VERSION" ]; then
	step "series-b4: installing b4 $B4_VERSION into $venv"
	python3 -m venv --help >/dev/null 2>&1 ||
		die "python3 has no venv module (Debian: apt-get install python3-venv)"
	rm -rf "$venv"
	python3 -m venv "$venv" >/dev/null
	"$venv/bin/pip" install -q "b4==$B4_VERSION" || die "pip could not install b4==$B4_VERSION"
fi
b4() { (cd "$repo" && "$venv/bin/b4" "$@"); }

# A fresh b4 branch of the series, every run (b4 keeps its state in the
# branch and its config).
git -C "$repo" checkout -q -f -B b4/series series
git -C "$repo" branch -q -f b4/base series-base
git -C "$repo" config --remove-section branch.b4/series 2>/dev/null || true
git -C "$repo" config b4.prep-cover-strategy branch-description
b4 prep -e b4/base >/dev/null 2>&1 || die "b4 prep -e failed (run it in $repo to see why)"
[ "$VERSION" = 1 ] || b4 prep --force-revision "$VERSION" >/dev/null 2>&1 ||
	die "b4 prep --force-revision $VERSION failed"
git -C "$repo" config branch.b4/series.description "$(cat "$cover")"
b4 prep --auto-to-cc >/dev/null 2>&1 || die "b4 prep --auto-to-cc failed"

# b4 send refuses its default (web) endpoint without signing; an SMTP
# server that is never used keeps the dry run offline and unsigned.
rm -rf "$out"
GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=sendemail.smtpserver GIT_CONFIG_VALUE_0=/bin/false \
	b4 send --no-sign -o "$out" >"$LOGS/series-b4.log" 2>&1 ||
	die "b4 send -o failed; see $LOGS/series-b4.log"

# The same patches, in the same order, on the same base.
subjects() { sed -n '/^Subject:/{:a;N;/\n[^ ]/!ba;s/\n[^ ].*//;s/\n */ /g;p}' "$@" | sed 's/^Subject: \[PATCH[^]]*\] //'; }
mapfile -t emls < <(find "$out" -maxdepth 1 -name '*.eml' | sort)
[ ${#emls[@]} = ${#mails[@]} ] || die "b4 wrote ${#emls[@]} mails, make series ${#mails[@]}"
diff <(for m in "${mails[@]}"; do subjects "$m"; done) <(for m in "${emls[@]}"; do subjects "$m"; done) >&2 ||
	die "b4's subjects differ from those of make series (above: < make series, > b4)"
base=$(sed -n 's/^base-commit: //p' "${mails[0]}")
{ [ -n "$base" ] && grep -q "^base-commit: $base" "${emls[0]}"; } ||
	die "b4's cover letter does not carry base-commit: $base"
prefix=PATCH
[ "$VERSION" = 1 ] || prefix+=" v$VERSION"
grep -q "^Subject: \[$prefix 00/" "${emls[0]}" || die "b4's cover letter is not [$prefix 00/..]"
# The addresses of header $1 of the cover letter.
addresses() { sed -n "/^$1:/,/^[A-Z][a-zA-Z-]*: /p" "${emls[0]}" | grep -o '<[^>]*>\|[^ ,<]*@[^ ,>]*' | sort -u | wc -l; }
to=$(addresses To)
cc=$(addresses Cc)
step "series-b4: ${#emls[@]} mails as b4 $B4_VERSION would send them (To: $to, Cc: $cc) in $out"
echo "Send them with: cd $repo && git checkout b4/series && $venv/bin/b4 send (or git send-email $series/*.patch)"
