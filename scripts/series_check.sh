#!/usr/bin/env bash
# `make series-check`: the mail series of `make series`, patch by patch, the
# way a maintainer takes it.
#
# The mails in SERIES_OUT (build/series) are applied with `git am` to a
# branch of the base in build/series-git; at every patch:
#   - checkpatch.pl --strict on the mail (patches/checkpatch.ignore lists
#     the few findings accepted, per patch, with the reason; spdxcheck.py
#     runs with /usr/bin/python3, which has python3-ply and python3-git,
#     and a Python traceback in its output counts as a finding: without
#     GitPython, checkpatch ran on without the SPDX check and said nothing);
#   - an incremental build of each of SERIES_CHECK_CONFIGS (default:
#     "perf norust": the series with Rust, and CONFIG_RUST=n with its C
#     fallbacks), in build/obj-check-<config>, with the final .config of
#     that configuration (options a patch does not know yet are dropped by
#     olddefconfig, and come back with the patch that adds them).
# Then, on the last patch, with the first configuration: rustfmtcheck, a
# CLIPPY=1 build and `make rustdoc`, each clean (no warning).
#
# Prints a line per patch and a summary; fails if any check does.
# FROM=N starts at patch N (the builds stay incremental), if patches 1 to
# N-1 are those the last run checked; KEEP_GOING=1 goes on past a failed
# patch.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=${SERIES_OUT:-$BUILD/series}
repo=$BUILD/series-git
configs=${SERIES_CHECK_CONFIGS:-perf norust}
from=${FROM:-1}
[[ $from =~ ^[1-9][0-9]*$ ]] || die "FROM must be a patch number (1, 2, ...), not '$from'"
case ${KEEP_GOING:-0} in 0 | 1) ;; *) die "KEEP_GOING must be 0 or 1, not '$KEEP_GOING'" ;; esac
for c in $configs; do check_config_name "$c"; done
need git perl ccache clang-19
# shellcheck disable=SC2015 # die if either is missing
[ -d "$repo/.git" ] && ls "$out"/*-0001-*.patch >/dev/null 2>&1 ||
	die "no mail series in $out; run 'make series' first"
git -C "$repo" rev-parse -q --verify series-base >/dev/null || die "$repo has no series-base; run 'make series'"

mails=()
for m in "$out"/*.patch; do
	case $m in *-0000-cover-letter.patch) ;; *) mails+=("$m") ;; esac
done
n=${#mails[@]}
[ "$from" -le "$n" ] || die "FROM=$from: the series has $n patches"

# The final configurations: those of the assembled tree, which is the
# base with the whole series.
for c in $configs; do
	CONFIG=$c "$TOP/scripts/config.sh" >/dev/null
done

export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache}
mkdir -p "$LOGS"
TREE=$repo # kmake builds the series repository

# git am, as a maintainer applies mails: every patch must apply in order.
# Always the mails of now, also with FROM=N: the patches before N must be
# those the last run checked (same tree and message), or the results of
# that run would stand for a series that is no longer the one sent.
old=()
if [ "$from" != 1 ]; then
	git -C "$repo" rev-parse -q --verify series-check >/dev/null ||
		die "FROM=$from: no series-check branch yet; run from patch 1"
	mapfile -t old < <(git -C "$repo" rev-list --reverse series-base..series-check)
fi
git -C "$repo" checkout -q -f -B series-check-new series-base
git -C "$repo" clean -q -fdx
git -C "$repo" -c user.name=check -c user.email=check@localhost am -q "${mails[@]}" ||
	{ git -C "$repo" am --abort || true; die "git am of $out failed"; }
mapfile -t commits < <(git -C "$repo" rev-list --reverse series-base..series-check-new)
[ "${#commits[@]}" = "$n" ] || die "git am made ${#commits[@]} commits of $n mails"
# Each patch's author is the one the plan names: its "from:" (someone
# else's patch, carried with their authorship), else the sender.
plan_dir=$(mktemp -d)
trap 'rm -rf "$plan_dir"' EXIT
[ "$("$TOP/scripts/mail_plan.py" "$TOP/patches/mail.plan" "$plan_dir")" = "$n" ] ||
	die "$out has $n mails, patches/mail.plan another number of patches: run 'make series'"
sender="$(git -C "$TOP" config user.name) <$(git -C "$TOP" config user.email)>"
for ((i = 1; i <= n; i++)); do
	want=$(cat "$plan_dir/$(printf '%02d' "$i")/from")
	got=$(git -C "$repo" log -1 --format='%an <%ae>' "${commits[i - 1]}")
	[ "$got" = "${want:-$sender}" ] ||
		die "patch $i is authored by $got, but the plan says ${want:+from: }${want:-the sender, $sender}: run 'make series'"
done
same() { git -C "$repo" log -1 --format='%T%n%B' "$1"; }
for ((i = 1; i < from; i++)); do
	if [ "${#old[@]}" -lt "$i" ] || [ "$(same "${old[i - 1]}")" != "$(same "${commits[i - 1]}")" ]; then
		die "FROM=$from: patch $i changed since the last series-check; run FROM=$i or lower"
	fi
done
git -C "$repo" branch -q -f series-check series-check-new
git -C "$repo" checkout -q -f series-check
git -C "$repo" branch -q -D series-check-new
step "series-check: $n patches applied with git am; checking from patch $from ($configs)"

failed=0
results=$BUILD/series-check.txt
[ "$from" = 1 ] && : >"$results"
for ((i = from; i <= n; i++)); do
	mail=${mails[i - 1]}
	git -C "$repo" checkout -q -f "${commits[i - 1]}"
	line=$(printf '%02d' "$i")
	subject=$(git -C "$repo" log -1 --format=%s "${commits[i - 1]}")
	ignore=$(awk -F'\t' -v s="$subject" '!/^#/ && $1 == s { print $2 }' "$TOP/patches/checkpatch.ignore")
	# grep -c exits 1 when it counts none; a failed cd leaves cp empty,
	# which fails the step below.
	# shellcheck disable=SC2015
	cp=$(cd "$repo" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict -q ${ignore:+--ignore "$ignore"} "$mail" 2>&1 |
		tee "$LOGS/series-check-checkpatch-$(printf '%02d' "$i").log" |
		grep -cE '^(ERROR|WARNING|CHECK):|^Traceback ' || true)
	if [ "$cp" = 0 ]; then line+=" checkpatch ok"; else
		line+=" checkpatch $cp"
		failed=1
	fi
	for c in $configs; do
		obj=$BUILD/obj-check-$c
		log=$LOGS/series-check-$c.log
		mkdir -p "$obj"
		cmp -s "$(obj_dir "$c")/.config" "$obj/.config" || cp "$(obj_dir "$c")/.config" "$obj/.config"
		t0=$(date +%s)
		if kmake "$obj" olddefconfig bzImage >"$log" 2>&1; then
			w=$(grep -cE '^(warning|.*: warning:)' "$log" || true)
			if [ "$w" = 0 ]; then line+=" | $c ok $(($(date +%s) - t0))s"; else
				line+=" | $c $w warnings"
				failed=1
				cp "$log" "$LOGS/series-check-$c-$(printf '%02d' "$i").log"
			fi
		else
			line+=" | $c FAILED"
			failed=1
			cp "$log" "$LOGS/series-check-$c-$(printf '%02d' "$i").log"
		fi
		# olddefconfig rewrites the .config: keep the final one as the reference.
		cp "$(obj_dir "$c")/.config" "$obj/.config"
	done
	line+="  $(basename "$mail" .patch | sed 's/^v[0-9]*-[0-9]*-//')"
	echo "$line" | tee -a "$results"
	if [ "$failed" = 1 ] && [ "${KEEP_GOING:-0}" = 0 ]; then
		die "patch $i fails its checks (logs: $LOGS/series-check-*); FROM=$i resumes"
	fi
done

# The whole series, with the first configuration: Rust formatting, lints, docs.
c=${configs%% *}
obj=$BUILD/obj-check-$c
final=""
for target in rustfmtcheck "CLIPPY=1 bzImage" rustdoc; do
	log=$LOGS/series-check-$(echo "$target" | tr ' =' '--').log
	# shellcheck disable=SC2086 # the target words split on purpose
	if kmake "$obj" $target >"$log" 2>&1 && ! grep -qE '^(warning|error)' "$log"; then
		final+=" $target: ok;"
	else
		final+=" $target: FAILED ($log);"
		failed=1
	fi
done
echo "series:$final" | tee -a "$results"
[ "$failed" = 0 ] || die "series-check failed (results: $results)"
step "series-check: $n patches, every check passed (results: $results)"
