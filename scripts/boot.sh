#!/usr/bin/env bash
# Boot the kernel of CONFIG with the initramfs in QEMU, bounded by TIMEOUT.
#
#   MODE=check  run KUnit (at boot) and the kselftests; results to
#               build/results/<CONFIG>-check/ (then scripts/results.py),
#               with boot.rc, this script's exit status
#   MODE=demo   show the series live, then power off
#   MODE=shell  an interactive guest on this terminal
#   MODE=vmtests upstream's run_vmtests.sh, the categories of VMTESTS=
#               (comma-separated), each limited to VMTESTS_LIMIT seconds
#               (900), results to build/results/<CONFIG>-vmtests[-base]/
#   MODE=fstests run /kselftest/fstests (scripts/guest/fstests; make
#               fstests: its host side passes its shares and disks in
#               QEMU_ARGS)
#
# QEMU_ARGS: more QEMU arguments (split on white space), e.g. -virtfs and
# -drive for make fstests.
#
# ACCEL=auto picks KVM when a guest really runs under it (a short probe,
# cached per host boot: /dev/kvm may open and still hang every guest, as in
# nested setups), TCG otherwise. ACCEL=kvm or ACCEL=tcg forces one.
#
# PLUGIN=insn|c2c (make bench COUNT=...): TCG with the tcg-bench plugin
# (scripts/bench/tcg-plugin), which counts between the markers of the bench
# workloads: insn the instructions per vCPU, user and kernel, under
# `-icount shift=$ICOUNT_SHIFT` (3: virtual time follows the instruction
# count; QEMU runs the vCPUs round-robin in one thread); c2c also the
# cache-line transfers between vCPUs, under MTTCG. The guest boots with
# nokaslr (the System.map symbols and the vmemmap formula hold) and
# series.count=; the plugin writes plugin.json (a line per region) and
# plugin.txt to the run directory, beside the symbol maps it used.
# WORKLOADS=globs (series.workloads=) picks the guest's workloads.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CONFIG=${CONFIG:-test}
MODE=${MODE:-check}
check_config_name "$CONFIG"
case $MODE in check | demo | shell | bench | vmtests | fstests) ;; *) die "unknown MODE '$MODE' (check, demo, shell, bench, vmtests, fstests)" ;; esac
# The results of the last run go first, before anything else can fail: a
# boot that fails must not leave them to be read as its own. boot.rc says
# how this one ended (scripts/results.py fails the run unless it is 0).
run=$BUILD/results/$CONFIG-$MODE
[ "$VARIANT" = base ] && run=$run-base
rm -rf "$run" && mkdir -p "$run"
trap 'echo $? >"$run/boot.rc"' EXIT

check_settings
ACCEL=${ACCEL:-auto}
# migration needs three CPUs: `make check` boots four vCPUs.
if [ "$MODE" = check ]; then SMP=${SMP:-4}; else SMP=${SMP:-2}; fi
MEM=${MEM:-2G}
TESTS=${TESTS:-}
if [ "$MODE" = shell ]; then TIMEOUT=${TIMEOUT:-7200}; else TIMEOUT=${TIMEOUT:-1800}; fi
# The architecture of the build (make matrix: i386, arm64 too): arm64
# boots QEMU's virt machine under TCG, with its own initramfs.
arch=$(obj_arch "$(obj_dir "$CONFIG")")
check_cross_arch "$arch" boot
qemu="qemu-system-x86_64"
initrd=$BUILD/initramfs.cpio
if [ "$arch" = arm64 ]; then
	qemu="qemu-system-aarch64"
	initrd=$BUILD/initramfs-arm64.cpio
fi
need "$qemu" timeout
PLUGIN=${PLUGIN:-}
case $PLUGIN in
'') ;;
insn | c2c)
	[ "$arch" = x86_64 ] || die "PLUGIN=$PLUGIN: x86_64 guests only"
	[ "$ACCEL" != kvm ] || die "PLUGIN=$PLUGIN: a TCG plugin needs ACCEL=tcg (or auto)"
	ACCEL=tcg
	;;
