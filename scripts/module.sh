#!/usr/bin/env bash
# `make module`: build the project's out-of-tree modules (the top-level
# Kbuild) against the assembled tree and the built kernel of CONFIG
# (default: test), in build/module-<obj>/, and pack them as a cpio archive
# (/bench/modules/*.ko) that boot.sh appends to the guest's initramfs while
# that kernel is the one they were built against. `make bench` does this
# for the series' perf kernel; `make check` for the test kernel
# (MODULE_OPTIONAL=1: nothing to do for a configuration without Rust).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CONFIG=${CONFIG:-test}
check_config_name "$CONFIG"
case ${MODULE_OPTIONAL:-0} in 0 | 1) ;; *) die "MODULE_OPTIONAL must be 0 or 1, not '$MODULE_OPTIONAL'" ;; esac
if [ "$VARIANT" != series ]; then
	[ "${MODULE_OPTIONAL:-0}" = 1 ] && exit 0
	die "the modules need the series (VARIANT=series, not '$VARIANT')"
fi
obj=$(obj_dir "$CONFIG")
kernel=$obj/arch/x86/boot/bzImage
[ -f "$kernel" ] || die "no kernel at $kernel; run 'make build CONFIG=$CONFIG' first"
name=$(basename "$obj" | sed 's/^obj-//')
for opt in CONFIG_MODULES CONFIG_RUST CONFIG_DEFERRED_SPLIT_RUST; do
	grep -qx "$opt=y" "$obj/.config" && continue
	# `make check` asks for the modules where the configuration has them.
	if [ "${MODULE_OPTIONAL:-0}" = 1 ]; then
		rm -f "$BUILD/modules-$name.cpio" "$BUILD/modules-$name.kernel"
		step "module: CONFIG=$CONFIG has no $opt=y; no modules"
		exit 0
	fi
	die "CONFIG=$CONFIG has no $opt=y: its kernel cannot load the modules"
done
need cpio
mo=$BUILD/module-$name
log=$LOGS/module-$name.log
mkdir -p "$mo" "$LOGS"
rm -f "$BUILD/modules-$name.cpio" "$BUILD/modules-$name.kernel"
step "module: building $(grep -E '^obj-m' "$TOP/Kbuild" | sed 's/.*+= *//' | xargs) for $name (log: $log)"
if ! kmake "$obj" M="$TOP" MO="$mo" modules >"$log" 2>&1; then
	grep -E 'error|ERROR' "$log" | head -20 >&2 || :
	die "module build failed (log: $log)"
fi
! grep -qE '^warning|: warning:' "$log" || die "module build has warnings (log: $log)"

# The archive, and the kernel it belongs to.
root=$BUILD/.module-root
rm -rf "$root" && mkdir -p "$root/bench/modules"
find "$mo" -name '*.ko' -exec cp {} "$root/bench/modules/" \;
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$BUILD/modules-$name.cpio"
sha256sum <"$kernel" | cut -d' ' -f1 >"$BUILD/modules-$name.kernel"
rm -rf "$root"
step "module: $(find "$mo" -name '*.ko' -printf '%f\n' | sort | xargs) -> $BUILD/modules-$name.cpio"
