//! Reading the Worker's environment and drawing the randomness the Worker needs in Rust.

use wasm_bindgen::JsValue;
use worker::{Env, ObjectNamespace, Stub};

/// A plain setting (`[vars]` or a secret) as text: strings as they are, numbers and booleans
/// (wrangler.toml allows both) printed; absent or anything else is `None`.
pub fn setting(env: &Env, name: &str) -> Option<String> {
    let value = js_sys::Reflect::get(env.as_ref(), &JsValue::from_str(name)).ok()?;
    if let Some(text) = value.as_string() {
        return Some(text);
    }
    if let Some(n) = value.as_f64() {
        return Some(n.to_string());
    }
    value
        .as_bool()
        .map(|b| if b { "1".into() } else { "0".into() })
}

/// The stub of the object named `name` in the namespace bound as `binding`.
pub fn stub(env: &Env, binding: &str, name: &str) -> worker::Result<Stub> {
    let namespace: ObjectNamespace = env.durable_object(binding)?;
    namespace.id_from_name(name)?.get_stub()
}

/// A uniformly drawn number in `[low, high]` (crypto.getRandomValues, through getrandom).
pub fn random_in(low: u32, high: u32) -> u32 {
    let mut bytes = [0u8; 4];
    // getrandom's wasm backend only fails where crypto.getRandomValues is missing, which no
    // Workers runtime is; the low end is then a safe answer.
    if getrandom::fill(&mut bytes).is_err() {
        return low;
    }
    let span = u64::from(high.saturating_sub(low)) + 1;
    low + (u64::from(u32::from_le_bytes(bytes)) % span) as u32
}

/// A fresh random id: 128 bits as 32 lowercase hex digits (a SafeId).
pub fn random_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // Never on Workers (see `random_in`); a clock-derived id still keeps ids SafeIds.
        return format!("t{}", js_sys::Date::now() as u64);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
