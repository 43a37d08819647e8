#!/usr/bin/env bash
# make matrix: build the series in the configurations and on the
# architectures the kernel test robot tries, and boot where an entry says
# so (issue 17). One line per entry in build/matrix.md and build/matrix.json
# (status, time, warnings, the series' Kconfig options that came out on).
#
#   MATRIX=a,b       only these entries (default: all but the optional ones)
#   MATRIX=list      list the entries and what each does
#   FORCE=1          redo entries that passed with the same tree and config
#   RANDCONFIG_N=3   randconfig builds (entries randconfig-1..N)
#   RANDCONFIG_SEEDS=0x1,0x2   their KCONFIG_SEEDs (default: picked once,
#                    kept in build/matrix/randconfig-<i>.seed)
#   W1_CONFIG=perf   the built configuration w1-sparse reuses (series and base)
#   MATRIX_TREE=0    use build/tree as it is (no scripts/tree.sh first)
#   CONFIGURE_ONLY=1 configure each entry and check its options, build and
#                    boot nothing (status "skip"): a minute an entry
#
# Resumable: an entry that passed is skipped while the hash of what it
# depends on (tree, fragments, entry, guest files) stays the same. Each
# entry's result is build/matrix/<entry>.json; the logs are build/logs/
# matrix-<entry>*.log. Exits 1 if an entry failed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

MATRIX=${MATRIX:-}
FORCE=${FORCE:-0}
case $FORCE in 0 | 1) ;; *) die "FORCE must be 0 or 1, not '$FORCE'" ;; esac
RANDCONFIG_N=${RANDCONFIG_N:-3}
[[ $RANDCONFIG_N =~ ^[0-9]+$ ]] || die "RANDCONFIG_N must be a number, not '$RANDCONFIG_N'"
# randconfig: the chance (percent) that a visible option is turned on; the
# default of `make randconfig` is 50, whose x86_64 builds take an hour here.
RANDCONFIG_PROBABILITY=${RANDCONFIG_PROBABILITY:-25}
W1_CONFIG=${W1_CONFIG:-perf}
CONFIGURE_ONLY=${CONFIGURE_ONLY:-0}
case $CONFIGURE_ONLY in 0 | 1) ;; *) die "CONFIGURE_ONLY must be 0 or 1, not '$CONFIGURE_ONLY'" ;; esac
out=$BUILD/matrix
mkdir -p "$out" "$LOGS"
# The kselftest skips that mean a boot did not test the series: the lockless
# reads off or not counted, no kprobe on flush_dcache_folio(), no PG_rcu_free.
FAIL_SKIP='lockless reads|no lockless|kprobe|rcu_free_deferred'

# The entries, in the order they run (cheap and likely to break first).
ENTRIES=(small nothp up i386 norcufree gcc rt kcsan arm64 w1-sparse)
for i in $(seq 1 "$RANDCONFIG_N"); do ENTRIES+=("randconfig-$i"); done
OPTIONAL=(test hmm) # only when MATRIX= names them

