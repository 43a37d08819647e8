#!/usr/bin/env bash
# Pack the guest initramfs build/initramfs.cpio: busybox-static,
# bash-static, the guest's /init, the mm kselftests and the project's own
# guest tools.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need cpio
busybox=/bin/busybox
bash_static=/bin/bash-static
kst=$BUILD/kselftest/kselftest/mm
[ -x "$busybox" ] || die "$busybox not found (busybox-static); run 'make deps'"
[ -x "$bash_static" ] || die "$bash_static not found (bash-static); run 'make deps'"
[ -d "$kst" ] || die "no kselftests in $kst; run 'make kselftests'"

root=$BUILD/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,root,kselftest/mm}
cp "$busybox" "$root/bin/busybox"
cp "$bash_static" "$root/bin/bash-static"
cp "$TOP/scripts/guest/init" "$root/init"
cp "$TOP/scripts/guest/tests.txt" "$root/kselftest/tests.txt"
cp "$TOP/scripts/guest/demo" "$root/demo"
find "$kst" -maxdepth 1 -type f -executable -exec cp {} "$root/kselftest/mm/" \;
cp "$kst"/*.sh "$root/kselftest/mm/" 2>/dev/null || true

# The bench workloads (`make bench`).
mkdir -p "$root/bench"
gcc -static -O2 -Wall -Werror -o "$root/bench/deferred_split_bench" \
	"$TOP/scripts/bench/deferred_split_bench.c" -lpthread ||
	die "cannot build scripts/bench/deferred_split_bench.c"
gcc -static -O2 -Wall -Werror -o "$root/bench/read_bench" \
	"$TOP/scripts/bench/read_bench.c" -lpthread ||
	die "cannot build scripts/bench/read_bench.c"
# mkfs.xfs (xfsprogs) for the XFS of the read benchmarks: dynamically
# linked, so with its libraries and loader at their paths.
if [ -x /sbin/mkfs.xfs ]; then
	for f in /sbin/mkfs.xfs $(ldd /sbin/mkfs.xfs | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
	done
fi
cp "$TOP/scripts/guest/bench" "$root/bench/run"
cp "$TOP/scripts/guest/bench-reads" "$root/bench/reads"
cp "$TOP/scripts/guest/unqueue-test" "$root/kselftest/unqueue-test"
cp "$TOP/scripts/guest/lru-gen" "$root/kselftest/lru-gen"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$BUILD/initramfs.cpio.tmp"
mv "$BUILD/initramfs.cpio.tmp" "$BUILD/initramfs.cpio"
step "image: $(du -h "$BUILD/initramfs.cpio" | cut -f1) initramfs"
