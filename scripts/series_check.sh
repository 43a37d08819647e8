#!/usr/bin/env bash
# `make series-check`: the mail series of `make series`, patch by patch, the
# way a maintainer takes them.
#
# SERIES=NAME checks one series of patches/mail.plan, all of them (in plan
# order) by default. The mails of a series in SERIES_OUT/<name>
# (build/series/<name>) are applied with `git am` to a branch of the base
# in build/series-git (series-check-<name>), on top of the mails of the
# series before it in the plan, its prerequisites, applied unchecked; at
# every patch of the series:
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
# Then, on the last patch of the series, with the first configuration:
# rustfmtcheck, a CLIPPY=1 build and `make rustdoc`, each clean (no
# warning). SERIES_CHECK_CONFIGS= (empty) runs checkpatch alone, no build.
#
# Prints a line per patch and a summary per series
# (build/series-check-<name>.txt); fails if any check does. FROM=N (with
# one series) starts at patch N of it (the builds stay incremental), if
# patches 1 to N-1 are those the last run checked; KEEP_GOING=1 goes on
# past a failed patch.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=${SERIES_OUT:-$BUILD/series}
repo=$BUILD/series-git
configs=${SERIES_CHECK_CONFIGS-perf norust}
from=${FROM:-1}
[[ $from =~ ^[1-9][0-9]*$ ]] || die "FROM must be a patch number (1, 2, ...), not '$from'"
case ${KEEP_GOING:-0} in 0 | 1) ;; *) die "KEEP_GOING must be 0 or 1, not '$KEEP_GOING'" ;; esac
for c in $configs; do check_config_name "$c"; done
need git perl
[ -z "$configs" ] || need ccache clang-19

