//! Host-independent adapters of the ports and their conformance suites.
//!
//! - [`memory::MemorySessionStorage`]: an in-process `SessionStorage` for tests and demos. It is
//!   not durable.
//! - [`conformance::check_session_storage`]: the suite every `SessionStorage` adapter must pass
//!   (the JS twin for JS-implemented adapters is `js/testing/session-storage-conformance.mjs`).

pub mod conformance;
pub mod memory;

pub use conformance::{check_session_storage, ConformanceReport};
pub use memory::MemorySessionStorage;
