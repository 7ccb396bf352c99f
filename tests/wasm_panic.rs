//! A panic inside the module reaches the JS caller as an `Error` naming the panic, not as an
//! opaque `RuntimeError: unreachable`. In its own file (its own wasm instance): after a panic
//! the instance stays "panicking" for good (the hook never returns), which is exactly why a
//! host must reload the module after one, and why it must not share an instance with other tests.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

use turnkeep::web;

#[wasm_bindgen_test]
fn a_panic_becomes_a_js_error_with_its_message() {
    web::install_panic_hook();
    let panicking = Closure::<dyn FnMut()>::new(|| panic!("boom in test"));
    let function: &js_sys::Function = panicking.as_ref().unchecked_ref();
    let thrown = function
        .call0(&JsValue::UNDEFINED)
        .expect_err("the panic must surface as a thrown Error");
    assert!(
        thrown.is_instance_of::<js_sys::Error>(),
        "a JS Error, not a RuntimeError trap"
    );
    let message = String::from(thrown.unchecked_ref::<js_sys::Error>().message());
    assert!(message.starts_with(web::PANIC_MESSAGE_PREFIX), "{message}");
    assert!(message.contains("boom in test"), "{message}");
    assert!(!thrown.is_instance_of::<js_sys::WebAssembly::RuntimeError>());
}
