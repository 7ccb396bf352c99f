//! Checks shared by the Node and browser wasm test files; each file runs them in its host.
#![allow(dead_code)]

pub fn version_is_the_crate_version() {
    assert_eq!(turnkeep::web::version(), env!("CARGO_PKG_VERSION"));
}