*) die "unknown PLUGIN '$PLUGIN' (insn, c2c)" ;;
esac

kernel=$(obj_image "$(obj_dir "$CONFIG")")
[ -f "$kernel" ] || die "no kernel at $kernel; run 'make build CONFIG=$CONFIG'"
[ -f "$initrd" ] || die "no initramfs at $initrd; run 'make image'$([ "$arch" = arm64 ] && echo " ARCH=arm64")"

# The out-of-tree modules (`make module`), appended to the initramfs as a
# second archive while this kernel is the one they were built for.
name=$(basename "$(obj_dir "$CONFIG")" | sed 's/^obj-//')
modules=$BUILD/modules-$name.cpio
if [ -f "$modules" ]; then
	if [ "$(cat "$BUILD/modules-$name.kernel" 2>/dev/null)" = "$(sha256sum <"$kernel" | cut -d' ' -f1)" ]; then
		cat "$initrd" "$modules" >"$BUILD/.initramfs-$name.cpio"
		initrd=$BUILD/.initramfs-$name.cpio
	else
		step "boot: $modules was built for another kernel; not loaded ('make module CONFIG=$CONFIG')"
	fi
fi

# Two NUMA nodes (list_lru and the deferred split queue are per node).
mem_mib=${MEM%[MG]}
[ "${MEM: -1}" = G ] && mem_mib=$((mem_mib * 1024))
# One socket per node, so that no LLC spans two nodes.
numa=()
smp=$SMP
if [ "$SMP" -ge 2 ] && [ $((SMP % 2)) = 0 ]; then
	half=$((SMP / 2))
	smp="$SMP,sockets=2,cores=$half,threads=1"
	numa=(-object "memory-backend-ram,id=m0,size=$((mem_mib / 2))M"
		-object "memory-backend-ram,id=m1,size=$((mem_mib - mem_mib / 2))M"
		-numa "node,nodeid=0,cpus=0-$((half - 1)),memdev=m0"
		-numa "node,nodeid=1,cpus=$half-$((SMP - 1)),memdev=m1")
fi
bios=()
[ "$arch" != arm64 ] && [ -f /usr/share/qemu/qboot.rom ] && bios=(-bios /usr/share/qemu/qboot.rom)

# The QEMU command line for accelerator $1, in the array qemu_cmd.
qemu_cmdline() {
	local cpu=max
	[ "$1" = kvm ] && cpu=host
	if [ "$arch" = arm64 ]; then
		# pauth-impdef: QEMU's own pointer authentication, much faster
		# under TCG than the architected one.
		# shellcheck disable=SC2054 # commas of QEMU options
		qemu_cmd=(qemu-system-aarch64 -machine virt -accel tcg -cpu max,pauth-impdef=on
			-smp "$smp" -m "$MEM" "${numa[@]}"
			-kernel "$kernel" -initrd "$initrd" -no-reboot
			-display none -monitor none)
		return
	fi
	qemu_cmd=(qemu-system-x86_64 -machine q35 -accel "$1" -cpu "$cpu"
		-smp "$smp" -m "$MEM" "${numa[@]}" "${bios[@]}"
		-kernel "$kernel" -initrd "$initrd" -no-reboot
		-display none -vga none -monitor none)
}

