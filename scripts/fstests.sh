#!/usr/bin/env bash
# `make fstests`: fstests (xfstests) in the guest on the base kernel (7.3.4
# alone) and on the series, with the same configuration (CONFIG=fstests:
# test.config's KASAN, lockdep and PROVE_RCU, plus 9p, XFS and ACLs), one
# boot each, every file system of FSTESTS_FS in turn (scripts/guest/fstests,
# MODE=fstests). scripts/fstests_report.py compares them test by test: a
# test that passes on base and not on the series fails the target, named;
# tests failing on both are listed as the base's, with the reason; tests
# not run are listed with fstests' reason. As kvm-xfstests does it: one
# command, a VM, a table of results.
#
# The guest's root is the host's own /, read-only over virtio-9p, with
# tmpfs over the places programs write: fstests is a bash suite that runs
# bash, perl, awk, xfs_io (on every file system), mkfs, fsck, fio, attr,
# acl..., so it needs a whole distribution. This way there is no root image
# to build (debootstrap) or download (kvm-xfstests' root_fs): the tools are
# the user's distribution's, as `make deps` installed them, the same
# versions a user of this machine tests with, and the fstests programs,
# built on the host (build/fstests-src), run in the guest against the
# libraries they were linked with. virtme-ng boots kernels the same way.
# The fstests copy and the results directory are two more 9p shares; the
# test and scratch devices are sparse raw images on virtio disks.
#
#   FSTESTS=dir             an xfstests-dev checkout (never modified: it is
#                           copied to build/fstests-src and built there,
#                           again only when the checkout changed)
#   FSTESTS_FS=tmpfs,ext4,xfs   the file systems, each a check run   [all three]
#   FSTESTS_GROUP=g,g       fstests groups (their _begin_fstest tags; tests of
#                           generic/ and of the file system's own directory),
#                           or `pagecache` or `pagecache-short` (below)  [pagecache]
#   FSTESTS_TESTS=t,t       these tests (generic/075, xfs/013) instead
#   FSTESTS_EXCLUDE=x,x     tests (generic/013) or groups (stress) left out
#   FSTESTS_VARIANTS=base,series  which kernels to boot (a run left out is
#                           compared from its last results)
#   FSTESTS_TEST_LIMIT=s    a test running longer is killed, with all it
#                           started, and fails as a timeout (in the guest)  [1800]
#   FSTESTS_TIMEOUT=s       a boot's limit [1800 + 600 per test and file system]
#   FSTESTS_DISK_SIZE=nG    the test and the scratch disk (sparse)  [5G]
#   MEM=, SMP=, ACCEL=      as for every boot (MEM: 4G here: two 1G tmpfs)
#
# `pagecache`, the default selection: the generic tests that read the page
# cache against other operations, and finish under TCG with KASAN (all are
# in fstests' `quick` group but 418; left out: the long fsx and fsstress
# runs, 127 and 363 of 100000 operations and the stress, soak and long_rw
# groups; reflink (clone), dedupe and the tests that need dm targets,
# shutdown, swap or an fsgqa user, which notrun here):
#   fsx and fsstress: 075 (buffered and mmap), 091 (direct I/O against
#     buffered), 112 (AIO), 263 (direct I/O against sub-block buffered I/O),
#     469 and 499 (fsx sequences that read past EOF through mmap after
#     truncate, zero and collapse range), 013 (fsstress)
#   mmap: 029 (mapped writes against truncate), 246, 247 (direct I/O
#     against mmap), 248 (pwrite from a mapping of the same page), 346
#     (mmap against write races), 567 (mapped writes against punch), 647,
#     729 (reads and writes faulting on the same file), 708 (direct I/O
#     into a faulting mapping), 443 (writev faulting mid-iovec)
#   punch, zero, collapse: 008, 031, 439, 446 (punch against mixed direct
#     and mapped I/O)
#   truncate: 014 (truncfile), 393;  splice: 249, 591;
#   copy_file_range: 430, 431
#   direct and buffered I/O: 418 (page cache invalidation), 451 (buffered
#     reads against AIO direct writes), 465; read around EOF: 450
#
# `pagecache-short`: the twelve of them whose checks verify the data read
# (fsx: 075, 091, 263, 469, 499; the mapped and direct I/O tests 029, 247,
# 418, 451, 729; splice 591, copy_file_range 430): 20-30 min a file system
# and kernel here under TCG with KASAN (generic/247 alone about 9 min: 500
# xfs_io processes), so tmpfs and ext4 for both kernels fit an hour when
# the two boots run side by side (FSTESTS_VARIANTS=base and =series at
# once, below), the three file systems about 1.5 h.
#
# The two kernels' runs may be started at the same time (two make fstests,
# FSTESTS_VARIANTS=base and FSTESTS_VARIANTS=series, once both kernels are
# built): each boot has its own disks and results. A fstests guest keeps
# about one host CPU busy, so on 2 CPUs that halves the wall time.
#
# Results: build/results/fstests-{base,series}/ (the guest writes fstests'
# results/ there as it runs: <fs>/check.log, result.xml, .out.bad, .full,
# .notrun; and the boot's results.txt, console.log, boot.rc) and
# build/fstests.{md,json}; the last line is "fstests: N passed, N failed".
#
# --check: only check the settings (make runs it before the kselftests
# build, so that a bad setting costs no build); --list: print the tests
# each file system would run, and stop.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DEFAULT_TESTS=(
	generic/075 generic/091 generic/112 generic/263 generic/469 generic/499 generic/013
	generic/029 generic/246 generic/247 generic/248 generic/346 generic/567 generic/647
	generic/729 generic/708 generic/443
	generic/008 generic/031 generic/439 generic/446
	generic/014 generic/393 generic/249 generic/591 generic/430 generic/431
	generic/418 generic/451 generic/465 generic/450
)
SHORT_TESTS=(
	generic/029 generic/075 generic/091 generic/247 generic/263 generic/418
	generic/430 generic/451 generic/469 generic/499 generic/591 generic/729
)
KNOWN_FS=(tmpfs ext4 xfs)

