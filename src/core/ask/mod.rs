//! The Ask service's decisions (`createAskServiceHandler`), wire-compatible with AgentsKit's
//! trusted Ask backend: every rule here, the order of steps in `src/web/ask/`.
//!
//! - [`site`]: the trusted site policy (backend-site v1 + turnkeep's `citations`), the
//!   corpus/persona hint check, subject and request ids.
//! - [`request`]: the client's `agentskit.chat.ask` v1 body; the latest question.
//! - [`session`]: the optional CAS session record; which history a turn runs on.
//! - [`sources`]: grounding (valid, policy-allowed, at most `maxSources`).
//! - [`answer`]: generator chunks, usage and the answer bound.
//! - [`events`]: the Ask NDJSON lines; [`diagnostic`]: the failure table.
//! - [`metric`]: privacy-safe metric records.
//! - [`bm25`]: the built-in local retriever; [`prompt`]: a chat model as generator.

pub mod answer;
pub mod bm25;
pub mod diagnostic;
pub mod events;
pub(crate) mod fields;
pub mod metric;
pub mod prompt;
pub mod request;
pub mod session;
pub mod site;
pub mod sources;
pub mod text;

pub use diagnostic::{AskFailure, AskRow};

use crate::limits::ASK_RETRY_AFTER_SECONDS_MAX;

/// The failure for a request whose signal fired: `ASK_TIMEOUT` when a deadline did, else the
/// client went away (`ASK_CANCELLED`).
pub fn aborted_failure(deadline_fired: bool) -> AskFailure {
    if deadline_fired {
        AskFailure::Timeout
    } else {
        AskFailure::Cancelled
    }
}

/// The `retry-after` header value for a rate limiter's `retryAfterSeconds`: whole seconds,
/// rounded up, at most a day; nothing for a value that is not a non-negative number.
pub fn retry_after_seconds(value: Option<f64>) -> Option<u64> {
    let v = value.filter(|v| v.is_finite() && *v >= 0.0)?;
    Some((v.ceil() as u64).min(ASK_RETRY_AFTER_SECONDS_MAX))
}