# Set the E_* variables of entry $1:
#   E_KIND   build | boot | sparse | randconfig
#   E_CONFIG scripts/configs/<name>.config
#   E_WHAT   one line for the table
#   E_WANT   options the resulting .config must have ("NAME=value ...")
#   E_TESTS  kselftests of the boot (TESTS=), E_SMP its vCPUs
#   E_ALLOW  why kernel log reports outside the series' code that match
#            E_ALLOW_MATCH (a regular expression over each report's block)
#            do not fail the entry; any other report does
entry() {
	E_KIND=build E_CONFIG='' E_WHAT='' E_WANT='' E_TESTS='' E_SMP=2 E_ALLOW='' E_ALLOW_MATCH='' E_FLAGS=()
	case $1 in
	small)
		E_CONFIG=matrix-small
		E_WHAT="x86_64, Rust; !NUMA !MEMCG !SWAP !CMA !MEMORY_FAILURE !MEMORY_HOTPLUG !DEBUG_FS; build"
		E_WANT="RUST=y DEFERRED_SPLIT_RUST=y PAGE_RCU_FREE=y NUMA=n MEMCG=n SWAP=n CMA=n MEMORY_FAILURE=n MEMORY_HOTPLUG=n DEBUG_FS=n"
		;;
	nothp)
		E_CONFIG=matrix-nothp
		E_WHAT="x86_64, Rust; !TRANSPARENT_HUGEPAGE !SHMEM, FUSE_FS MEMORY_HOTPLUG; build"
		E_WANT="RUST=y PAGE_RCU_FREE=y FILEMAP_NOLOCK_KUNIT_TEST=y TRANSPARENT_HUGEPAGE=n SHMEM=n FUSE_FS=y MEMORY_HOTPLUG=y"
		;;
	up)
		E_KIND=boot E_CONFIG=up E_SMP=1
		E_WHAT="x86_64, Rust; NR_CPUS=1 !SMP (FORCE_NR_CPUS, TINY_RCU) !NUMA; boot: the stresses"
		E_WANT="RUST=y DEFERRED_SPLIT_RUST=y PAGE_RCU_FREE=y SMP=n NR_CPUS=1 FORCE_NR_CPUS=y TINY_RCU=y NUMA=n"
		E_TESTS=pagecache_read_stress-tmpfs,rcu_free_test-quick
		;;
	i386)
		E_CONFIG=matrix-i386
		E_WHAT="i386 (PAE), no Rust: the C fallbacks; build, 0 warnings"
		E_WANT="X86_32=y RUST=n PAGE_RCU_FREE=n DEFERRED_SPLIT_RUST=n TRANSPARENT_HUGEPAGE=y"
		E_FLAGS=(--series-off --zero-warnings
			--need-symbol mm/folio.o:folio_batch_unqueue_deferred_split
			--need-symbol '!mm/filemap.o:filemap_read_nolock')
		;;
	norcufree)
		E_KIND=boot E_CONFIG=matrix-norcufree
		E_WHAT="x86_64, Rust, test kernel; PAGE_RCU_FREE=n, MGLRU on from boot; boot: KUnit, deferred_split_stress"
		E_WANT="RUST=y DEFERRED_SPLIT_RUST=y DEFERRED_SPLIT_RUST_KUNIT_TEST=y PAGE_RCU_FREE=n LRU_GEN_ENABLED=y"
		E_TESTS=deferred_split_stress
		E_SMP=4
		;;
	gcc)
		E_KIND=boot E_CONFIG=matrix-gcc
		E_WHAT="x86_64, GCC, no Rust, test kernel: the C unqueue and the C deferred free; boot: KUnit, the split, lockless-read and deferred-free tests"
		E_WANT="CC_IS_GCC=y RUST=n PAGE_RCU_FREE=y PAGE_RCU_FREE_RUST=n DEFERRED_SPLIT_RUST=n PAGE_RCU_FREE_KUNIT_TEST=y DEFERRED_SPLIT_KUNIT_TEST=y FILEMAP_NOLOCK_KUNIT_TEST=y KASAN=y"
		E_TESTS=split_huge_page_test,folio_split_race_test,deferred_split_stress,rcu_free_test,pagecache_read_stress-ext2,pagecache_read_stress-tmpfs,pagecache_read_stress-hugetmpfs,pagecache_split_read_test
		E_SMP=4
		;;
	rt)
		E_KIND=boot E_CONFIG=rt
		E_WHAT="x86_64, Rust, test kernel on PREEMPT_RT (DEBUG_ATOMIC_SLEEP); boot: KUnit, the stresses"
		E_WANT="RUST=y PREEMPT_RT=y DEBUG_ATOMIC_SLEEP=y PAGE_RCU_FREE=y PAGE_RCU_FREE_KUNIT_TEST=y FILEMAP_NOLOCK_KUNIT_TEST=y"
		E_TESTS=rcu_free_test-quick,pagecache_read_stress-tmpfs
		E_ALLOW="upstream 7.3.4's Rust spinlock tests are wrong on RT (README)"
		# The doctest, and the test module kernel::sync::lock::spinlock::tests
		# (its symbols v0-mangled: ...4sync4lock8spinlock5tests...).
		E_ALLOW_MATCH='rust_doctest_kernel_sync_lock_spinlock|4sync4lock8spinlock5tests'
		E_SMP=4
		;;
	kcsan)
		E_KIND=boot E_CONFIG=matrix-kcsan
		E_WHAT="x86_64, clang, Rust, KCSAN; boot: KUnit (filemap_nolock), the lockless-read stresses"
		E_WANT="RUST=y KCSAN=y KASAN=n PAGE_RCU_FREE=y FILEMAP_NOLOCK_KUNIT_TEST=y"
		E_TESTS=pagecache_read_stress-tmpfs,pagecache_read_stress-hugetmpfs,pagecache_read_stress-ext2,pagecache_split_read_test
		E_FLAGS=(--kcsan)
		E_SMP=4
		;;
	arm64)
		E_KIND=boot E_CONFIG=matrix-arm64
		E_WHAT="arm64, LLVM, Rust (ARCH_IMPLEMENTS_FLUSH_DCACHE_PAGE); boot (TCG): KUnit, pagecache_read_stress, flush_dcache_check"
		E_WANT="ARM64=y RUST=y DEFERRED_SPLIT_RUST=y PAGE_RCU_FREE=y FILEMAP_NOLOCK_KUNIT_TEST=y KPROBE_EVENTS=y"
		E_TESTS=pagecache_read_stress-tmpfs,pagecache_read_stress-ext2,flush_dcache_check-tmpfs,flush_dcache_check-ext2
		;;
	w1-sparse)
		E_KIND=sparse
		E_WHAT="W=1 and C=2 (sparse) over the series' .c files and mm/, base against series ($W1_CONFIG builds)"
		;;
	randconfig-[1-9]*)
		E_KIND=randconfig
		E_WHAT="x86_64 randconfig (KCONFIG_PROBABILITY=$RANDCONFIG_PROBABILITY), asking for RUST and the series' options (what came out on: next column)"
		E_WANT="RUST=y PAGE_RCU_FREE=y"
		;;
	hmm)
		E_KIND=boot E_CONFIG=matrix-hmm
		E_WHAT="x86_64, the test kernel with DEVICE_PRIVATE and TEST_HMM; boot: the migrate_vma deferred split reproducer (fails on its DEBUG_VM warnings without patches/fixes/, passes with FIXES=1)"
		E_WANT="ZONE_DEVICE=y DEVICE_PRIVATE=y TEST_HMM=y DEBUG_VM=y MEMCG=y TRANSPARENT_HUGEPAGE=y"
		E_TESTS=hmm_deferred_split_repro
		;;
	test)
		E_KIND=boot E_CONFIG=test E_SMP=4
		E_WHAT="x86_64, the test kernel of make check (MGLRU built in, on and off at run time); boot: every test"
		E_WANT="RUST=y DEFERRED_SPLIT_RUST=y PAGE_RCU_FREE=y LRU_GEN=y"
		;;
	*) return 1 ;;
	esac
}

