/work/main/scripts/bench/tcg-plugin/build/tcg-plugin/release/deps/tcg_bench.d: src/lib.rs src/lines.rs src/marker.rs src/state.rs src/symbols.rs

/work/main/scripts/bench/tcg-plugin/build/tcg-plugin/release/deps/libtcg_bench.so: src/lib.rs src/lines.rs src/marker.rs src/state.rs src/symbols.rs

/work/main/scripts/bench/tcg-plugin/build/tcg-plugin/release/deps/libtcg_bench.rlib: src/lib.rs src/lines.rs src/marker.rs src/state.rs src/symbols.rs

src/lib.rs:
src/lines.rs:
src/marker.rs:
src/state.rs:
src/symbols.rs:
