#!/usr/bin/env bash
# Pack the guest initramfs build/initramfs.cpio: busybox-static,
# bash-static, the guest's /init, the mm kselftests and the project's own
# guest tools.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need cpio
# ARCH=arm64 (make matrix): Debian's arm64 busybox-static and bash-static
# (make deps MATRIX=1 unpacks them into build/arm64-root), the kselftests of
# `ARCH=arm64 scripts/kselftests.sh`, into build/initramfs-arm64.cpio.
ARCH=${ARCH:-x86_64}
busybox=/bin/busybox
bash_static=/bin/bash-static
kst=$BUILD/kselftest/kselftest/mm
root=$BUILD/initramfs
cpio_out=$BUILD/initramfs.cpio
cc=gcc
case $ARCH in
x86_64) ;;
arm64)
	check_cross_arch arm64 boot
	busybox=$BUILD/arm64-root/bin/busybox
	bash_static=$BUILD/arm64-root/bin/bash-static
	kst=$BUILD/kselftest-arm64/kselftest/mm
	root=$BUILD/initramfs-arm64
	cpio_out=$BUILD/initramfs-arm64.cpio
	cc=aarch64-linux-gnu-gcc
	;;
*) die "image: unknown ARCH '$ARCH' (x86_64, arm64)" ;;
esac
[ -x "$busybox" ] || die "$busybox not found (busybox-static); run 'make deps'"
[ -x "$bash_static" ] || die "$bash_static not found (bash-static); run 'make deps'"
[ -d "$kst" ] || die "no kselftests in $kst; run 'make kselftests'"

rm -rf "$root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,root,kselftest/mm}
cp "$busybox" "$root/bin/busybox"
cp "$bash_static" "$root/bin/bash-static"
cp "$TOP/scripts/guest/init" "$root/init"
cp "$TOP/scripts/guest/tests.txt" "$root/kselftest/tests.txt"
cp "$TOP/scripts/guest/demo" "$root/demo"
find "$kst" -maxdepth 1 -type f -executable -exec cp {} "$root/kselftest/mm/" \;
# The suite's scripts (make vmtests: run_vmtests.sh and the scripts it
# runs), which an O= build leaves in the source tree.
cp "$TREE"/tools/testing/selftests/mm/*.sh "$root/kselftest/mm/"

# The bench workloads (`make bench`), with the tcg-bench plugin's markers
# (NOPs; `make bench COUNT=insn|c2c` counts between them).
mkdir -p "$root/bench"
marker=(-I "$TOP/scripts/bench/tcg-plugin/include")
"$cc" -static -O2 -Wall -Werror "${marker[@]}" -o "$root/bench/deferred_split_bench" \
	"$TOP/scripts/bench/deferred_split_bench.c" -lpthread ||
	die "cannot build scripts/bench/deferred_split_bench.c"
"$cc" -static -O2 -Wall -Werror "${marker[@]}" -o "$root/bench/read_bench" \
	"$TOP/scripts/bench/read_bench.c" -lpthread ||
	die "cannot build scripts/bench/read_bench.c"
# mkfs.xfs (xfsprogs) for the XFS of the read benchmarks: dynamically
# linked, so with its libraries and loader at their paths.
if [ "$ARCH" = x86_64 ] && [ -x /sbin/mkfs.xfs ]; then
	for f in /sbin/mkfs.xfs $(ldd /sbin/mkfs.xfs | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
	done
fi
cp "$TOP/scripts/guest/bench" "$root/bench/run"
cp "$TOP/scripts/guest/bench-reads" "$root/bench/reads"
cp "$TOP/scripts/guest/unqueue-test" "$root/kselftest/unqueue-test"
cp "$TOP/scripts/guest/lru-gen" "$root/kselftest/lru-gen"
[ ! -f "$TOP/scripts/guest/fstests" ] || cp "$TOP/scripts/guest/fstests" "$root/kselftest/fstests"
"$cc" -static -O2 -Wall -Werror -o "$root/kselftest/flush_dcache_check" \
	"$TOP/scripts/guest/flush_dcache_check.c" ||
	die "cannot build scripts/guest/flush_dcache_check.c"
# The reproducer of the migrate_vma deferred split bug (patches/fixes/,
# make matrix MATRIX=hmm), with test_hmm's uapi header from the tree.
"$cc" -static -O2 -Wall -Werror -I"$TREE/lib" -o "$root/kselftest/hmm_deferred_split_repro" \
	"$TOP/scripts/guest/hmm_deferred_split_repro.c" ||
	die "cannot build scripts/guest/hmm_deferred_split_repro.c"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$cpio_out.tmp"
mv "$cpio_out.tmp" "$cpio_out"
step "image: $(du -h "$cpio_out" | cut -f1) initramfs$([ "$ARCH" = x86_64 ] || echo " ($ARCH)")"
