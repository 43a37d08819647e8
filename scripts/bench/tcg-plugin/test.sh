#!/usr/bin/env bash
# Tests of the tcg-bench QEMU plugin: its unit tests (cargo test), then
# user-space programs with known instruction counts and known cache-line
# sharing under qemu-x86_64 (Debian's qemu-user 7.2, plugin API v1).
# Prints "ok"/"not ok" per test and "N passed, N failed".
#
# Environment: TCG_PLUGIN_OUT (default: build/tcg-plugin at the top of the
# repository) holds the cargo target directory, the test programs and the
# reports; CC (default gcc, else clang-19).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=${TCG_PLUGIN_OUT:-$top/build/tcg-plugin}
mkdir -p "$out/bin" "$out/results"
out=$(cd "$out" && pwd)	# the cargo and test steps run from $here

for tool in cargo qemu-x86_64 python3 nm; do
	command -v "$tool" >/dev/null || {
		echo "test.sh: $tool missing (qemu-x86_64: apt-get install qemu-user)" >&2
		exit 1
	}
done
cc=${CC:-$(command -v gcc || command -v clang-19)}

export CARGO_TARGET_DIR=$out
cd "$here"
cargo build --release --quiet
plugin=$out/release/libtcg_bench.so

unit_failed=0
if cargo test --release --quiet >"$out/results/cargo-test.log" 2>&1; then
	unit=$(grep -o '[0-9]* passed' "$out/results/cargo-test.log" | head -1)
	echo "ok - cargo test: $unit"
else
	unit_failed=1
	echo "not ok - cargo test (see $out/results/cargo-test.log)"
fi

for t in icount sharing; do
	"$cc" -O2 -static -no-pie -pthread -o "$out/bin/$t" "$here/tests/$t.c"
done

rc=0
python3 "$here/tests/run.py" "$plugin" "$out/bin" "$out/results" | tee "$out/results/run.log" || rc=$?
passed=$(awk '/^[0-9]+ passed, [0-9]+ failed$/ { print $1 }' "$out/results/run.log")
failed=$(awk '/^[0-9]+ passed, [0-9]+ failed$/ { print $3 }' "$out/results/run.log")
passed=$((${passed:-0} + 1 - unit_failed))
failed=$((${failed:-1} + unit_failed))
echo "total: $passed passed, $failed failed"
[ "$rc" = 0 ] && [ "$unit_failed" = 0 ]
