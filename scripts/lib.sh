# shellcheck shell=bash
# Common helpers for the scripts of this repository; sourced, never run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
# shellcheck disable=SC2034 # used by the scripts that source this file
LOGS=$BUILD/logs
SECONDS_START=$(date +%s)

die() {
	printf '%s: error: %s\n' "$(basename "$0")" "$*" >&2
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
obj_dir() {
	if [ "$VARIANT" = base ]; then echo "$BUILD/obj-$1-base"; else echo "$BUILD/obj-$1"; fi
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

# make in the assembled tree with the project's toolchain.
kmake() {
	local o=$1
	shift
	make -C "$TREE" O="$o" LLVM=-19 CC="ccache clang-19" \
		RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc BINDGEN="$HOME/.cargo/bin/bindgen" \
		RUSTFMT=/usr/bin/rustfmt CLIPPY_DRIVER=/usr/bin/clippy-driver \
		-j"$(nproc)" "$@"
}

# Check the user's settings (make variables) before any work is done.
check_settings() {
	check_config_name "${CONFIG:-test}"
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