# Does a guest get to print anything under KVM within a few seconds? Sets
# kvm_why to the reason, for the accelerator line. The verdict is cached
# per host boot ($BUILD/kvm-probe: boot id, reason, verdict).
kvm_works() {
	kvm_why="no /dev/kvm"
	[ -e /dev/kvm ] || return 1
	kvm_why="/dev/kvm is not readable and writable by $(id -un)"
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	local cache=$BUILD/kvm-probe id
	id=$(cat /proc/sys/kernel/random/boot_id)
	if [ -f "$cache" ] && [ "$(head -n1 "$cache")" = "$id" ]; then
		kvm_why="a probe guest did not boot"
		[ "$(wc -l <"$cache")" -lt 3 ] || kvm_why=$(sed -n 2p "$cache")
		kvm_why+=", probed earlier in this host boot"
		[ "$(tail -n1 "$cache")" = yes ]
		return
	fi
	local log=$BUILD/kvm-probe.log err=$BUILD/kvm-probe.err verdict=no rc=0
	rm -f "$log"
	# In a group with stderr redirected: a QEMU that dies of a signal
	# (SIGABRT when KVM fails) makes bash report "Aborted" on its stderr.
	{ timeout -k 2 20 qemu-system-x86_64 -machine q35 -accel kvm -cpu host -smp 1 -m 256M \
		"${bios[@]}" -kernel "$kernel" -no-reboot -display none -vga none -monitor none \
		-serial "file:$log" -append "console=ttyS0 panic=-1" >/dev/null 2>"$err" || rc=$?; } 2>/dev/null
	# Without an initramfs a working guest gets as far as the root panic.
	# Else the reason, with QEMU's first complaint ("failed to set MSR ...").
	local msg
	msg=$(sed -n 's/^qemu-system-x86_64: \(error: \)\{0,1\}//p' "$err" | head -n1 | cut -c1-60)
	if grep -q 'Kernel panic' "$log" 2>/dev/null; then
		verdict=yes kvm_why="a probe guest booted under KVM"
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		kvm_why="a probe guest did not boot in 20 s"
	elif [ "$rc" -gt 128 ]; then
		kvm_why="QEMU died of SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))${msg:+: $msg}"
	else
		kvm_why="a probe guest printed nothing (QEMU exited with $rc${msg:+: $msg})"
	fi
	printf '%s\n%s\n%s\n' "$id" "$kvm_why" "$verdict" >"$cache"
	[ $verdict = yes ]
}

if [ "$arch" = arm64 ]; then
	[ "$ACCEL" != kvm ] || die "ACCEL=kvm: an arm64 guest runs under TCG only here"
	ACCEL=tcg
fi
case $ACCEL in
auto) if kvm_works; then accel=kvm why=$kvm_why; else accel=tcg why="KVM: $kvm_why"; fi ;;
kvm) kvm_works || die "ACCEL=kvm: no usable KVM here ($kvm_why); use ACCEL=tcg"
	accel=kvm why="ACCEL=kvm; $kvm_why" ;;
tcg) accel=tcg why="ACCEL=tcg" ;;
esac
[ "$arch" != arm64 ] || why="an arm64 guest runs under TCG only here"

# The plugin (lib.sh's tcg_plugin_ready): built and loaded once by a QEMU
# without a machine. Either failing is one line, and the guest boots
# without it (the report then has no counts; make bench checks first).
plugin=()
so=$BUILD/tcg-plugin/release/libtcg_bench.so
if [ -n "$PLUGIN" ] && ! why_not=$(tcg_plugin_ready); then
	step "boot: PLUGIN=$PLUGIN: $why_not; booting without it"
	PLUGIN=
