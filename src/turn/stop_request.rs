//! The stop watcher: a `client.turn.stop` sent by any client of the session is appended to the
//! session log as a stop-request chunk; the running turn follows its own log (long-poll) from the
//! tail it saw before its claim and stops when the request for its turn id appears. The log is
//! the one medium every isolate and process of a deployment shares, so a stop sent to another
//! instance reaches the turn too.

use crate::core::limits::{STOP_WATCH_POLL_MS, STOP_WATCH_READ_FAILURES_MAX};
use crate::core::projection::chunks::is_stop_request;
use crate::ports::log::{ReadFrom, SessionLog};
use crate::ports::CancelToken;

/// Reads `log` after `from` until a stop request for `turn_id` appears (`true`), `cancel` fires
/// or reads keep failing (`false`: the turn then runs on without a way to be stopped from
/// elsewhere; the deadline still bounds it).
pub async fn watch_for_stop(
    log: &dyn SessionLog,
    from: Option<String>,
    turn_id: &str,
    cancel: &CancelToken,
) -> bool {
    let mut offset = from;
    let mut failures = 0u32;
    while !cancel.is_cancelled() {
        let from = offset.as_deref().map_or(ReadFrom::Start, ReadFrom::After);
        match log.read(from, STOP_WATCH_POLL_MS, cancel).await {
            Ok(read) => {
                failures = 0;
                if read.chunks.iter().any(|c| is_stop_request(c, turn_id)) {
                    return true;
                }
                if read.offset.is_some() {
                    offset = read.offset;
                }
            }
            Err(_) => {
                failures += 1;
                if failures >= STOP_WATCH_READ_FAILURES_MAX {
                    return false;
                }
            }
        }
    }
    false
}
