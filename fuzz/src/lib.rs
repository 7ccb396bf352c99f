//! The fuzz targets of turnkeep as a library: each `targets::<name>::run(&[u8])` is one target.
//! `fuzz_targets/<name>.rs` hands it to libFuzzer; `tests/fuzz_targets.rs` in the main crate
//! compiles the same modules and replays the committed inputs plus a seeded random budget.

pub mod targets;
