//! JS-backed adapters of the ports (design §4, §8): a host passes plain JS objects
//! (`{ load, save }` stores, tools, models) and these types let the Rust shell call them
//! through the traits in `crate::ports`. Every host callback may return a value or a Promise;
//! a throw or a rejection becomes a `PortError` whose message is for logs only.
//!
//! - [`session_storage`] holds `JsSessionStorage` (the CAS envelope store).
//! - [`chat_memory`] holds `JsChatMemory`, and `MemoryChatMemory` behind `createMemoryChatMemory()`.
//! - [`tool`] holds `JsTool`.
//! - [`models`] holds `model_from_js`: the demo, OpenAI-compatible or host model adapter.
//! - `test_hooks` (feature `test-hooks`) holds wasm exports for the JS tests only (names start
//!   with `__`); only the Worker build (pkg-worker/) has them, never the npm package.

pub mod chat_memory;
pub mod http_log;
pub mod log_store;
pub mod models;
pub mod session_log;
pub mod session_storage;
#[cfg(feature = "test-hooks")]
pub mod test_hooks;
pub mod tool;

pub(crate) mod host;

pub use chat_memory::{
    create_memory_chat_memory, JsChatMemory, MemoryChatMemory, MemoryChatMemoryHandle,
};
pub use models::{model_from_js, DemoModel, JsModel, OpenAiModel};
pub use session_log::{JsSessionLog, MemorySessionLogHandle};
pub use session_storage::JsSessionStorage;
pub use tool::{tool_error_text, JsTool};
