//! The wasm-bindgen exports, called with real JS values, in Node. `scripts/test.sh` runs it:
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner cargo test --target wasm32-unknown-unknown --test wasm_node`.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod wasm_common;

wasm_tests!(
    version_is_the_crate_version,
    decode_turn_event_table,
    decode_returns_the_canonical_event,
    encode_turn_event_round_trips,
    encode_turn_event_throws_a_clear_error,
    snapshot_cursor_accepts_only_newer_snapshots_of_its_session,
    snapshot_cursor_rejects_a_bad_session_id,
    decode_session_snapshot_table,
    resume_chat_session_table,
    resume_chat_session_throws_for_a_malformed_call,
);
wasm_tests!(async memory_session_storage_is_compare_and_set, memory_session_storage_rejects_bad_calls);
