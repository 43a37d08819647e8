#!/usr/bin/env bash
# Install what the build, the guest and the tests need, if it is missing.
# Idempotent and quiet when nothing is missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PACKAGES=(
	# Kernel build with LLVM and Rust.
	clang-19 lld-19 llvm-19 libclang-19-dev
	rustc-web rust-web-src rust-web-clippy rustfmt-web
	make flex bison bc cpio kmod libelf-dev libssl-dev python3 ccache quilt
	# Guest.
	qemu-system-x86 busybox-static bash-static
	# Static mm kselftests.
	gcc libc6-dev libcap-dev libnuma-dev liburing-dev
	# Series.
	git perl python3-ply
	# Bench: plots, and mkfs.xfs for the guest's XFS.
	python3-matplotlib xfsprogs
)
# Another clang for the kernel builds (LLVM_VERSION=22: rustc's LLVM, for
# CONFIG_RUST_INLINE_HELPERS).
[ "$LLVM_VERSION" = 19 ] || PACKAGES+=("clang-$LLVM_VERSION" "lld-$LLVM_VERSION" "llvm-$LLVM_VERSION")
BINDGEN_VERSION=0.73.0

mkdir -p "$LOGS"
missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}); run as root"
	step "apt: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >"$LOGS/deps-apt.log" 2>&1 ||
		{ cat "$LOGS/deps-apt.log"; die "apt-get update failed"; }
	apt-get install -y -q --no-install-recommends "${missing[@]}" \
		>>"$LOGS/deps-apt.log" 2>&1 ||
		{ tail -20 "$LOGS/deps-apt.log"; die "apt-get install failed"; }
	rm -f "$LOGS/deps-apt.log"
fi

bindgen=$HOME/.cargo/bin/bindgen
if ! "$bindgen" --version 2>/dev/null | grep -q "^bindgen $BINDGEN_VERSION"; then
	cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
	[ -x "$cargo" ] || die "cargo not found (needed to install bindgen-cli); install Rust with rustup"
	step "cargo: installing bindgen-cli $BINDGEN_VERSION"
	"$cargo" install --locked --quiet bindgen-cli --version "$BINDGEN_VERSION" ||
		die "cargo install bindgen-cli failed"
fi
