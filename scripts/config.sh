#!/usr/bin/env bash
# Configure build/obj-<CONFIG>: tinyconfig + scripts/configs/base.config +
# scripts/configs/<CONFIG>.config (+ CONFIG_RUST_INLINE_HELPERS when
# LLVM_VERSION is rustc's LLVM major), then check that every option asked for
# is what the resulting .config says. The .config is replaced only when it
# changes, so an unchanged configuration keeps the build incremental.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CONFIG=${CONFIG:-test}
check_config_name "$CONFIG"
[ -f "$TREE/.assembled" ] || die "no assembled tree; run 'make tree' first"
need "clang-$LLVM_VERSION" "ld.lld-$LLVM_VERSION" /usr/bin/rustc "$HOME/.cargo/bin/bindgen"

KTOOLCHAIN=$(config_toolchain "$CONFIG")
export KTOOLCHAIN
[ "$KTOOLCHAIN" = llvm ] || need "$KTOOLCHAIN"
obj=$(obj_dir "$CONFIG")
tmp=$BUILD/.config-$CONFIG
rm -rf "$tmp" && mkdir -p "$tmp" "$obj" "$LOGS"
log=$LOGS/config-$CONFIG.log
# A fragment may start from another: a line "#include <name>.config".
# A line "#arch <ARCH>" (make matrix: i386, arm64) configures for that
# architecture; scripts/configs/arch/<ARCH>.config, where it exists, then
# replaces base.config. Without it: x86_64, as before.
arch=$(sed -n 's/^#arch \([a-z0-9_]*\)$/\1/p' "$TOP/scripts/configs/$CONFIG.config")
if [ -n "$arch" ]; then
	check_cross_arch "$arch"
	export ARCH=$arch
fi
if [ -n "$arch" ] && [ -f "$TOP/scripts/configs/arch/$arch.config" ]; then
	frags=("$TOP/scripts/configs/arch/$arch.config")
else
	frags=("$TOP/scripts/configs/base.config")
fi
parent=$(sed -n 's/^#include \([a-z0-9_-]*\.config\)$/\1/p' "$TOP/scripts/configs/$CONFIG.config")
if [ -n "$parent" ]; then
	[ -f "$TOP/scripts/configs/$parent" ] || die "$CONFIG.config includes $parent, which does not exist"
	frags+=("$TOP/scripts/configs/$parent")
fi
# The series' options before the configuration's own, which may turn
# some off where their dependencies cannot be met (rt: no THP).
[ "$VARIANT" = base ] || frags+=("$TOP/scripts/configs/series.config")
frags+=("$TOP/scripts/configs/$CONFIG.config")
# Rust and clang of one LLVM: the C helpers are inlined into the Rust code.
inline=
if [ "$(rustc_llvm_major)" = "$LLVM_VERSION" ] && grep -qx 'CONFIG_RUST=y' "${frags[@]}"; then
	inline=$BUILD/.config-inline-helpers
	printf 'CONFIG_EXPERT=y\nCONFIG_RUST_INLINE_HELPERS=y\n' >"$inline"
	frags+=("$inline")
fi

{
	kmake "$tmp" tinyconfig
	"$TREE/scripts/kconfig/merge_config.sh" -m -O "$tmp" "$tmp/.config" "${frags[@]}"
	kmake "$tmp" olddefconfig
} >"$log" 2>&1 || { tail -20 "$log"; die "configuring $CONFIG failed (log: $log)"; }

# Every option the fragments set must come out as set ("=n" as unset); the
# series' KUnit options only where KUnit is on, and its Rust options (those
# that depend on RUST) only where Rust is on.
skip='^$'
grep -q '^CONFIG_KUNIT=y' "$tmp/.config" || skip="$skip|_KUNIT_TEST "
grep -q '^CONFIG_RUST=y' "$tmp/.config" || skip="$skip|^CONFIG_(DEFERRED_SPLIT_RUST|RUST_|PAGE_RCU_FREE|FILEMAP_NOLOCK)"
# A later fragment overrides an earlier one: the last value counts.
bad=$(cat "${frags[@]}" | sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=\(.*\)$/\1 \2/p' |
	tac | awk '!seen[$1]++' | tac | grep -Ev "$skip" |
	while read -r opt val; do
		got=$(sed -n "s/^$opt=//p" "$tmp/.config")
		[ -n "$got" ] || got=n
		[ "$got" = "$val" ] || echo "$opt=$val (got $got)"
	done)
[ -z "$bad" ] || die "$CONFIG: options not as asked (missing dependency?): $(echo "$bad" | xargs)"

if cmp -s "$tmp/.config" "$obj/.config"; then
	step "config $CONFIG: unchanged"
else
	cp "$tmp/.config" "$obj/.config"
	step "config $CONFIG: written to $obj/.config"
fi
rm -rf "$tmp"
[ -z "$inline" ] || rm -f "$inline"
