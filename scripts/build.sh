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
log=$LOGS/build-$(basename "$obj" | sed 's/^obj-//').log
export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache}
ccache -M 5G >/dev/null

# CLIPPY=1 builds the Rust code through clippy (same objects, plus lints).
clippy=()
case ${CLIPPY:-} in '' | 0) ;; 1) clippy=(CLIPPY=1) ;; *) die "CLIPPY must be 0 or 1, not '$CLIPPY'" ;; esac
step "build $CONFIG${clippy:+ with clippy}: started (log: $log)"
# A progress line every 200 objects, and the errors as they come.
if ! kmake "$obj" "${clippy[@]}" bzImage modules 2>&1 | tee "$log" |
	awk '/^  (CC|RUSTC|AR|LD)/ { if (++n % 200 == 0) printf "  ... %d objects\n", n; fflush() }
	     /error:|Error [0-9]/ { print; fflush() }'; then
	die "build $CONFIG failed (log: $log)"
fi
warnings=$(grep -cE '^warning' "$log" || true)
[ "$warnings" = 0 ] || step "build $CONFIG: $warnings warnings (grep -A12 '^warning' $log)"
step "build $CONFIG: $(du -h "$obj/arch/x86/boot/bzImage" | cut -f1) bzImage"
