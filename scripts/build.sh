#!/usr/bin/env bash
# Build the kernel of CONFIG (default: test) in build/obj-<CONFIG>,
# incrementally, with ccache. The full log is in build/logs/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CONFIG=${CONFIG:-test}
check_config_name "$CONFIG"
obj=$(obj_dir "$CONFIG")
[ -f "$obj/.config" ] || die "$obj is not configured; run 'make config CONFIG=$CONFIG' first"
need ccache clang-19
mkdir -p "$LOGS"
log=$LOGS/build-$CONFIG.log
export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache}
ccache -M 5G >/dev/null

step "build $CONFIG: started (log: $log)"
# A progress line every 200 objects, and the errors as they come.
if ! kmake "$obj" bzImage modules 2>&1 | tee "$log" |
	awk '/^  (CC|RUSTC|AR|LD)/ { if (++n % 200 == 0) printf "  ... %d objects\n", n; fflush() }
	     /error:|Error [0-9]/ { print; fflush() }'; then
	die "build $CONFIG failed (log: $log)"
fi
step "build $CONFIG: $(du -h "$obj/arch/x86/boot/bzImage" | cut -f1) bzImage"
