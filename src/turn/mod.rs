//! Host-independent async code around the pure core: the turn driver that runs one
//! [`ChatController`](crate::core::chat::ChatController) against the ports, and a demo model
//! adapter that plays the demo scripts. Nothing here knows JavaScript; it runs the same on the
//! host (tests, `futures::executor::block_on`) and in wasm.

pub mod demo_model;
pub mod driver;
mod stop;

pub use demo_model::{DemoModel, DemoTool};
pub use driver::{begin_turn, drive_turn, run_turn, TurnPorts, TOOL_FAILED};
