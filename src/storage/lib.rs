//! Host-independent adapters of the ports and their conformance suites.
//!
//! - [`memory::MemorySessionStorage`]: an in-process `SessionStorage` for tests and demos. It is
//!   not durable.
//! - [`conformance::check_session_storage`]: the suite every `SessionStorage` adapter must pass
//!   (the JS twin for JS-implemented adapters is `js/testing/session-storage-conformance.mjs`).
//! - [`log::StoreLog`]: the `SessionLog` port over any item store (producer fencing decided by
//!   `core::streams::item_log`), and [`log::MemoryLogStore`], its in-memory store (not durable).

pub mod conformance;
pub mod log;
pub mod memory;

pub use conformance::{check_session_storage, ConformanceReport};
pub use log::{LogStore, MemoryLogStore, MemorySessionLog, StoreLog};
pub use memory::{MemoryChatMemory, MemorySessionStorage};
