//! Panics become JS `Error`s with a message, not opaque traps.
//!
//! A panic is a bug (inputs are validated into typed errors first). On wasm32 a panic aborts:
//! the module traps and the caller sees only `RuntimeError: unreachable`. The hook installed at
//! instantiation throws a JS `Error` naming the panic instead, so the host's logs say what broke.
//! Nothing is recovered: the instance may hold half-updated state, and since the hook never
//! returns, Rust's panic count stays raised, so a second panic traps without a message. A host
//! should treat the module as poisoned after the first one and reload it.

/// Prefix of every message thrown for a panic (hosts can match on it).
pub const PANIC_MESSAGE_PREFIX: &str = "turnkeep internal error (a bug, please report it): ";

/// Replaces the panic hook with one that throws `Error(PANIC_MESSAGE_PREFIX + panic info)`.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        // Throwing unwinds the wasm frames as a JS exception; the abort after the hook never runs.
        wasm_bindgen::throw_str(&format!("{PANIC_MESSAGE_PREFIX}{info}"));
    }));
}
