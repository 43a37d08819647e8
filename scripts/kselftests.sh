#!/usr/bin/env bash
# Build the mm kselftests statically against the headers of the assembled
# tree, into build/kselftest/kselftest/mm.
#
# Static PIE, not static: a static non-PIE binary sits at 0x400000, and the
# kernel places its brk heap at a random page up to 1 GiB above it (x86_64
# and arm64 arch_randomize_brk()). khugepaged maps at a 1 GiB hint and fails
# when the heap is there: about 0.7% of runs of an 8 MiB mapping (a CI run
# failed khugepaged with "Failed to allocate VMA at 0x40000000"); its
# collapse_compound_extreme also mremap()s MREMAP_FIXED around that address,
# over whatever is there (split_huge_page_test hints 1 GiB too, unchecked).
# A static PIE's brk starts at ELF_ET_DYN_BASE (fs/binfmt_elf.c), far
# above. mm/Makefile appends -no-pie on x86_64, which would turn
# -static-pie into a dynamic link: CAN_BUILD_WITH_NOPIE=0 keeps it off.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# ARCH=arm64 (make matrix): cross-built with gcc-aarch64-linux-gnu into
# build/kselftest-arm64, from a copy of the tree's tools/ (check_config.sh
# writes local_config.{h,mk} into its source tree: the x86 build's must
# not be overwritten).
ARCH=${ARCH:-x86_64}
case $ARCH in
x86_64)
	need gcc make readelf
	src=$TREE
	out=$BUILD/kselftest
	hdr=$BUILD/kselftest-headers
	karch=()
	cross=()
	;;
arm64)
	need aarch64-linux-gnu-gcc make readelf
	src=$BUILD/kselftest-src-arm64
	out=$BUILD/kselftest-arm64
	hdr=$BUILD/kselftest-headers-arm64
	karch=(ARCH=arm64)
	cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	;;
*) die "kselftests: unknown ARCH '$ARCH' (x86_64, arm64)" ;;
esac
bin=$out/kselftest/mm
# The binaries in $bin that are not static PIEs: ELF type DYN, no program
# interpreter. None before the first build ($bin missing: a fresh clone).
not_static_pie() {
	[ -d "$bin" ] || return 0
	find "$bin" -maxdepth 1 -type f -executable | sort | while read -r f; do
		[ "$(head -c4 "$f")" = $'\x7fELF' ] || continue
		h=$(LC_ALL=C readelf -lhW "$f" 2>/dev/null) || { echo "${f##*/}"; continue; }
		grep -q 'Type:[[:space:]]*DYN' <<<"$h" && ! grep -q 'INTERP' <<<"$h" || echo "${f##*/}"
	done
}
mkdir -p "$LOGS" "$out"
log=$LOGS/kselftests$([ "$ARCH" = x86_64 ] || echo "-$ARCH").log
step "kselftests: building mm$([ "$ARCH" = x86_64 ] || echo " for $ARCH") (log: $log)"
if [ "$ARCH" != x86_64 ]; then
	rm -rf "$src" && mkdir -p "$src/mm"
	cp -a "$TREE/tools" "$src/tools"
	cp -a "$TREE/mm/gup_test.h" "$src/mm/"
	rm -f "$src"/tools/testing/selftests/mm/local_config.*
fi
# Without the arm64 builds of libnuma, libcap and liburing (multiarch -dev
# packages, which would upgrade the host's), the tests that link them are
# not built for arm64 (-k): those the guest runs must be.
keep=()
[ "$ARCH" = x86_64 ] || keep=(-k)
# make does not rebuild a binary whose flags alone changed: a build from
# before static PIE is built again.
stale=$(not_static_pie)
if [ -n "$stale" ]; then
	step "kselftests: $(wc -l <<<"$stale") binaries are not static PIE: building them again"
	rm -rf "$bin"
fi
{
	make -C "$TREE" O="$hdr" LLVM=-19 "${karch[@]}" headers &&
	# check_config.sh writes local_config.{h,mk} into the source tree.
	make -C "$src/tools/testing/selftests" O="$out" TARGETS=mm "${cross[@]}" "${keep[@]}" \
		KHDR_INCLUDES="-isystem $hdr/usr/include" \
		EXTRA_CFLAGS="-fPIE -static-pie" CAN_BUILD_WITH_NOPIE=0 -j"$(nproc)"
} >"$log" 2>&1 || [ "$ARCH" != x86_64 ] || { tail -20 "$log"; die "building the mm kselftests failed (log: $log)"; }
if [ "$ARCH" = x86_64 ]; then
	# The programs tests.txt runs; the suite's scripts (run_vmtests.sh)
	# come from the source tree (image.sh) and must be there.
	missing=$(awk '!/^[#@]/ && NF { for (i = 3; i <= NF; i++) if (sub(/^\.\//, "", $i)) { print $i; break } }' "$TOP/scripts/guest/tests.txt" |
		sort -u | while read -r t; do
			case $t in
			*.sh) [ -f "$src/tools/testing/selftests/mm/$t" ] || echo "$t" ;;
			*) [ -x "$bin/$t" ] || echo "$t" ;;
			esac
		done)
else
	missing=$(for t in pagecache_read_stress pagecache_split_read_test rcu_free_test deferred_split_stress \
		split_huge_page_test transhuge-stress; do [ -x "$bin/$t" ] || echo "$t"; done)
fi
[ -z "$missing" ] || die "kselftests not built: $(echo "$missing" | xargs) (log: $log)"
notpie=$(not_static_pie)
[ -z "$notpie" ] || die "kselftests not static PIE: $(echo "$notpie" | xargs) (log: $log)"
step "kselftests: $(find "$bin" -maxdepth 1 -type f -executable | wc -l) binaries in $bin"
