# shellcheck shell=bash
# Common helpers for the scripts of this repository; sourced, never run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
# shellcheck disable=SC2034 # used by the scripts that source this file
LOGS=$BUILD/logs
SECONDS_START=$(date +%s)

# set -e ends a script at a failed command without a word (a CI run once
# ended "make: *** [kselftests] Error 1" and nothing else): say which. A
# die in a subshell (x=$(f), a pipeline) has said why already: it exits
# 97, and the script then exits 1 without a second line.
# shellcheck disable=SC2154 # rc is set in the trap
trap 'rc=$?; [ "$rc" != 97 ] || exit 1; printf "%s: error: line %s: \`%s\` failed (exit %s)\n" "$(basename "$0")" "$LINENO" "$BASH_COMMAND" "$rc" >&2' ERR

die() {
	printf '%s: error: %s\n' "$(basename "$0")" "$*" >&2
	[ "$BASH_SUBSHELL" = 0 ] || exit 97
	exit 1
}

# A progress line with the time elapsed since the script started.
step() {
	printf '[%4ds] %s\n' "$(($(date +%s) - SECONDS_START))" "$*"
}

need() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 ||
			die "'$tool' not found; run 'make deps' first"
	done
}

# The kernel tree assembled by scripts/tree.sh, and the build directory of
# a configuration.
# VARIANT=series (default) is the patched tree; VARIANT=base is the same
# base without the series, for `make bench`.
VARIANT=${VARIANT:-series}
case $VARIANT in
series) TREE=$BUILD/tree ;;
base) TREE=$BUILD/tree-base ;;
*) die "unknown VARIANT '$VARIANT' (series, base)" ;;
esac
# LLVM_VERSION: the clang/LLVM the kernels are built with (default 19).
# With the LLVM major of rustc (rustc-web 1.96: 22), config.sh turns on
# CONFIG_RUST_INLINE_HELPERS; builds of another LLVM go to their own
# directories (obj-<config>[-base]-llvm<N>).
LLVM_VERSION=${LLVM_VERSION:-19}

obj_dir() {
	local d=$BUILD/obj-$1
	[ "$VARIANT" = base ] && d+=-base
	[ "$LLVM_VERSION" = 19 ] || d+=-llvm$LLVM_VERSION
	echo "$d"
}

# The LLVM major version rustc is built with.
rustc_llvm_major() {
	/usr/bin/rustc --version --verbose 2>/dev/null | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p'
}

# Known configurations: scripts/configs/<name>.config on top of base.config.
check_config_name() {
	local known=() f
	for f in "$TOP"/scripts/configs/*.config; do
		f=$(basename "$f" .config)
		case $f in base | series) ;; *) known+=("$f") ;; esac
	done
	if [ "$1" = base ] || [ "$1" = series ] || [ ! -f "$TOP/scripts/configs/$1.config" ]; then
		die "unknown CONFIG '$1' (known: ${known[*]})"
	fi
}

# A build killed in the middle (a session's end, ^C, a timeout) can leave a
# .cmd file cut short, and Kbuild then stops at it in every later build
# ("unterminated call to function 'wildcard'"). kmake marks a build
# directory while make runs in it; if the mark is still there, the last
# build was killed: the targets whose .cmd files it wrote are removed, so
# that they are built again.
kmake_mend() {
	local o=$1 mark=$1/.kmake-running n=0 cmd
	[ -e "$mark" ] || return 0
	while IFS= read -r -d '' cmd; do
		local t=${cmd%.cmd}
		rm -f "$cmd" "${t%/*}/${t##*/.}"
		n=$((n + 1))
	done < <(find "$o" -name '.*.cmd' -newer "$mark" -print0)
	echo "kmake: the last build in $o was interrupted; $n targets it was writing are built again" >&2
	rm -f "$mark"
}

# The compiler a configuration asks for: a line "#toolchain gcc" in
# scripts/configs/<name>.config (make matrix: the GCC build that 0-day and
# syzbot make) builds it with gcc and binutils; without it, with
# clang-$LLVM_VERSION and LLVM.
config_toolchain() {
	local t
	t=$(sed -n 's/^#toolchain \([a-z]*\)$/\1/p' "$TOP/scripts/configs/$1.config")
	case ${t:-llvm} in llvm | gcc) echo "${t:-llvm}" ;; *) die "$1.config: unknown #toolchain '$t' (llvm, gcc)" ;; esac
}