# The series of the plan, in order: their patches are checked against the
# plan's blocks (authors), their mails come from $out/<name>.
plan_dir=$(mktemp -d)
trap 'rm -rf "$plan_dir"' EXIT
"$TOP/scripts/mail_plan.py" "$TOP/patches/mail.plan" "$plan_dir" >/dev/null || exit 1
select_series "$plan_dir"
[ "$from" = 1 ] || [ ${#selected[@]} = 1 ] ||
	die "FROM=$from: say which series it is a patch of (SERIES=${all[0]}, ...)"
git -C "$repo" rev-parse -q --verify series-base >/dev/null 2>&1 ||
	die "$repo has no series-base; run 'make series'"
# The mails of series $1, in order, without the cover letter.
mails_of() {
	local m
	for m in "$out/$1"/*.patch; do
		[ -f "$m" ] || die "no mail series in $out/$1; run 'make series'"
		case $m in *0000-cover-letter.patch) ;; *) echo "$m" ;; esac
	done
}
# Every series to check, and those before it, must have been exported.
for s in "${all[@]}"; do
	mails_of "$s" >/dev/null
	[ "$s" != "${selected[-1]}" ] || break
done

# The final configurations: those of the assembled tree, which is the
# base with the whole series.
for c in $configs; do
	CONFIG=$c "$TOP/scripts/config.sh" >/dev/null
done

export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache}
mkdir -p "$LOGS"
TREE=$repo # kmake builds the series repository
sender="$(git -C "$TOP" config user.name) <$(git -C "$TOP" config user.email)>"
same() { git -C "$repo" log -1 --format='%T%n%B' "$1"; }
failed=0
for s in "${selected[@]}"; do
	read -r _ first last _ < <(awk -v s="$s" '$1 == s' "$plan_dir/series")
	mapfile -t mails < <(mails_of "$s")
	n=${#mails[@]}
	[ "$n" = $((last - first + 1)) ] ||
		die "$out/$s has $n mails, patches/mail.plan $((last - first + 1)) patches for series $s: run 'make series'"
	[ "$from" -le "$n" ] || die "FROM=$from: series $s has $n patches"
	# git am, as a maintainer applies mails: first the series before this
	# one (its prerequisites), then this one; every patch must apply in
	# order. Always the mails of now, also with FROM=N: the patches before N
	# must be those the last run checked (same tree and message), or the
	# results of that run would stand for a series that is no longer the
	# one sent.
	branch=series-check-$s
	old=()
	if [ "$from" != 1 ]; then
		git -C "$repo" rev-parse -q --verify "refs/series-check/$s-start" >/dev/null ||
			die "FROM=$from: no $branch branch yet; run from patch 1"
		mapfile -t old < <(git -C "$repo" rev-list --reverse "refs/series-check/$s-start..$branch")
	fi
	git -C "$repo" checkout -q -f -B "$branch-new" series-base
	git -C "$repo" clean -q -fdx
	for p in "${all[@]}"; do
		[ "$p" != "$s" ] || break
		mapfile -t pre < <(mails_of "$p")
		git -C "$repo" -c user.name=check -c user.email=check@localhost am -q "${pre[@]}" ||
			{ git -C "$repo" am --abort || true; die "git am of $out/$p (before series $s) failed"; }
	done
	start=$(git -C "$repo" rev-parse HEAD)
	git -C "$repo" -c user.name=check -c user.email=check@localhost am -q "${mails[@]}" ||
		{ git -C "$repo" am --abort || true; die "git am of $out/$s failed"; }
	mapfile -t commits < <(git -C "$repo" rev-list --reverse "$start..$branch-new")
	[ "${#commits[@]}" = "$n" ] || die "git am made ${#commits[@]} commits of $n mails"
	# Each patch's author is the one the plan names: its "from:" (someone
	# else's patch, carried with their authorship), else the sender.
	for ((i = 1; i <= n; i++)); do
		want=$(cat "$plan_dir/$(printf '%02d' $((first + i - 1)))/from")
		got=$(git -C "$repo" log -1 --format='%an <%ae>' "${commits[i - 1]}")
		[ "$got" = "${want:-$sender}" ] ||
			die "patch $i of $s is authored by $got, but the plan says ${want:+from: }${want:-the sender, $sender}: run 'make series'"
	done
	for ((i = 1; i < from; i++)); do
		if [ "${#old[@]}" -lt "$i" ] || [ "$(same "${old[i - 1]}")" != "$(same "${commits[i - 1]}")" ]; then
			die "FROM=$from: patch $i of $s changed since the last series-check; run FROM=$i or lower"
		fi
	done
	git -C "$repo" branch -q -f "$branch" "$branch-new"
	git -C "$repo" update-ref "refs/series-check/$s-start" "$start"
	git -C "$repo" checkout -q -f "$branch"
	git -C "$repo" branch -q -D "$branch-new"
	step "series-check $s: ${#commits[@]} patches applied with git am; checking from patch $from (${configs:-checkpatch only})"

	results=$BUILD/series-check-$s.txt
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
			tee "$LOGS/series-check-$s-checkpatch-$(printf '%02d' "$i").log" |
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
					cp "$log" "$LOGS/series-check-$s-$c-$(printf '%02d' "$i").log"
				fi
			else
				line+=" | $c FAILED"
				failed=1
				cp "$log" "$LOGS/series-check-$s-$c-$(printf '%02d' "$i").log"
			fi
			# olddefconfig rewrites the .config: keep the final one as the reference.
			cp "$(obj_dir "$c")/.config" "$obj/.config"
		done
		line+="  $(basename "$mail" .patch | sed 's/^v[0-9]*-//; s/^[0-9]*-//')"
		echo "$line" | tee -a "$results"
		if [ "$failed" = 1 ] && [ "${KEEP_GOING:-0}" = 0 ]; then
			die "patch $i of $s fails its checks (logs: $LOGS/series-check-*); SERIES=$s FROM=$i resumes"
		fi
	done

	# The whole series, with the first configuration: Rust formatting, lints, docs.
	final=""
	if [ -n "$configs" ]; then
		c=${configs%% *}
		obj=$BUILD/obj-check-$c
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
	fi
	echo "series $s:${final:- checkpatch only, no build}" | tee -a "$results"
	[ "$failed" = 0 ] || die "series-check of $s failed (results: $results)"
	step "series-check $s: $n patches, every check passed (results: $results)"
done