# named_tests NAME: the tests of a named selection (pagecache,
# pagecache-short), a line each; false for a name that is not one.
named_tests() {
	case $1 in
	pagecache) printf '%s\n' "${DEFAULT_TESTS[@]}" ;;
	pagecache-short) printf '%s\n' "${SHORT_TESTS[@]}" ;;
	*) return 1 ;;
	esac
}

mode=run
case ${1:-} in
--check) mode=check ;;
--list) mode=list ;;
'') ;;
*) die "usage: fstests.sh [--check|--list]" ;;
esac

CONFIG=${CONFIG:-fstests}
[ "$CONFIG" = fstests ] || die "make fstests builds CONFIG=fstests (scripts/configs/fstests.config), not CONFIG=$CONFIG"
export CONFIG
export MEM=${MEM:-4G}
check_settings

# The checkout.
[ -n "${FSTESTS:-}" ] ||
	die "no FSTESTS=: make fstests FSTESTS=<path to an xfstests-dev checkout> (git clone git://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git)"
[ -d "$FSTESTS" ] || die "FSTESTS=$FSTESTS is not a directory"
FSTESTS=$(cd "$FSTESTS" && pwd)
for f in check common/rc; do
	[ -f "$FSTESTS/$f" ] || die "FSTESTS=$FSTESTS is not an xfstests-dev checkout (no $f)"
done
[ -d "$FSTESTS/tests/generic" ] || die "FSTESTS=$FSTESTS is not an xfstests-dev checkout (no tests/generic)"

# split_setting NAME VALUE: the comma-separated words of VALUE (a setting), each
# matching the extended regex $3, into the array words.
split_setting() {
	local w
	words=()
	IFS=, read -ra words <<<"$2"
	for w in "${words[@]}"; do
		[[ $w =~ $3 ]] || die "$1: '$w' is not $4"
	done
}

split_setting FSTESTS_FS "${FSTESTS_FS:-tmpfs,ext4,xfs}" '^[a-z0-9]+$' "a file system name"
fss=()
for f in "${words[@]}"; do
	[[ " ${KNOWN_FS[*]} " == *" $f "* ]] || die "FSTESTS_FS: unknown file system '$f' (${KNOWN_FS[*]})"
	[[ " ${fss[*]} " != *" $f "* ]] || die "FSTESTS_FS: '$f' twice"
	fss+=("$f")
