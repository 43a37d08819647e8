#!/usr/bin/env bash
# Print the kselftests a check run must report, comma-separated: those of
# scripts/guest/tests.txt, filtered by TESTS= (names or globs) when set;
# without TESTS=, all but the "@optional" ones (names or globs).
set -euo pipefail -o noglob
. "$(dirname "$0")/lib.sh"

TESTS=${TESTS:-}
mapfile -t all < <(awk '!/^[#@]/ && NF { print $1 }' "$TOP/scripts/guest/tests.txt")
picked=()
for t in ${TESTS//,/ }; do
	found=0
	for n in "${all[@]}"; do
		# shellcheck disable=SC2053 # $t may be a glob
		if [[ $n == $t ]]; then picked+=("$n"); found=1; fi
	done
	[ $found = 1 ] || die "TESTS: no test named '$t' (known: ${all[*]})"
done
if [ -z "$TESTS" ]; then
	mapfile -t optional < <(awk '$1 == "@optional" { print $2 }' "$TOP/scripts/guest/tests.txt")
	for n in "${all[@]}"; do
		opt=0
		for o in "${optional[@]}"; do
			# shellcheck disable=SC2053 # $o may be a glob
			[[ $n == $o ]] && opt=1
		done
		[ $opt = 1 ] || picked+=("$n")
	done
fi
(IFS=,; echo "${picked[*]}")
