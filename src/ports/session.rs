//! SessionStorage: the CAS port for the session envelope (AgentsKit's `SessionStorage` shape).
//!
//! The contract every adapter must keep (checked by `turnkeep_storage::conformance`):
//! - `load(session_id)` returns the stored snapshot (an object, or the same as JSON text), or
//!   `None` when the session was never saved.
//! - `save(snapshot, None)` creates the record only if none exists for `snapshot.sessionId`;
//!   it returns `false` when one does.
//! - `save(snapshot, Some(c))` writes only if a record exists and its stored `cursor` equals
//!   `c`; otherwise it returns `false` and leaves the record unchanged.
//! - The compare and the write are one atomic step: of any number of concurrent saves with the
//!   same expected cursor, exactly one returns `true`.
//!
//! Last-write-wins storage is **not** conformant: it lets two turns both believe they hold the
//! lease, and lets a reclaimed writer overwrite newer state. `Err` is for failures of the store
//! itself (unreachable, threw); a lost race is `Ok(false)`, never an error.

use serde_json::Value;

use super::{CancelToken, LocalFuture, PortError};

/// Durable, compare-and-set storage of session envelopes, keyed by `sessionId`.
pub trait SessionStorage {
    /// The stored snapshot of `session_id`, or `None` when absent. `cancel` fires when the
    /// caller no longer wants the answer (the store may give up early).
    fn load<'a>(
        &'a self,
        session_id: &'a str,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>>;

    /// Stores `snapshot` (a full envelope whose `sessionId` names the record) if the stored
    /// cursor equals `expected_cursor` (`None`: only if no record exists). `Ok(false)` on conflict.
    fn save<'a>(
        &'a self,
        snapshot: &'a Value,
        expected_cursor: Option<u64>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>>;
}
