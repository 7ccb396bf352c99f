//! The same checks as `wasm_node.rs`, in headless Chromium (the runner drives
//! /usr/bin/chromium through `CHROMEDRIVER=/usr/bin/chromedriver`).
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod wasm_common;

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

all_export_tests!();
