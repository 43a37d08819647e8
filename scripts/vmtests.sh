#!/usr/bin/env bash
# `make vmtests`: upstream's mm selftest suite,
# tools/testing/selftests/mm/run_vmtests.sh, on the base kernel (7.3.4
# alone) and on the series, with the same configuration (CONFIG, default
# test: KASAN, lockdep, PROVE_RCU), one boot each, one category at a time
# (scripts/guest/init, MODE=vmtests). scripts/vmtests_report.py compares
# them test by test: a test that passes on base and not on the series fails
# the target, named; tests that fail on both are listed as the base's.
#
#   VMTESTS=all|cat,cat     the categories (all: every one run_vmtests.sh
#                           lists, less VMTESTS_SKIP)
#   VMTESTS_SKIP=cat,...    left out, with the reason in README (default:
#                           none: a category that cannot run here skips
#                           itself, and the table says so)
#   VMTESTS_LIMIT=seconds   each category's limit (900)
#   VMTESTS_VARIANTS=base,series   which kernels to boot (a run left out is
#                           compared from its last results)
#
# Results: build/results/<CONFIG>-vmtests{-base,}/ and build/vmtests.{md,json}.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CONFIG=${CONFIG:-test}
check_config_name "$CONFIG"
limit=${VMTESTS_LIMIT:-900}
[[ $limit =~ ^[1-9][0-9]*$ ]] || die "VMTESTS_LIMIT must be a number of seconds, not '$limit'"

"$TOP/scripts/tree.sh"
suite=$TREE/tools/testing/selftests/mm/run_vmtests.sh
[ -f "$suite" ] || die "no $suite in the assembled tree"
# The categories, from run_vmtests.sh's own usage text ("- <category>").
listed=$(sed -n '/^usage()/,/^EOF/p' "$suite" | sed -n 's/^- \([a-z_-]*\)$/\1/p')
[ -n "$listed" ] || die "no categories in $suite's usage text"
want=${VMTESTS:-all}
[ "$want" != all ] || want=$(paste -sd, <<<"$listed")
cats=()
IFS=, read -ra asked <<<"$want"
IFS=, read -ra skip <<<"${VMTESTS_SKIP:-}"
for c in "${asked[@]}"; do
	grep -qx -- "$c" <<<"$listed" || die "VMTESTS: no category '$c' in run_vmtests.sh (known: $(paste -sd' ' <<<"$listed"))"
	[[ " ${skip[*]} " == *" $c "* ]] || cats+=("$c")
done
[ ${#cats[@]} != 0 ] || die "VMTESTS: no category left to run"
IFS=, read -ra variants <<<"${VMTESTS_VARIANTS:-base,series}"
for v in "${variants[@]}"; do
	case $v in base | series) ;; *) die "VMTESTS_VARIANTS: unknown '$v' (base, series)" ;; esac
done

# The guest: the series' initramfs (the kselftests built from the series
# tree; run_vmtests.sh and the upstream tests it runs are the same in both).
"$TOP/scripts/image.sh"
# A boot's time limit: every category at its limit, and the boot.
timeout=$((${#cats[@]} * limit + 600))
for v in "${variants[@]}"; do
	export VARIANT=$v
	step "vmtests: $v kernel ($CONFIG), ${#cats[@]} categories"
	"$TOP/scripts/tree.sh"
	"$TOP/scripts/config.sh"
	"$TOP/scripts/build.sh"
	VMTESTS=$(IFS=,; echo "${cats[*]}") VMTESTS_LIMIT=$limit MODE=vmtests TIMEOUT=$timeout \
		"$TOP/scripts/boot.sh" || step "vmtests: the $v boot did not finish; its results so far are compared"
done
run=$BUILD/results/$CONFIG-vmtests
/usr/bin/python3 "$TOP/scripts/vmtests_report.py" "$BUILD/vmtests" "$run-base" "$run"
