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
set -euo pipefail
llvm_asked=${LLVM_VERSION:-}
. "$(dirname "$0")/lib.sh"

check_settings
BENCH=${BENCH:-all}
case $BENCH in all | deferred-split | reads) export BENCH ;;
*) die "unknown BENCH '$BENCH' (all, deferred-split, reads)" ;; esac
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
out=$BUILD/bench
mkdir -p "$out"
"$TOP/scripts/image.sh"
for variant in base series; do
	export VARIANT=$variant
	step "bench: $variant kernel"
	"$TOP/scripts/tree.sh"
	CONFIG=perf "$TOP/scripts/config.sh"
	CONFIG=perf "$TOP/scripts/build.sh"
	# The Rust-against-C unqueue microbenchmark (Kbuild), series kernel only.
	[ "$variant" = base ] || [ "$BENCH" = reads ] || CONFIG=perf "$TOP/scripts/module.sh"
	CONFIG=perf MODE=bench "$TOP/scripts/boot.sh"
	cp "$BUILD/results/perf-bench$([ "$variant" = base ] && echo -base)/results.txt" "$out/$variant.txt"
done
if [ "$BENCH" != reads ]; then
	"$TOP/scripts/bench_report.py" "$out/base.txt" "$out/series.txt" "$out/deferred-split"
fi
if [ "$BENCH" != deferred-split ]; then
	/usr/bin/python3 "$TOP/scripts/bench_reads_report.py" "$out/base.txt" "$out/series.txt" "$out/reads"
fi
# The committed results page: its hand-written head and the halves that ran.
case $BENCH in all) halves=(deferred-split reads) ;; *) halves=("$BENCH") ;; esac
"$TOP/scripts/bench_page.sh" "${halves[@]}"
