//! The same checks as `wasm_node`, in headless Chromium (driven by /usr/bin/chromedriver).
#![cfg(target_arch = "wasm32")]

mod wasm_common;

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn version_is_the_crate_version() {
    wasm_common::version_is_the_crate_version();
}