# make in the assembled tree with the project's toolchain: KTOOLCHAIN (gcc
# or llvm) where set, else the one the build directory was configured
# with (CONFIG_CC_IS_GCC), else LLVM.
kmake() {
	local o=$1 rc=0 tc=${KTOOLCHAIN:-} compiler
	shift
	mkdir -p "$o"
	kmake_mend "$o"
	if [ -z "$tc" ]; then
		tc=llvm
		! grep -qx 'CONFIG_CC_IS_GCC=y' "$o/.config" 2>/dev/null || tc=gcc
	fi
	if [ "$tc" = gcc ]; then
		compiler=(CC="ccache gcc")
	else
		compiler=(LLVM=-"$LLVM_VERSION" CC="ccache clang-$LLVM_VERSION")
	fi
	touch "$o/.kmake-running"
	make -C "$TREE" O="$o" "${compiler[@]}" \
		RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc BINDGEN="$HOME/.cargo/bin/bindgen" \
		RUSTFMT=/usr/bin/rustfmt CLIPPY_DRIVER=/usr/bin/clippy-driver \
		-j"$(nproc)" "$@" || rc=$?
	rm -f "$o/.kmake-running"
	return $rc
}

# The Debian mirror this machine's apt already uses (empty if none): the
# private apt configurations of scripts/base.sh and scripts/sparse.sh fetch
# from it, and nothing under /etc is touched.
debian_mirror() {
	local m
	m=$(grep -hoE '^URIs:[[:space:]]*[^[:space:]]+/debian/?$' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | awk '{print $2}')
	[ -n "$m" ] || m=$(grep -hoE '^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?[^[:space:]]+/debian/?[[:space:]]' \
		/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '{print $NF}' | head -n1)
	echo "$m"
}

# VERSION of the mail series (make series, make series-b4): a positive number.
# select_series PLAN_DIR: the series of the plan that scripts/mail_plan.py
# parsed into PLAN_DIR, in order, into the array all; those SERIES= asks
# for (all of them without it) into the array selected. An unknown SERIES
# dies naming the plan's.
# shellcheck disable=SC2034 # all and selected are for the caller
select_series() {
	mapfile -t all < <(awk '{ print $1 }' "$1/series")
	selected=("${all[@]}")
	if [ -n "${SERIES:-}" ]; then
		printf '%s\n' "${all[@]}" | grep -qxF -- "$SERIES" ||
			die "unknown SERIES '$SERIES' (patches/mail.plan has: ${all[*]})"
		selected=("$SERIES")
	fi
}

series_version() {
	local v=${VERSION:-1}
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "VERSION must be a positive number, not '$v'"
	echo "$v"
}

# The base as a git repository: $BUILD/series-git, one commit tagged
# series-base (`make series` builds the mail series on it, `make edit` clones
# it). Imported from the base tree $1 when missing or made from another base.
series_git_import() {
	local base=$1 repo=$BUILD/series-git
	local marker=$BUILD/series-git.base # outside the repository: series.sh runs `git clean -x`
	if [ ! -f "$marker" ] || [ "$(cat "$marker")" != "$base" ] || [ ! -d "$repo/.git" ]; then
		step "series: importing the base into $repo"
		rm -rf "$repo"
		cp -a "$base" "$repo"
		rm -f "$repo/.unpacked"
		git -C "$repo" init -q
		git -C "$repo" add -A -f
		git -C "$repo" -c user.name=base -c user.email=base@localhost \
			commit -q -m "Linux 7.3.4 (the base of the series)"
		git -C "$repo" tag -f series-base >/dev/null
		echo "$base" >"$marker"
	fi
}

