//! JS-backed adapters of the ports (`crate::ports`): a host passes plain JS objects
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

// The stores, logs and tools are the chat server's (feature `server`); the model adapters are
// shared with the Ask service (feature `ask`), which answers with a chat model.
#[cfg(feature = "server")]
pub mod chat_memory;
#[cfg(feature = "server")]
pub mod http_log;
#[cfg(feature = "server")]
pub mod log_store;
#[cfg(any(feature = "server", feature = "ask"))]
pub mod models;
#[cfg(feature = "server")]
pub mod observers;
#[cfg(feature = "server")]
pub mod session_log;
#[cfg(feature = "server")]
pub mod session_storage;
#[cfg(feature = "test-hooks")]
pub mod test_hooks;
#[cfg(feature = "server")]
pub mod tool;

shared_helper! {
    pub(crate) mod host;
}

#[cfg(feature = "server")]
pub use chat_memory::{
    create_memory_chat_memory, JsChatMemory, MemoryChatMemory, MemoryChatMemoryHandle,
};
#[cfg(any(feature = "server", feature = "ask"))]
pub use models::{model_from_js, DemoModel, JsModel, OpenAiModel};
#[cfg(feature = "server")]
pub use session_log::{JsSessionLog, MemorySessionLogHandle};
#[cfg(feature = "server")]
pub use session_storage::JsSessionStorage;
#[cfg(feature = "server")]
pub use tool::{tool_error_text, JsTool, ToolRules};
