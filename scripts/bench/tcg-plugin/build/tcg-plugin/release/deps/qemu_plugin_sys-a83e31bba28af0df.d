/work/main/scripts/bench/tcg-plugin/build/tcg-plugin/release/deps/qemu_plugin_sys-a83e31bba28af0df.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/qemu-plugin-sys-10.1.0-v2/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/qemu-plugin-sys-10.1.0-v2/src/bindings_v1.rs

/work/main/scripts/bench/tcg-plugin/build/tcg-plugin/release/deps/libqemu_plugin_sys-a83e31bba28af0df.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/qemu-plugin-sys-10.1.0-v2/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/qemu-plugin-sys-10.1.0-v2/src/bindings_v1.rs

/work/main/scripts/bench/tcg-plugin/build/tcg-plugin/release/deps/libqemu_plugin_sys-a83e31bba28af0df.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/qemu-plugin-sys-10.1.0-v2/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/qemu-plugin-sys-10.1.0-v2/src/bindings_v1.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/qemu-plugin-sys-10.1.0-v2/src/lib.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/qemu-plugin-sys-10.1.0-v2/src/bindings_v1.rs:
