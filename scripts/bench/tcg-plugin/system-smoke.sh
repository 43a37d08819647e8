#!/usr/bin/env bash
# System-mode smoke test of the tcg-bench plugin: boots KERNEL (a bzImage;
# SMP, ACPI, initramfs support) under qemu-system-x86_64 (TCG, MTTCG) with
# a static /init (tests/sysinit.c) that runs three marked regions, and
# prints the plugin's report. Not part of test.sh: it needs a built kernel.
#
#   system-smoke.sh BZIMAGE SYSTEM_MAP [VCPUS] [MODE]
#
# MODE: c2c (default) or icount. ICOUNT=N adds QEMU's `-icount shift=N`
# (virtual time driven by the instruction count: timer interrupts come at
# the same instruction counts from run to run; QEMU then runs the vCPUs in
# one thread, round-robin, instead of MTTCG). Output in $TCG_PLUGIN_OUT/system
# (default build/tcg-plugin/system), or $SMOKE_OUT.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
kernel=$1 map=$2 vcpus=${3:-2} mode=${4:-c2c}
out=${TCG_PLUGIN_OUT:-$top/build/tcg-plugin}
sys=${SMOKE_OUT:-$out/system}
mkdir -p "$sys/root"
export CARGO_TARGET_DIR=$out
(cd "$here" && cargo build --release --quiet)
cc=${CC:-$(command -v gcc || command -v clang-19)}
"$cc" -O2 -static -no-pie -pthread -o "$sys/root/init" "$here/tests/sysinit.c"
(cd "$sys/root" && echo init | cpio -o -H newc --quiet) | gzip -1 >"$sys/initramfs.cpio.gz"
# Kernel text and the init's user text in one map (they do not overlap).
cat "$map" >"$sys/symbols.map"
nm "$sys/root/init" >>"$sys/symbols.map"
bios=()
[ -f /usr/share/qemu/qboot.rom ] && bios=(-bios /usr/share/qemu/qboot.rom)
accel=(-accel tcg,thread=multi)
[ -n "${ICOUNT:-}" ] && accel=(-accel tcg,thread=single -icount "shift=$ICOUNT")
start=$(date +%s.%N)
timeout -k 5 1200 qemu-system-x86_64 -machine q35 "${accel[@]}" -cpu max \
	-smp "$vcpus" -m 1G "${bios[@]}" -kernel "$kernel" -initrd "$sys/initramfs.cpio.gz" \
	-no-reboot -display none -vga none -monitor none -serial "file:$sys/console.log" \
	-append "console=ttyS0 loglevel=4 panic=-1 no5lvl nokaslr" \
	-plugin "$out/release/libtcg_bench.so,mode=$mode,top=8,symbols=$sys/symbols.map,out=$sys/report.txt,json=$sys/report.json"
echo "system-smoke: $(echo "$(date +%s.%N) - $start" | bc) s; console:"
grep sysinit "$sys/console.log" || true
cat "$sys/report.txt"