list_entries() {
	local n
	for n in "${ENTRIES[@]}" "${OPTIONAL[@]}"; do
		entry "$n"
		printf '%-13s %-10s %s%s\n' "$n" "$E_KIND" "$E_WHAT" \
			"$(case " ${OPTIONAL[*]} " in *" $n "*) echo ' (optional)' ;; esac)"
	done
}

# The entries asked for, checked before any work.
if [ "$MATRIX" = list ]; then
	list_entries
	exit 0
fi
picked=()
if [ -z "$MATRIX" ]; then
	picked=("${ENTRIES[@]}")
else
	[[ $MATRIX =~ ^[a-z0-9,-]+$ ]] || die "MATRIX must be comma-separated entry names or 'list', not '$MATRIX'"
	for n in ${MATRIX//,/ }; do
		if [ "$n" = randconfig ]; then
			for i in $(seq 1 "$RANDCONFIG_N"); do picked+=("randconfig-$i"); done
			continue
		fi
		entry "$n" || die "MATRIX: no entry named '$n' (known: ${ENTRIES[*]} ${OPTIONAL[*]} randconfig; MATRIX=list)"
		picked+=("$n")
	done
fi
for n in "${picked[@]}"; do
	entry "$n"
	[ -z "$E_CONFIG" ] || check_config_name "$E_CONFIG"
	arch=$(sed -n 's/^#arch \([a-z0-9_]*\)$/\1/p' "$TOP/scripts/configs/${E_CONFIG:-test}.config")
	[ -z "$arch" ] || check_cross_arch "$arch" "$([ "$E_KIND" = boot ] && echo boot)"
done

# The tree (never FORCE=1 here: that would discard hand edits of build/tree);
# MATRIX_TREE=0 takes build/tree as it is.
[ "${MATRIX_TREE:-1}" = 0 ] || FORCE=0 "$TOP/scripts/tree.sh"
[ -f "$TREE/.assembled" ] || die "no assembled tree; run 'make tree' first"
# MATRIX_TREE=0 is for a tree edited by hand, which the hashes below cannot
# vouch for: every entry runs again.
[ "${MATRIX_TREE:-1}" = 1 ] || FORCE=1
# w1-sparse's sparse (built once, ~10 s), before any entry's work.
SPARSE_BIN=
for n in "${picked[@]}"; do
	entry "$n"
	if [ "$E_KIND" = sparse ] && [ "$CONFIGURE_ONLY" = 0 ] && [ -z "$SPARSE_BIN" ]; then
		# Without one, w1-sparse fails (scripts/sparse.sh says why); the
		# other entries run.
		SPARSE_BIN=$("$TOP/scripts/sparse.sh" | tail -n1) || SPARSE_BIN=none
	fi
done

# What an entry's result depends on: the assembled tree, its fragments, its
# definition and, for boots, the guest's files.
entry_hash() {
	local n=$1 f
	entry "$n"
	{
		echo "$n $E_KIND $E_CONFIG $E_WANT $E_TESTS $E_SMP $E_ALLOW $E_ALLOW_MATCH ${E_FLAGS[*]} llvm=$LLVM_VERSION"
		# What the tree holds now, not only what tree.sh last wrote.
		cat "$TREE/.assembled"
		(cd "$TREE" && awk '{print $2}' .series-manifest | xargs sha256sum)
		if [ -n "$E_CONFIG" ]; then
			for f in base series "$E_CONFIG" $(sed -n 's/^#include \([a-z0-9_-]*\)\.config$/\1/p' \
				"$TOP/scripts/configs/$E_CONFIG.config"); do
				cat "$TOP/scripts/configs/$f.config"
			done
			cat "$TOP"/scripts/configs/arch/*.config
		fi
		[ "$E_KIND" != boot ] || cat "$TOP"/scripts/guest/* "$TOP/scripts/kselftests.sh" "$TOP/scripts/image.sh"
		[ "$E_KIND" != randconfig ] || echo "seed=$(randconfig_seed "$n") p=$RANDCONFIG_PROBABILITY"
		if [ "$E_KIND" = sparse ]; then
			cat "$BUILD/tree-base/.assembled" 2>/dev/null || true
			echo "$W1_CONFIG"
		fi
		cat "$TOP/scripts/matrix.sh" "$TOP/scripts/matrix.py" "$TOP/scripts/lib.sh" \
			"$TOP/scripts/config.sh" "$TOP/scripts/boot.sh" "$TOP/scripts/results.py" "$TOP/scripts/sparse.sh"
		[ "$E_KIND" != randconfig ] || cat "$TOP/scripts/configs/series.config"
	} | sha256sum | cut -c1-16
}

# Build the kernel of build dir $1 into log $2 (the targets of its ARCH).
kbuild() {
	local obj=$1 log=$2 arch targets=(bzImage modules)
	arch=$(obj_arch "$obj")
	[ "$arch" = arm64 ] && targets=(Image modules)
	export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache}
	ccache -M 5G >/dev/null
	step "$n: building $(basename "$obj") ($arch; log: $log)"
	# The series' objects are compiled again every time, so that the log
	# holds their warnings (an incremental build would compile nothing of
	# them and count 0); matrix.py record checks that it did.
	local f
	for f in $("$TOP/scripts/matrix.py" series-objects); do
		rm -f "$obj/$f"
	done
	(
		[ "$arch" = x86_64 ] || export ARCH=$arch
		kmake "$obj" "${targets[@]}" 2>&1 | tee "$log" |
			awk '/^  (CC|RUSTC|AR|LD)/ { if (++k % 500 == 0) printf "  ... %d objects\n", k; fflush() }
			     /error:|Error [0-9]/ { print; fflush() }'
	)
}

# The initramfs of architecture $1, built when missing or older than its inputs.
guest_image() {
	if [ "$1" = arm64 ]; then
		ARCH=arm64 "$TOP/scripts/kselftests.sh"
		ARCH=arm64 "$TOP/scripts/image.sh"
	else
		"$TOP/scripts/kselftests.sh"
		"$TOP/scripts/image.sh"
	fi
}

# randconfig-<i>'s KCONFIG_SEED: RANDCONFIG_SEEDS, or picked once and kept.
randconfig_seed() {
	local i=${1#randconfig-} f=$out/$1.seed s
	if [ -n "${RANDCONFIG_SEEDS:-}" ]; then
		s=$(echo "$RANDCONFIG_SEEDS" | cut -d, -f"$i")
		[ -n "$s" ] || die "RANDCONFIG_SEEDS has no seed number $i"
		echo "$s"
		return
	fi
	[ -f "$f" ] || printf '0x%08x\n' "$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')" >"$f"
	cat "$f"
}

# What randconfig must give: the series' options, Rust and what Rust
# needs, and none of the big driver subsystems (the cost of a build here).
randconfig_allconfig() {
	local f=$out/randconfig.allconfig
	{
		grep -h '^CONFIG_.*=y$' "$TOP/scripts/configs/series.config"
		cat <<-'EOF'
			CONFIG_64BIT=y
			CONFIG_KUNIT=y
			CONFIG_RUST=y
			CONFIG_RUST_KUNIT_TESTS=y
			CONFIG_TRANSPARENT_HUGEPAGE=y
			CONFIG_MODVERSIONS=n
			CONFIG_RANDSTRUCT_NONE=y
			CONFIG_DEBUG_INFO_NONE=y
			CONFIG_COMPILE_TEST=n
			CONFIG_DRM=n
			CONFIG_SOUND=n
			CONFIG_MEDIA_SUPPORT=n
			CONFIG_STAGING=n
			CONFIG_WLAN=n
			CONFIG_WIRELESS=n
			CONFIG_INFINIBAND=n
			CONFIG_GCOV_KERNEL=n
		EOF
	} | sed 's/=n$/ is not set/; s/^\(CONFIG_[A-Z0-9_]*\) is not set$/# \1 is not set/' >"$f"
	echo "$f"
}

# Configure randconfig-<i>: its seed, then the next ones (seed+1, ...) while
# the result has Rust or PAGE_RCU_FREE off (at most 10 tries).
randconfig_config() {
	local n=$1 obj=$2 seed try allconfig
	seed=$(randconfig_seed "$n")
	allconfig=$(randconfig_allconfig)
	mkdir -p "$obj"
	for try in $(seq 0 9); do
		local s
		s=$(printf '0x%x' $((seed + try)))
		KCONFIG_SEED=$s KCONFIG_ALLCONFIG=$allconfig KCONFIG_PROBABILITY=$RANDCONFIG_PROBABILITY \
			kmake "$obj" randconfig >"$LOGS/matrix-$n-config.log" 2>&1 ||
			{ tail -5 "$LOGS/matrix-$n-config.log"; return 1; }
		if "$TOP/scripts/matrix.py" want "$obj/.config" "$E_WANT" >/dev/null; then
			R_SEED=$s R_TRIES=$try
			return 0
		fi
	done
	R_SEED=$seed R_TRIES=10
	return 1
}

# The W=1 and sparse warnings of tree $1 built in $2, over the files the
# series touches, into log $3.
w1_sparse_run() {
	local tree=$1 obj=$2 log=$3 files=() f
	for f in $(grep -h '^+++ b/.*\.c' "$TOP"/patches/*.patch | sed 's|^+++ b/||; s/[[:space:]].*//' | sort -u) \
		$(cd "$tree" && ls mm/*.c); do
		case $f in tools/*) continue ;; esac
		[ -f "$obj/${f%.c}.o" ] && [ -f "$tree/$f" ] && files+=("${f%.c}")
	done
	printf '%s\n' "${files[@]}" | sort -u >"$log.files"
	mapfile -t files <"$log.files"
	(cd "$obj" && rm -f "${files[@]/%/.s}") # a .s left by an interrupted run: W=1 would not compile it
	{
		# W=1: compile to assembly (the .o files stay as they are).
		TREE=$tree kmake "$obj" -k W=1 "${files[@]/%/.s}" || true
		# sparse on every file, built or not (C=2), without W=1.
		TREE=$tree kmake "$obj" -k C=2 CHECK="$SPARSE_BIN" "${files[@]/%/.o}" || true
	} >"$log" 2>&1
	(cd "$obj" && rm -f "${files[@]/%/.s}")
}

# The clang major version build directory $1 was configured with.
clang_of() {
	sed -n 's/^CONFIG_CLANG_VERSION=\([0-9]*\)[0-9]\{4\}$/\1/p' "$1/.config" 2>/dev/null
}

# The clang (LLVM_VERSION, else 19, else 22: make bench builds with 22)
# with which configuration $1 is built, as each variant $2... (series,
# base) asks: a vmlinux there, configured with that clang. Returns 1 if
# none is.
built_clang() {
	local cfg=$1 v var obj ok
	shift
	for v in "$LLVM_VERSION" 19 22; do
		ok=1
		for var in "$@"; do
			obj=$(VARIANT=$var LLVM_VERSION=$v obj_dir "$cfg")
			[ -f "$obj/vmlinux" ] && [ "$(clang_of "$obj")" = "$v" ] || ok=0
		done
		[ "$ok" = 1 ] && echo "$v" && return 0
	done
	return 1
}

# The series' added C files that only the test configuration builds (the
# KUnit cases mm/filemap.c #includes, the Rust helpers as an object where
# CONFIG_RUST_INLINE_HELPERS is off): W=1 and sparse over them in the test
# build of the series, into log $1; their stems into $1.files. The test
# build must exist with the clang it was built with (19 or 22); returns 1
# if there is none.
w1_sparse_added() {
	# Both, always: a test build without them (inlined helpers) fails the
	# coverage check rather than checking less.
	local log=$1 v tobj files=(mm/filemap rust/helpers/helpers)
	v=$(built_clang test series) || return 1
	tobj=$(VARIANT=series LLVM_VERSION=$v obj_dir test)
	printf '%s\n' "${files[@]}" >"$log.files"
	(cd "$tobj" && rm -f "${files[@]/%/.s}")
	{
		echo "w1-sparse: the test build $tobj (clang $v)"
		LLVM_VERSION=$v kmake "$tobj" -k W=1 "${files[@]/%/.s}" || true
		# rust/Makefile checks helpers.c only when it compiles helpers.o
		# (rule_rust_cc_library): compile it again, through the directory
		# rust/ (the single target is not reached).
		rm -f "$tobj/rust/helpers/helpers.o"
		LLVM_VERSION=$v kmake "$tobj" -k C=2 CHECK="$SPARSE_BIN" mm/filemap.o rust/ || true
	} >"$log" 2>&1
	(cd "$tobj" && rm -f "${files[@]/%/.s}")
}

run_entry() {
	local n=$1 t0 hash obj arch rc=0 rec=()
	entry "$n"
	hash=$(entry_hash "$n")
	local res=$out/$n.json
	if [ "$FORCE" = 0 ] && [ -f "$res" ] &&
		python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); sys.exit(0 if e["status"]=="pass" and e["hash"]==sys.argv[2] else 1)' "$res" "$hash"; then
		step "$n: passed before with the same tree and configuration; skipped (FORCE=1 redoes it)"
		python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); e["cached"]=True; open(sys.argv[1],"w").write(json.dumps(e,indent=1)+"\n")' "$res"
		return 0
	fi
	t0=$(date +%s)
	rm -f "$res" "$out/$n.wdiff.json"
	rec=(--name "$n" --kind "$E_KIND" --what "$E_WHAT" --hash "$hash" --want "$E_WANT" "${E_FLAGS[@]}")
	local log=$LOGS/matrix-$n.log fail='' skip=''
	case $E_KIND in
	build | boot)
		obj=$(obj_dir "$E_CONFIG")
		CONFIG=$E_CONFIG "$TOP/scripts/config.sh" || fail="configuration failed ($LOGS/config-$E_CONFIG.log)"
		rec+=(--config "$obj/.config")
		if [ -z "$fail" ]; then
			bad=$("$TOP/scripts/matrix.py" want "$obj/.config" "$E_WANT") || fail="options not as the entry needs: $bad"
		fi
		if [ -z "$fail" ]; then
			step "$n: series options: $("$TOP/scripts/matrix.py" options "$obj/.config" | grep '=y' | sed 's/=y//' | xargs)"
			[ "$CONFIGURE_ONLY" = 0 ] || skip="configured only (CONFIGURE_ONLY=1)"
		fi
		if [ -z "$fail$skip" ]; then
			kbuild "$obj" "$log" || fail="build failed ($log)"
			rec+=(--build-log "$log" --obj "$obj")
		fi
		if [ -z "$fail$skip" ]; then
			local s
			for s in "${E_FLAGS[@]}"; do
				case $s in *.o:*)
					local o=${s#!}
					o=${o%%:*}
					llvm-nm-"$LLVM_VERSION" --defined-only "$obj/$o" >"$out/$n.nm.${o//\//_}" 2>/dev/null || true
					rec+=(--nm "$o=$out/$n.nm.${o//\//_}") ;;
				esac
			done
		fi
		if [ -z "$fail$skip" ] && [ "$E_KIND" = boot ]; then
			arch=$(obj_arch "$obj")
			guest_image "$arch" || fail="guest image failed"
			if [ -z "$fail" ]; then
				local brc=0
				CONFIG=$E_CONFIG MODE=check TESTS=$E_TESTS SMP=$E_SMP "$TOP/scripts/boot.sh" || brc=$?
				local run=$BUILD/results/$E_CONFIG-check
				mkdir -p "$run"
				echo "$brc" >"$run/boot.rc"
				CONFIG=$E_CONFIG TESTS=$E_TESTS "$TOP/scripts/results.py" "$run" "$(TESTS=$E_TESTS "$TOP/scripts/tests.sh")" |
					tail -n 3 || true
				rec+=(--run "$run" --fail-skip "$FAIL_SKIP")
				[ -z "$E_ALLOW" ] || rec+=(--allow-elsewhere "$E_ALLOW" --allow-match "$E_ALLOW_MATCH")
			fi
		fi
		;;
	randconfig)
		obj=$BUILD/obj-matrix-$n
		if randconfig_config "$n" "$obj"; then
			rec+=(--config "$obj/.config" --seed "$R_SEED")
			[ "$R_TRIES" = 0 ] || rec+=(--note "seeds before $R_SEED left Rust or PAGE_RCU_FREE off")
			step "$n: KCONFIG_SEED=$R_SEED, series options: $("$TOP/scripts/matrix.py" options "$obj/.config" | grep '=y' | sed 's/=y//' | xargs)"
			if [ "$CONFIGURE_ONLY" = 1 ]; then
				skip="configured only (CONFIGURE_ONLY=1)"
			else
				kbuild "$obj" "$log" || fail="build failed ($log)"
				rec+=(--build-log "$log" --obj "$obj")
			fi
		else
			rec+=(--seed "$R_SEED")
			fail="no seed of 10 from $R_SEED kept Rust and PAGE_RCU_FREE on (log: $LOGS/matrix-$n-config.log)"
		fi
		;;
	sparse)
		# The $W1_CONFIG builds of base and series with this LLVM_VERSION,
		# else with the other clang (make bench builds them with 22).
		local sobj='' bobj='' w1v=''
		if w1v=$(built_clang "$W1_CONFIG" series base); then
			sobj=$(VARIANT=series LLVM_VERSION=$w1v obj_dir "$W1_CONFIG")
			bobj=$(VARIANT=base LLVM_VERSION=$w1v obj_dir "$W1_CONFIG")
		else
			skip="no $W1_CONFIG builds of base and series (w1-sparse reuses them: make bench builds both)"
		fi
		[ -f "$BUILD/tree-base/.assembled" ] || skip="no base tree build/tree-base (make bench assembles it)"
		[ -n "$skip" ] || [ "$CONFIGURE_ONLY" = 0 ] || skip="its builds are there; not run (CONFIGURE_ONLY=1)"
		[ -n "$skip" ] || [ "$SPARSE_BIN" != none ] || fail="no sparse that Linux 7.3 accepts (scripts/sparse.sh said why; SPARSE= names your own)"
		if [ -z "$fail$skip" ]; then
			step "$n: W=1 and sparse ($SPARSE_BIN) on base ($bobj)"
			LLVM_VERSION=$w1v w1_sparse_run "$BUILD/tree-base" "$bobj" "$LOGS/matrix-$n-base.log"
			step "$n: W=1 and sparse on the series ($sobj)"
			LLVM_VERSION=$w1v w1_sparse_run "$TREE" "$sobj" "$LOGS/matrix-$n-series.log"
			local added=()
			step "$n: W=1 and sparse over the added files the test configuration builds"
			if w1_sparse_added "$LOGS/matrix-$n-added.log"; then
				added=(--added "$LOGS/matrix-$n-added.log" --added-files "$LOGS/matrix-$n-added.log.files")
			else
				fail="no test build of the series (make build) to check the added files it alone builds (mm/tests/filemap_nolock_kunit.c)"
			fi
			"$TOP/scripts/matrix.py" wdiff "$LOGS/matrix-$n-base.log" "$LOGS/matrix-$n-series.log" \
				--base-files "$LOGS/matrix-$n-base.log.files" \
				--series-files "$LOGS/matrix-$n-series.log.files" "${added[@]}" \
				--out "$out/$n.wdiff.json" || true
			rec+=(--wdiff "$out/$n.wdiff.json"
				--note "$(wc -l <"$LOGS/matrix-$n-series.log.files") files ($LOGS/matrix-$n-series.log.files)")
		fi
		;;
	esac
	[ -z "$fail" ] || rec+=(--status fail --reason "$fail")
	[ -n "$fail" ] || [ -z "$skip" ] || rec+=(--status skip --reason "$skip")
	rec+=(--seconds $(($(date +%s) - t0)))
	"$TOP/scripts/matrix.py" record "$res" "${rec[@]}" || rc=1
	return $rc
}

failed=() skipped=()
for n in "${picked[@]}"; do
	run_entry "$n" || failed+=("$n")
	# An entry that could not run (its builds missing) did not pass.
	if [ "$CONFIGURE_ONLY" = 0 ] && grep -q '"status": "skip"' "$out/$n.json" 2>/dev/null; then
		skipped+=("$n")
	fi
	"$TOP/scripts/matrix.py" table "$out" --md "$BUILD/matrix.md" --json "$BUILD/matrix.json" \
		--order "$(IFS=,; echo "${ENTRIES[*]},${OPTIONAL[*]}")" >/dev/null
done
cat "$BUILD/matrix.md"
step "matrix: ${#picked[@]} entries, ${#failed[@]} failed${failed:+: ${failed[*]}}, ${#skipped[@]} not run${skipped:+: ${skipped[*]}} ($BUILD/matrix.md)"
[ ${#failed[@]} = 0 ] && [ ${#skipped[@]} = 0 ] || exit 1
