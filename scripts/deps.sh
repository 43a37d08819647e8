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
	# The base's .tar.xz, the bzImage's CONFIG_KERNEL_XZ, and apt-get
	# download's keys for trixie-backports (base.sh).
	xz-utils debian-archive-keyring
	# Guest.
	qemu-system-x86 busybox-static bash-static
	# Static mm kselftests.
	gcc libc6-dev libcap-dev libnuma-dev liburing-dev
	# Series: checkpatch.pl's spdxcheck.py imports ply and git (GitPython).
	git perl python3-ply python3-git
	# Bench: plots, and mkfs.xfs for the guest's XFS; qemu-x86_64 for the
	# tests of the tcg-bench plugin (make plugin-test; the plugin itself
	# is built with cargo, which the bindgen-cli step below needs too).
	python3-matplotlib xfsprogs qemu-user
	# Host checks (make host-check, part of make check).
	python3-pytest shellcheck
)
# Another clang for the kernel builds (LLVM_VERSION=22: rustc's LLVM, for
# CONFIG_RUST_INLINE_HELPERS).
[ "$LLVM_VERSION" = 19 ] || PACKAGES+=("clang-$LLVM_VERSION" "lld-$LLVM_VERSION" "llvm-$LLVM_VERSION")
# make matrix (make deps MATRIX=1): for the arm64 entry qemu-system-arm,
# the cross gcc of its kselftests and initramfs tools, and Debian's arm64
# busybox-static and bash-static, unpacked into build/arm64-root
# (installing them would replace the host's amd64 ones).
# w1-sparse's sparse comes from scripts/sparse.sh (Debian 12's is too old
# for 7.3).
MATRIX_DEPS=${MATRIX:-0}
case $MATRIX_DEPS in 0 | '') MATRIX_DEPS=0 ;; *) MATRIX_DEPS=1 ;; esac
[ "$MATRIX_DEPS" = 0 ] || PACKAGES+=(qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
# make fstests (FSTESTS=<checkout>): fstests' build on the host, and what its
# tests run in the guest, whose root is the host's (scripts/fstests.sh).
[ -z "${FSTESTS:-}" ] || PACKAGES+=(autoconf automake libtool libtool-bin pkg-config
	libacl1-dev libattr1-dev libaio-dev libgdbm-dev libgdbm-compat-dev uuid-dev xfslibs-dev
	acl attr bc dump e2fsprogs fio gawk indent psmisc quota sqlite3 uuid-runtime xfsdump)
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

arm64_root=$BUILD/arm64-root
if [ "$MATRIX_DEPS" = 1 ] && { [ ! -x "$arm64_root/bin/busybox" ] || [ ! -x "$arm64_root/bin/bash-static" ]; }; then
	[ "$(id -u)" = 0 ] || die "the arm64 busybox-static and bash-static are missing from $arm64_root; run as root"
	step "apt: busybox-static and bash-static for arm64 into $arm64_root"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64
		apt-get update -q >"$LOGS/deps-apt.log" 2>&1 ||
			{ cat "$LOGS/deps-apt.log"; die "apt-get update failed"; }
	fi
	debs=$BUILD/.arm64-debs
	rm -rf "$debs" "$arm64_root" && mkdir -p "$debs" "$arm64_root"
	# As root, apt-get download warns that _apt cannot write here; harmless.
	(cd "$debs" && apt-get download -q busybox-static:arm64 bash-static:arm64) >"$LOGS/deps-apt.log" 2>&1 ||
		{ cat "$LOGS/deps-apt.log"; die "apt-get download of the arm64 packages failed"; }
	for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$arm64_root"; done
	rm -rf "$debs" "$LOGS/deps-apt.log"
	if [ ! -x "$arm64_root/bin/busybox" ] || [ ! -x "$arm64_root/bin/bash-static" ]; then
		die "no bin/busybox and bin/bash-static in the arm64 packages"
	fi
fi
