#!/usr/bin/env bash
# `make bench`: build the perf kernel of the base (7.3.4 alone) and of the
# series, boot each with the same guest, run the deferred split workloads
# (scripts/guest/bench) and report base against series side by side.
# Results: build/bench/deferred-split.{json,md}.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

check_settings
out=$BUILD/bench
mkdir -p "$out"
"$TOP/scripts/image.sh"
for variant in base series; do
	export VARIANT=$variant
	step "bench: $variant kernel"
	"$TOP/scripts/tree.sh"
	CONFIG=perf "$TOP/scripts/config.sh"
	CONFIG=perf "$TOP/scripts/build.sh"
	CONFIG=perf MODE=bench "$TOP/scripts/boot.sh"
	cp "$BUILD/results/perf-bench/results.txt" "$out/$variant.txt"
done
"$TOP/scripts/bench_report.py" "$out/base.txt" "$out/series.txt" "$out/deferred-split"
