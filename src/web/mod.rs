//! The wasm32 shell: wasm-bindgen exports over Web objects.
