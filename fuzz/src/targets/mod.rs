//! Fuzz targets: each module's `run(&[u8])` feeds one decoder or decision of `turnkeep::core`
//! an input and checks properties beyond "does not panic" (round trips, agreement with a plain
//! reference, invariants over a sequence of requests). A broken property panics; libFuzzer
//! records the input as a crash, and the seeded test runner prints it.
//!
//! Inputs: raw bytes as the decoder would receive them, or, after a leading `0x01` byte,
//! bytes that drive structure-aware generation (see [`gen`]). Sequence targets (producer,
//! append) always generate.
//!
//! Shared by two builds: the `turnkeep-fuzz` crate (libFuzzer, `scripts/fuzz.sh`) and the main
//! crate's `tests/fuzz_targets.rs` (`cargo test`), which includes this directory by path. Use
//! only `turnkeep`, `serde_json`, `arbitrary` and std here.

pub mod gen;

pub mod openai_sse;
pub mod openai_stream;
pub mod session_envelope;
pub mod streams_append;
pub mod streams_headers;
pub mod streams_json_mode;
pub mod streams_offset;
pub mod streams_producer;
pub mod turn_event;

/// Every target by name: the names of `fuzz_targets/*.rs`, of `scripts/fuzz.sh TARGET`, and
/// of the input folders `fuzz/seeds/<name>/` and `fuzz/regressions/<name>/`.
pub const TARGETS: &[(&str, fn(&[u8]))] = &[
    ("turn_event", turn_event::run),
    ("session_envelope", session_envelope::run),
    ("streams_offset", streams_offset::run),
    ("streams_headers", streams_headers::run),
    ("streams_json_mode", streams_json_mode::run),
    ("streams_producer", streams_producer::run),
    ("streams_append", streams_append::run),
    ("openai_sse", openai_sse::run),
    ("openai_stream", openai_stream::run),
    // ("projection", projection::run): the session stream projection reducer
    // (src/core/projection, issue 8) gets its target here once it lands: fold generated event
    // sequences, cut and replayed at any point, and check the projection equals the one of the
    // whole sequence. Add `fuzz_targets/projection.rs` and its [[bin]] in fuzz/Cargo.toml.
];
