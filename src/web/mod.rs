//! The wasm32 shell: wasm-bindgen exports over Web objects.
//!
//! Every export converts JS values at the boundary (`convert`), calls the pure core and maps
//! each outcome to a plain JS value. No Rust error or panic crosses the boundary as an opaque
//! trap: invalid input becomes a tagged `{ ok: false, error }` result or a JS `Error` whose
//! message says what was wrong.

mod convert;

use wasm_bindgen::prelude::*;

/// The crate version, so a host can check which build it loaded.
#[wasm_bindgen(js_name = version)]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
