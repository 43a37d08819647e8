#!/usr/bin/env bash
# `make bench`: build the perf kernel of the base (7.3.4 alone) and of the
# series, boot each with the same guest, run the deferred split workloads
# (scripts/guest/bench; on the series kernel also the unqueue_bench
# module, Rust against C) and the page cache read workloads
# (scripts/guest/bench-reads; on the series kernel with the lockless reads
# on and off in the same boot), and report base against series side by
# side. Results: build/bench/deferred-split.{json,md} and
# build/bench/reads.{json,md,png}, and the committed page
# scripts/bench/results.md (scripts/bench_page.sh).
#
# COUNT=insn|c2c: the same kernels, booted with the tcg-bench QEMU plugin
# (boot.sh PLUGIN=) and the guest's counting workloads instead: insn,
# exact instructions per operation under -icount, 1 vCPU, one thread, 3
# rounds; c2c, cache-line transfers per operation under MTTCG with
# C2C_VCPUS vCPUs (2 and 4), one thread per vCPU. Results:
# build/bench/count/<variant>-<count>[-<vcpus>]/ (the runs) and
# build/bench/count-<count>.{md,json} (scripts/bench_count_report.py), and
# their section of scripts/bench/results.md. Once both count-insn.json and
# count-c2c.json are there, the model of scripts/bench_model.py projects
# them onto the seed's machine: build/bench/model.{md,json} and its section.
set -euo pipefail
llvm_asked=${LLVM_VERSION:-}
. "$(dirname "$0")/lib.sh"

check_settings
BENCH=${BENCH:-all}
case $BENCH in all | deferred-split | reads) export BENCH ;;
*) die "unknown BENCH '$BENCH' (all, deferred-split, reads)" ;; esac
COUNT=${COUNT:-}
case $COUNT in '' | insn | c2c) ;; *) die "unknown COUNT '$COUNT' (insn, c2c)" ;; esac
C2C_VCPUS=${C2C_VCPUS:-2 4}
# Both kernels with rustc's LLVM where its clang is installed: the Rust code
# then inlines the C helpers (CONFIG_RUST_INLINE_HELPERS), as it would in a
# kernel built for speed. LLVM_VERSION=19 measures without.
if [ -z "$llvm_asked" ]; then
	major=$(rustc_llvm_major)
	if command -v "clang-$major" >/dev/null && command -v "ld.lld-$major" >/dev/null; then
		LLVM_VERSION=$major
	else
		step "bench: no clang-$major (rustc's LLVM): LLVM_VERSION=19, the Rust code calls the C helpers ('make deps LLVM_VERSION=$major')"
	fi
fi
export LLVM_VERSION
# The counts need the plugin: if it does not build or load, say so in one
# line and measure as without COUNT (the timed workloads), before any build.
if [ -n "$COUNT" ] && ! why_not=$(tcg_plugin_ready); then
	step "bench: COUNT=$COUNT: $why_not; the bench goes on without the counts (timed workloads)"
	COUNT=
fi
out=$BUILD/bench
mkdir -p "$out"
runs=()
"$TOP/scripts/image.sh"
# With COUNT, a third kernel: the series with its C implementations
# (perf-c.config: the C deferred free and the C batch unqueue), so that the
# counts show Rust and C side by side (C_VARIANT=0 leaves it out).
variants=(base series)
[ -z "$COUNT" ] || [ "${C_VARIANT:-1}" = 0 ] || variants+=(series-c)
for variant in "${variants[@]}"; do
	cfg=perf
	if [ "$variant" = series-c ]; then
		export VARIANT=series
		cfg=perf-c
	else
		export VARIANT=$variant
	fi
	step "bench: $variant kernel"
	"$TOP/scripts/tree.sh"
	CONFIG=$cfg "$TOP/scripts/config.sh"
	CONFIG=$cfg "$TOP/scripts/build.sh"
	# The Rust-against-C unqueue microbenchmark (Kbuild), series kernel only.
	[ "$variant" != series ] || [ "$BENCH" = reads ] || CONFIG=perf "$TOP/scripts/module.sh"
	run=$BUILD/results/$cfg-bench$([ "$variant" != base ] || echo -base)
	if [ -z "$COUNT" ]; then
		CONFIG=$cfg MODE=bench "$TOP/scripts/boot.sh"
		cp "$run/results.txt" "$out/$variant.txt"
		continue
	fi
	# The counting boots: a copy of each run (without the System.map).
	if [ "$COUNT" = insn ]; then smps=1; else smps=$C2C_VCPUS; fi
	for smp in $smps; do
		name=$variant-$COUNT$([ "$COUNT" = insn ] || echo "-$smp")
		rm -rf "${out:?}/count/$name"
		# A boot that fails (a timeout, a crash) loses its counts alone.
		if ! CONFIG=$cfg MODE=bench PLUGIN=$COUNT SMP=$smp TIMEOUT=${TIMEOUT:-3600} "$TOP/scripts/boot.sh"; then
			step "bench: $name: the boot failed ($run/console.log); its counts are left out"
			continue
		fi
		mkdir -p "$out/count/$name"
		find "$run" -maxdepth 1 -type f ! -name symbols.map -exec cp {} "$out/count/$name/" \;
		runs+=("$out/count/$name")
	done
done
if [ -n "$COUNT" ]; then
	[ ${#runs[@]} != 0 ] || die "bench: COUNT=$COUNT: no boot finished; results.md unchanged"
	/usr/bin/python3 "$TOP/scripts/bench_count_report.py" --need-both "$out/count-$COUNT" "${runs[@]}"
	halves=("count-$COUNT")
	if [ -f "$out/count-insn.json" ] && [ -f "$out/count-c2c.json" ]; then
		if /usr/bin/python3 "$TOP/scripts/bench_model.py" "$out/count-insn.json" "$out/count-c2c.json" "$out/model"; then
			halves+=(model)
		else
			step "bench: no model from these counts (above); the page keeps its model section"
		fi
	fi
	"$TOP/scripts/bench_page.sh" "${halves[@]}"
	exit 0
fi
if [ "$BENCH" != reads ]; then
	"$TOP/scripts/bench_report.py" "$out/base.txt" "$out/series.txt" "$out/deferred-split"
fi
if [ "$BENCH" != deferred-split ]; then
	/usr/bin/python3 "$TOP/scripts/bench_reads_report.py" "$out/base.txt" "$out/series.txt" "$out/reads"
fi
# The committed results page: its hand-written head and the halves that ran.
case $BENCH in all) halves=(deferred-split reads) ;; *) halves=("$BENCH") ;; esac
"$TOP/scripts/bench_page.sh" "${halves[@]}"