fi
if [ -n "$PLUGIN" ]; then
	map=$(obj_dir "$CONFIG")/System.map
	[ -f "$map" ] || die "PLUGIN=$PLUGIN: no $map"
	cp "$map" "$run/symbols.map"
	# The workloads' symbols, for the report (user text of one program at
	# a time: they are all linked at the same address).
	for b in "$BUILD"/initramfs/bench/*_bench; do
		[ -x "$b" ] && nm "$b" >"$run/$(basename "$b").nm"
	done
	# shellcheck disable=SC2054 # commas of QEMU options
	case $PLUGIN in
	insn)
		accel="tcg,thread=single"
		plugin=(-icount "shift=${ICOUNT_SHIFT:-3}")
		# Instructions by function (the 80 largest per region): where a
		# difference between base and series goes.
		pmode=icount,profile=80
		;;
	c2c)
		accel="tcg,thread=multi"
		pmode=c2c
		;;
	esac
	plugin+=(-plugin "$so,mode=$pmode,count=tb,top=${PLUGIN_TOP:-12},symbols=$run/symbols.map,out=$run/plugin.txt,json=$run/plugin.json")
	why+="; PLUGIN=$PLUGIN: the tcg-bench plugin, mode=$pmode$([ "$PLUGIN" != insn ] || echo ", -icount shift=${ICOUNT_SHIFT:-3}")"
fi

# no5lvl: 4-level paging. With LA57 (-cpu max) a KASAN kernel once reported a
# wild-memory-access from an interrupt taken in identify_boot_cpu(), a stock
# 7.3.4 path under TCG, before any of the series runs.
# log_buf_len: the guest's dmesg.txt, read at the end, must still hold the
# boot's first lines (make matrix's kcsan entry looks for "kcsan: enabled
# early"); the default 128K is mostly filled by then.
append="console=ttyS0 loglevel=5 panic=-1 no5lvl log_buf_len=4M series.mode=$MODE"
[ "$arch" = arm64 ] && append="console=ttyAMA0 loglevel=5 panic=-1 log_buf_len=4M series.mode=$MODE"
[ -n "$TESTS" ] && append+=" series.tests=$("$TOP/scripts/tests.sh")"
[ -n "${BENCH:-}" ] && append+=" series.bench=$BENCH"
[ -n "$PLUGIN" ] && append+=" nokaslr series.count=$PLUGIN"
[ -n "${WORKLOADS:-}" ] && append+=" series.workloads=$WORKLOADS"
if [ "$MODE" = vmtests ]; then
	[ -n "${VMTESTS:-}" ] || die "MODE=vmtests: no VMTESTS= (the run_vmtests.sh categories, comma-separated)"
	append+=" series.vmtests=$VMTESTS series.vmtests_limit=${VMTESTS_LIMIT:-900}"
fi
# A CMA area for rcu_free_test's alloc_contig_range() case, where the kernel
# has one (CONFIG_DMA_CMA).
grep -qx 'CONFIG_DMA_CMA=y' "$(obj_dir "$CONFIG")/.config" 2>/dev/null && append+=" cma=64M"
echo "$([ "$arch" = x86_64 ] || echo "arch=$arch ")accel=$accel smp=$SMP mem=$MEM config=$CONFIG mode=$MODE$([ -z "$PLUGIN" ] || echo " plugin=$PLUGIN")$([ "$PLUGIN" != insn ] || echo " icount=shift=${ICOUNT_SHIFT:-3}")" >"$run/guest.txt"
step "boot: accelerator $accel ($why)"
step "boot: $CONFIG kernel, $MODE, $SMP vCPUs, $MEM, timeout ${TIMEOUT}s"

qemu_cmdline "$accel"
# The results: the second serial port (x86: ttyS1); on arm64's virt machine,
# which has one, a virtio console (hvc0).
results=(-serial "file:$run/results.txt")
if [ "$arch" = arm64 ]; then
	# shellcheck disable=SC2054 # commas of QEMU options
	results=(-chardev "file,id=results,path=$run/results.txt"
		-device virtio-serial-device -device virtconsole,chardev=results)
fi
rc=0
if [ "$MODE" = shell ]; then
	timeout -k 10 "$TIMEOUT" "${qemu_cmd[@]}" -serial mon:stdio \
		"${results[@]}" -append "$append" || rc=$?
else
	# shellcheck disable=SC2206 # QEMU_ARGS is split on purpose
	extra=(${QEMU_ARGS:-})
	timeout -k 10 "$TIMEOUT" "${qemu_cmd[@]}" "${plugin[@]}" "${extra[@]}" -serial "file:$run/console.log" \
		"${results[@]}" -append "$append" </dev/null || rc=$?
fi
echo "$rc" >"$run/qemu.rc"
# fail WHY: WHY and the console's last lines, on stderr; exit 1.
fail() {
	echo "boot: $1; its last lines:" >&2
	tail -n 25 "$run/console.log" 2>/dev/null | sed 's/^/  | /' >&2 ||
		echo "  (no console log: $run/console.log)" >&2
	exit 1
}
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	fail "guest killed after ${TIMEOUT}s"
fi
[ "$rc" = 0 ] || die "qemu exited with $rc (console: $run/console.log)"
grep -q '^@@@ done' "$run/results.txt" 2>/dev/null || fail "the guest stopped before its init finished"
step "boot: guest powered off ($run)"
