//! A whole chat turn over the ports, host-independent: the same code runs under `cargo test`
//! (and the seeded simulation) and in wasm behind `createChatHandler`. A turn reads top to bottom
//! as four stages, each returning the value the next one takes:
//!
//! 1. [`admit`]: load and resume the session, decide and CAS-write the claim → [`Claim`]
//! 2. [`open`]: load the messages, send the input to the controller → [`Opened`]
//! 3. [`run`] (with [`Turn`]): drive the model and tools, stream states to the sender's
//!    [`TurnSink`], publish chunks to the session log ([`publish`]), watch the log for a stop
//!    request ([`stop_request`])
//! 4. then, inside [`run`], clean up once: save messages, release the lease → [`TurnEnd`]
//!
//! A tool confirmation resolved over HTTP ([`confirm::resolve`]) claims the decision and the
//! lease in one CAS and opens a continuation that runs through the same [`run`];
//! [`reconcile`] lets a host finish records a crashed continuation left behind.
//!
//! The shell (`src/web/chat`) only does what needs JavaScript: reading the request, calling the
//! host's callbacks, the response stream, and turning signals into [`interrupt::Cause`]s.
//!
//! Also here: the driver that performs the controller's actions ([`driver`]), the future
//! combinators everything awaits through ([`race`]), the sender's line encoder ([`snapshot`]),
//! the demo model and tools as port adapters ([`demo_model`]), and what the operator hears of an
//! ended turn, decided from its step log ([`steps`]): [`summary`], [`metrics`], [`spans`].

pub mod admit;
pub mod commit;
pub mod confirm;
pub mod context;
pub mod demo_model;
pub mod driver;
pub mod external;
pub mod fault;
pub mod follow;
pub mod interrupt;
pub mod lease;
pub mod metrics;
pub mod open;
pub mod publish;
pub mod queue;
pub mod race;
pub mod reconcile;
pub mod run;
pub mod send;
pub mod serial;
pub mod snapshot;
pub mod spans;
pub mod steps;
mod stop;
pub mod stop_request;
pub mod summary;

pub use admit::{abandon, admit, resume_refusal, Claim};
pub use commit::{commit_session, SaveFailure, Saved, SessionPorts, WriteBudget};
pub use confirm::{resolve, resolve_with, Resolution, ResolveRequest, SettleWait};
pub use context::{ChatSetup, MessageExtras, Ports, Submission, TurnLimits};
pub use demo_model::{DemoModel, DemoTool};
pub use driver::{begin_turn, drive_turn, run_turn, TurnPorts, TOOL_FAILED};
pub use fault::{Fault, FaultReport, IgnoreFaults, Refusal, Stage};
pub use interrupt::{Cause, Interrupt};
pub use lease::HeldLease;
pub use open::{open, Opened};
pub use queue::{admit_send, admit_send_with, DecideSend, SendRules};
pub use reconcile::{list_stuck, reconcile, ReconcileError};
pub use run::{run, Turn, TurnEnd, TurnSink};
pub use snapshot::{Line, LineCounts, LineEncoder};
pub use stop_request::{request_stop, request_stop_running, StopAnswer};