# Check the user's settings (make variables) before any work is done.
check_settings() {
	check_config_name "${CONFIG:-test}"
	[[ $LLVM_VERSION =~ ^[1-9][0-9]*$ ]] || die "LLVM_VERSION must be a clang major version (19, 22), not '$LLVM_VERSION'"
	case ${ACCEL:-auto} in auto | kvm | tcg) ;; *) die "unknown ACCEL '$ACCEL' (auto, kvm, tcg)" ;; esac
	[[ ${SMP:-2} =~ ^[1-9][0-9]*$ ]] || die "SMP must be a positive number of vCPUs, not '$SMP'"
	[[ ${MEM:-2G} =~ ^[1-9][0-9]*[MG]$ ]] || die "MEM must look like 2G or 1536M, not '$MEM'"
	[[ ${TIMEOUT:-1} =~ ^[1-9][0-9]*$ ]] || die "TIMEOUT must be a number of seconds, not '$TIMEOUT'"
	[[ ${TESTS:-} =~ ^[A-Za-z0-9_,*.-]*$ ]] || die "TESTS must be comma-separated test names, not '$TESTS'"
	[ -z "${TESTS:-}" ] || "$TOP/scripts/tests.sh" >/dev/null
	[ -z "${KERNEL_SRC:-}" ] || [ -z "${KERNEL_TARBALL:-}" ] ||
		die "set KERNEL_SRC or KERNEL_TARBALL, not both"
	[ -z "${KERNEL_SRC:-}" ] || [ -d "$KERNEL_SRC" ] || die "KERNEL_SRC=$KERNEL_SRC is not a directory"
	[ -z "${KERNEL_TARBALL:-}" ] || [ -f "$KERNEL_TARBALL" ] || die "KERNEL_TARBALL=$KERNEL_TARBALL: no such file"
}

# The architecture a configured build directory is for (its .config):
# x86_64, i386 or arm64 (make matrix builds the last two).
obj_arch() {
	local c=$1/.config
	if grep -qx 'CONFIG_ARM64=y' "$c" 2>/dev/null; then
		echo arm64
	elif grep -qx 'CONFIG_X86_32=y' "$c" 2>/dev/null; then
		echo i386
	else
		echo x86_64
	fi
}

# The kernel image of a build directory, by architecture.
obj_image() {
	case $(obj_arch "$1") in
	arm64) echo "$1/arch/arm64/boot/Image" ;;
	*) echo "$1/arch/x86/boot/bzImage" ;;
	esac
}

# One clear line, before any work, when the tools for architecture $1 are
# missing; with "boot" as $2, also those to boot it and to build its
# initramfs (make deps MATRIX=1 installs them).
check_cross_arch() {
	local arch=$1 t
	case $arch in
	x86_64 | i386) return 0 ;;
	arm64)
		if [ "${2:-}" = boot ]; then
			for t in qemu-system-aarch64 aarch64-linux-gnu-gcc; do
				command -v "$t" >/dev/null 2>&1 ||
					die "ARCH=arm64: '$t' not found (qemu-system-arm, gcc-aarch64-linux-gnu); run 'make deps MATRIX=1'"
			done
			[ -x "$BUILD/arm64-root/bin/busybox" ] ||
				die "ARCH=arm64: no arm64 busybox in $BUILD/arm64-root; run 'make deps MATRIX=1'"
		fi
		;;
	*) die "unknown ARCH '$arch' (x86_64, i386, arm64)" ;;
	esac
}

# The tcg-bench QEMU plugin (scripts/bench/tcg-plugin): built with cargo
# into $BUILD/tcg-plugin (incremental), then loaded once by a QEMU without
# a machine. Succeeds, or prints the one-line reason why not.
tcg_plugin_ready() {
	local so=$BUILD/tcg-plugin/release/libtcg_bench.so cargo
	cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
	mkdir -p "$LOGS"
	if ! CARGO_TARGET_DIR=$BUILD/tcg-plugin "$cargo" build --release --quiet \
		--manifest-path "$TOP/scripts/bench/tcg-plugin/Cargo.toml" >"$LOGS/tcg-plugin.log" 2>&1; then
		echo "the tcg-bench plugin did not build ($LOGS/tcg-plugin.log)"
		return 1
	fi
	if ! echo quit | timeout 30 qemu-system-x86_64 -machine none -display none -monitor stdio \
		-plugin "$so" >"$LOGS/plugin-probe.log" 2>&1; then
		echo "QEMU does not load the plugin ($(grep -m1 '^qemu-system' "$LOGS/plugin-probe.log" | cut -c1-100))"
		return 1
	fi
}
