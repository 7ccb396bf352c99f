//! The wasm-bindgen exports, called with real JS values, in Node. `scripts/test.sh` runs it:
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner cargo test --target wasm32-unknown-unknown --test wasm_node`.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod wasm_common;

all_export_tests!();