done
[ ${#fss[@]} != 0 ] || die "FSTESTS_FS: no file system"
split_setting FSTESTS_VARIANTS "${FSTESTS_VARIANTS:-base,series}" '^[a-z]+$' "a variant"
variants=()
for v in "${words[@]}"; do
	case $v in base | series) ;; *) die "FSTESTS_VARIANTS: unknown '$v' (base, series)" ;; esac
	[[ " ${variants[*]} " != *" $v "* ]] || die "FSTESTS_VARIANTS: '$v' twice"
	variants+=("$v")
done
[ ${#variants[@]} != 0 ] || die "FSTESTS_VARIANTS: no variant"
limit=${FSTESTS_TEST_LIMIT:-1800}
[[ $limit =~ ^[1-9][0-9]*$ ]] || die "FSTESTS_TEST_LIMIT must be a number of seconds, not '$limit'"
[[ ${FSTESTS_TIMEOUT:-1} =~ ^[1-9][0-9]*$ ]] || die "FSTESTS_TIMEOUT must be a number of seconds, not '$FSTESTS_TIMEOUT'"
disk_size=${FSTESTS_DISK_SIZE:-5G}
[[ $disk_size =~ ^[1-9][0-9]*G$ ]] || die "FSTESTS_DISK_SIZE must look like 5G, not '$disk_size'"
TEST_RE='^[a-z0-9]+/[0-9]{3}[A-Za-z0-9-]*$'
GROUP_RE='^[a-z0-9_-]+$'
split_setting FSTESTS_TESTS "${FSTESTS_TESTS:-}" "$TEST_RE" "a test (generic/075)"
tests=("${words[@]}")
split_setting FSTESTS_GROUP "${FSTESTS_GROUP:-pagecache}" "$GROUP_RE" "a group (rw, pagecache, pagecache-short)"
groups=("${words[@]}")
[ ${#groups[@]} != 0 ] || [ ${#tests[@]} != 0 ] || die "FSTESTS_GROUP: no group"
split_setting FSTESTS_EXCLUDE "${FSTESTS_EXCLUDE:-}" "$TEST_RE|$GROUP_RE" "a test (generic/013) or a group (stress)"
excludes=("${words[@]}")

# Every test of the checkout with its groups, a line each:
# "<dir>/<name> <group>...", from the _begin_fstest lines (fstests since
# 2021), else from tests/<dir>/group (before).
catalog() {
	local d
	for d in "$FSTESTS"/tests/*/; do
		d=${d%/}
		d=${d##*/}
		if grep -qs '^_begin_fstest' "$FSTESTS/tests/$d"/[0-9][0-9][0-9]*; then
			grep -s -m1 -H '^_begin_fstest' "$FSTESTS/tests/$d"/[0-9][0-9][0-9]* |
				awk -v d="$d" '{
					n = $0; sub(/:_begin_fstest.*/, "", n); sub(/.*\//, "", n)
					if (n ~ /\./) next
					t = $0; sub(/^[^:]*:_begin_fstest[ \t]*/, "", t); sub(/[ \t]*#.*/, "", t)
					print d "/" n, t }'
		elif [ -f "$FSTESTS/tests/$d/group" ]; then
			awk -v d="$d" '!/^#/ && NF >= 1 { l = d "/" $1; for (i = 2; i <= NF; i++) l = l " " $i; print l }' \
				"$FSTESTS/tests/$d/group"
		fi
	done
}
cat_file=$(mktemp)
trap 'rm -f "$cat_file"' EXIT
catalog >"$cat_file"
[ -s "$cat_file" ] || die "FSTESTS=$FSTESTS: no tests found under tests/"
have_test() { grep -q "^$1 \|^$1\$" "$cat_file"; }
have_group() { awk -v g="$1" '{ for (i = 2; i <= NF; i++) if ($i == g) f = 1 } END { exit !f }' "$cat_file"; }
for t in "${tests[@]}"; do
	have_test "$t" || die "FSTESTS_TESTS: no test $t in $FSTESTS/tests"
	d=${t%%/*}
	[ "$d" = generic ] || [[ " ${fss[*]} " == *" $d "* ]] ||
		die "FSTESTS_TESTS: $t runs on $d only, which FSTESTS_FS (${fss[*]}) does not have"
done
for g in "${groups[@]}"; do
	named_tests "$g" >/dev/null || have_group "$g" || die "FSTESTS_GROUP: no test of $FSTESTS is in group '$g'"
done
for x in "${excludes[@]}"; do
	if [[ $x == */* ]]; then
		have_test "$x" || die "FSTESTS_EXCLUDE: no test $x in $FSTESTS/tests"
	else
		have_group "$x" || die "FSTESTS_EXCLUDE: no test of $FSTESTS is in group '$x'"
	fi
done

# The tests of file system $1, in check's order (sorted by number).
select_tests() {
	local fs=$1
	{
		if [ ${#tests[@]} != 0 ]; then
			printf '%s\n' "${tests[@]}"
		else
			for g in "${groups[@]}"; do
				if named=$(named_tests "$g"); then
					for t in $named; do
						! have_test "$t" || echo "$t"
					done
				else
					awk -v g="$g" '{ for (i = 2; i <= NF; i++) if ($i == g) { print $1; next } }' "$cat_file"
				fi
			done
		fi
	} | awk -v fs="$fs" -F/ '$1 == "generic" || $1 == fs' | while read -r t; do
		local x drop=0
		for x in "${excludes[@]}"; do
			if [[ $x == */* ]]; then
				[ "$t" != "$x" ] || drop=1
			elif awk -v t="$t" -v g="$x" '$1 == t { for (i = 2; i <= NF; i++) if ($i == g) f = 1 } END { exit !f }' "$cat_file"; then
				drop=1
			fi
		done
		[ $drop = 1 ] || echo "$t"
	done | sort -t/ -k1,1 -k2,2n -u
}
# A file system without tests is left out (check without tests would run
# its whole auto group).
declare -A lists
total=0
empty=()
for fs in "${fss[@]}"; do
	lists[$fs]=$(select_tests "$fs" | xargs)
	n=$(wc -w <<<"${lists[$fs]}")
	total=$((total + n))
	[ "$n" != 0 ] || empty+=("$fs")
done
[ "$total" != 0 ] || die "no test left to run (FSTESTS_GROUP, FSTESTS_TESTS, FSTESTS_EXCLUDE)"
kept=()
for fs in "${fss[@]}"; do
	[[ " ${empty[*]} " == *" $fs "* ]] || kept+=("$fs")
done
fss=("${kept[@]}")
missing=()
if [ ${#tests[@]} = 0 ] && [[ " ${groups[*]} " == *" pagecache "* ]]; then
	for t in "${DEFAULT_TESTS[@]}"; do have_test "$t" || missing+=("$t"); done
fi
timeout=${FSTESTS_TIMEOUT:-$((1800 + 600 * total))}
# QEMU's option syntax has no quoting for these paths (QEMU_ARGS is split
# on white space, a comma separates options).
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
[[ $BUILD != *[[:space:],]* ]] || die "BUILD=$BUILD: a path with white space or a comma cannot be shared with QEMU"
[ $mode != check ] || exit 0
if [ $mode = list ]; then
	for fs in "${fss[@]}"; do echo "$fs: ${lists[$fs]}"; done
	exit 0
fi

# The host's tools, which the guest runs (make deps installs them).
need qemu-system-x86_64 make gcc autoconf libtoolize tar truncate xfs_io perl awk
[[ " ${fss[*]} " != *" ext4 "* ]] || need mkfs.ext4 e2fsck
[[ " ${fss[*]} " != *" xfs "* ]] || need mkfs.xfs xfs_repair
for fs in "${fss[@]}"; do
	step "fstests: $fs: $(wc -w <<<"${lists[$fs]}") tests"
done
[ ${#empty[@]} = 0 ] || step "fstests: no test for ${empty[*]}: not run"
[ ${#missing[@]} = 0 ] || step "fstests: not in this checkout (older than the default selection): ${missing[*]}"

# The fstests copy: the checkout as it is (without .git), built with its
# own make; copied and built again only when a file of the checkout
# changed (names, sizes and times), never built in the checkout.
src=$BUILD/fstests-src
stamp=$BUILD/fstests-src.stamp
mkdir -p "$LOGS"
fingerprint=$(cd "$FSTESTS" && find . -path ./.git -prune -o -type f -printf '%P %s %T@\n' |
	LC_ALL=C sort | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$FSTESTS $fingerprint" ] || [ ! -x "$src/ltp/fsx" ]; then
	step "fstests: copying $FSTESTS to $src and building it (log: $LOGS/fstests-build.log)"
	rm -rf "$src" "$stamp"
	mkdir -p "$src"
	tar -C "$FSTESTS" --exclude=./.git -cf - . | tar -C "$src" -xf -
	make -C "$src" -j"$(nproc)" >"$LOGS/fstests-build.log" 2>&1 ||
		{ tail -n 15 "$LOGS/fstests-build.log"; die "building fstests failed (log: $LOGS/fstests-build.log; 'make deps' installs what it needs)"; }
	[ -x "$src/ltp/fsx" ] || die "fstests built no ltp/fsx (log: $LOGS/fstests-build.log)"
	echo "$FSTESTS $fingerprint" >"$stamp"
else
	step "fstests: $src is up to date"
fi

# The guest: the series' initramfs (/kselftest/fstests is the same for
# both kernels).
"$TOP/scripts/tree.sh"
"$TOP/scripts/image.sh"
conf_list() {
	local fs
	for fs in "${fss[@]}"; do
		printf "FSTESTS_LIST_%s='%s'\n" "$fs" "${lists[$fs]}"
	done
}
for v in "${variants[@]}"; do
	export VARIANT=$v
	step "fstests: $v kernel ($CONFIG), $total tests on ${fss[*]}"
	"$TOP/scripts/tree.sh"
	"$TOP/scripts/config.sh"
	"$TOP/scripts/build.sh"
	# Fresh disks and results for every boot: both kernels start alike.
	res=$BUILD/results/fstests-$v
	disks=$BUILD/fstests-disks-$v
	rm -rf "$res" "$disks"
	mkdir -p "$res" "$disks"
	truncate -s "$disk_size" "$disks/test.img" "$disks/scratch.img"
	{
		echo "# make fstests (scripts/fstests.sh): what the guest runs"
		echo "FSTESTS_VARIANT=$v"
		echo "FSTESTS_FS='${fss[*]}'"
		conf_list
		echo "FSTESTS_TEST_LIMIT=$limit"
		echo "FSTESTS_TEST_DEV=/dev/vda"
		echo "FSTESTS_SCRATCH_DEV=/dev/vdb"
	} >"$res/guest.conf"
	# The host's root (multidevs=remap: it spans several file systems,
	# whose inode numbers would collide), the fstests copy, the results;
	# the test disk is the first virtio disk (vda), the scratch disk vdb.
	QEMU_ARGS="-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	QEMU_ARGS+=" -virtfs local,path=$src,mount_tag=fstests,security_model=none,readonly=on"
	QEMU_ARGS+=" -virtfs local,path=$res,mount_tag=fstres,security_model=none"
	QEMU_ARGS+=" -drive file=$disks/test.img,if=virtio,format=raw,cache=unsafe"
	QEMU_ARGS+=" -drive file=$disks/scratch.img,if=virtio,format=raw,cache=unsafe"
	QEMU_ARGS=$QEMU_ARGS MODE=fstests TIMEOUT=$timeout "$TOP/scripts/boot.sh" ||
		step "fstests: the $v boot did not finish; its results so far are compared"
	# What boot.sh kept of the boot goes beside fstests' results.
	run=$BUILD/results/$CONFIG-fstests
	[ "$v" = base ] && run+=-base
	for f in results.txt console.log boot.rc qemu.rc guest.txt; do
		[ ! -f "$run/$f" ] || mv "$run/$f" "$res/$f"
	done
	rmdir "$run" 2>/dev/null || true
	rm -rf "$disks"
done
rm -f "$cat_file"
trap - EXIT
# The verdict, its line last (exec: a failing verdict is no error of this
# script's).
exec /usr/bin/python3 "$TOP/scripts/fstests_report.py" "$BUILD/fstests" \
	"$BUILD/results/fstests-base" "$BUILD/results/fstests-series"
