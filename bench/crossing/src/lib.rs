use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

/// JS value -> serde_json::Value through JSON text (JSON.stringify + serde_json::from_str).
#[wasm_bindgen]
pub fn to_rust_text(value: &JsValue, n: u32) -> usize {
    let mut k = 0;
    for _ in 0..n {
        let text = js_sys::JSON::stringify(value).unwrap().as_string().unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        k += v.as_array().map_or(0, |a| a.len());
    }
    k
}

/// JS value -> serde_json::Value through serde-wasm-bindgen.
#[wasm_bindgen]
pub fn to_rust_swb(value: &JsValue, n: u32) -> usize {
    let mut k = 0;
    for _ in 0..n {
        let v: Value = serde_wasm_bindgen::from_value(value.clone()).unwrap();
        k += v.as_array().map_or(0, |a| a.len());
    }
    k
}

/// serde_json::Value -> JS value through JSON text (to_string + JSON.parse).
#[wasm_bindgen]
pub fn to_js_text(json: &str, n: u32) -> JsValue {
    let v: Value = serde_json::from_str(json).unwrap();
    let mut out = JsValue::NULL;
    for _ in 0..n {
        out = js_sys::JSON::parse(&v.to_string()).unwrap();
    }
    out
}

/// serde_json::Value -> JS value through serde-wasm-bindgen (plain objects, not Maps).
#[wasm_bindgen]
pub fn to_js_swb(json: &str, n: u32) -> JsValue {
    let v: Value = serde_json::from_str(json).unwrap();
    let ser = serde_wasm_bindgen::Serializer::json_compatible();
    let mut out = JsValue::NULL;
    for _ in 0..n {
        out = v.serialize(&ser).unwrap();
    }
    out
}
