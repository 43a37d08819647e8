#!/usr/bin/env bash
# Build the mm kselftests statically against the headers of the assembled
# tree, into build/kselftest/kselftest/mm.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need gcc make
out=$BUILD/kselftest
bin=$out/kselftest/mm
hdr=$BUILD/kselftest-headers
mkdir -p "$LOGS" "$out"
log=$LOGS/kselftests.log
step "kselftests: building mm (log: $log)"
{
	make -C "$TREE" O="$hdr" LLVM=-19 headers
	# check_config.sh writes local_config.{h,mk} into the source tree.
	make -C "$TREE/tools/testing/selftests" O="$out" TARGETS=mm \
		KHDR_INCLUDES="-isystem $hdr/usr/include" \
		EXTRA_CFLAGS=-static -j"$(nproc)"
} >"$log" 2>&1 || { tail -20 "$log"; die "building the mm kselftests failed (log: $log)"; }
missing=$(awk '!/^[#@]/ && NF { for (i = 3; i <= NF; i++) if (sub(/^\.\//, "", $i)) { print $i; break } }' "$TOP/scripts/guest/tests.txt" |
	sort -u | while read -r t; do [ -x "$bin/$t" ] || echo "$t"; done)
[ -z "$missing" ] || die "kselftests not built: $(echo "$missing" | xargs) (log: $log)"
step "kselftests: $(find "$bin" -maxdepth 1 -type f -executable | wc -l) binaries in $bin"
