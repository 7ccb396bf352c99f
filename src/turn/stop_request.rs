//! The stop watcher: a `client.turn.stop` sent by any client of the session is appended to the
//! session log as a stop-request chunk; the running turn follows its own log (long-poll) from the
//! tail it saw before its claim and stops when the request for its turn id appears. The log is
//! the one medium every isolate and process of a deployment shares, so a stop sent to another
//! instance reaches the turn too.
//!
//! The turn's own chunks land in the same log, so a watcher that read again at once would read
//! every chunk the turn appends (one read per model token). After a read that found no stop it
//! waits [`STOP_WATCH_READ_INTERVAL_MS`] first: the next read takes everything appended meanwhile
//! at once, and a stop reaches the turn at most that much later. It waits as long before its
//! first read too: that read starts from the tail the claim saw, so it finds a stop appended
//! meanwhile all the same, and a turn shorter than the pause reads its log not at all (each read
//! of a Durable Object is a call into it).

use turnkeep_core::limits::{
    STOP_WATCH_POLL_MS, STOP_WATCH_READ_FAILURES_MAX, STOP_WATCH_READ_INTERVAL_MS,
};
use turnkeep_core::projection::chunks::is_stop_request;
use turnkeep_ports::chat::Sleep;
use turnkeep_ports::log::{ReadFrom, SessionLog};
use turnkeep_ports::CancelToken;

/// Reads `log` after `from` until a stop request for `turn_id` appears (`true`), `cancel` fires
/// or reads keep failing (`false`: the turn then runs on without a way to be stopped from
/// elsewhere; the deadline still bounds it).
pub(crate) async fn watch_for_stop(
    log: &dyn SessionLog,
    sleep: &dyn Sleep,
    from: Option<String>,
    turn_id: &str,
    cancel: &CancelToken,
) -> bool {
    let mut offset = from;
    let mut failures = 0u32;
    sleep.sleep(STOP_WATCH_READ_INTERVAL_MS).await;
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
                if !read.chunks.is_empty() {
                    sleep.sleep(STOP_WATCH_READ_INTERVAL_MS).await;
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

/// What a `client.turn.stop` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopAnswer {
    /// The turn holds the session; the request was appended to the log. The turn ends once its
    /// watcher reads it (within [`STOP_WATCH_READ_INTERVAL_MS`] of the append, plus the log's
    /// own delivery); its own client's response ends as a normal turn does.
    Stopping { turn_id: String },
    /// The turn had ended already, with this outcome.
    Ended(turnkeep_core::session::TurnOutcome),
    /// No turn runs in the session (a stop of whatever runs, [`request_stop_running`]).
    Idle,
}

/// Handles `client.turn.stop`: any client of the session may stop its running turn. The request
/// travels through the session log, the one medium every instance of a deployment shares.
pub async fn request_stop(
    ports: &super::Ports,
    chat: &super::ChatSetup,
    session_id: &str,
    turn_id: &str,
    deadline: &super::Interrupt,
) -> Result<StopAnswer, super::Refusal> {
    stop(ports, chat, session_id, Some(turn_id), deadline).await
}

/// Stops whatever turn runs in the session (the AI SDK's stop route names no turn): `Idle` when
/// none does.
pub async fn request_stop_running(
    ports: &super::Ports,
    chat: &super::ChatSetup,
    session_id: &str,
    deadline: &super::Interrupt,
) -> Result<StopAnswer, super::Refusal> {
    stop(ports, chat, session_id, None, deadline).await
}

async fn stop(
    ports: &super::Ports,
    chat: &super::ChatSetup,
    session_id: &str,
    turn_id: Option<&str>,
    deadline: &super::Interrupt,
) -> Result<StopAnswer, super::Refusal> {
    use super::fault::{Refusal, Stage};
    use turnkeep_core::protocol::BoundaryError;
    let token = deadline.token();
    let stored = deadline
        .guard(async {
            ports
                .storage
                .load(session_id, token)
                .await
                .map_err(|e| Refusal::internal(Stage::SessionLoad, e))
        })
        .await?;
    let now_ms = ports.clock.now_ms();
    let resumed = turnkeep_core::session::resume_session(stored.as_ref(), &chat.identity, now_ms)
        .map_err(super::admit::resume_refusal)?;
    let envelope = resumed.envelope;
    if let Some(done) = turn_id.and_then(|id| envelope.terminal_turn(id)) {
        return Ok(StopAnswer::Ended(done.outcome));
    }
    let running = envelope
        .active_turn
        .as_ref()
        .filter(|a| a.expires_at > now_ms && turn_id.is_none_or(|id| a.turn_id == id));
    let Some(running) = running else {
        return match turn_id {
            Some(_) => Err(BoundaryError::TurnNotRunning.into()),
            None => Ok(StopAnswer::Idle),
        };
    };
    let Some(log) = &ports.log else {
        return Err(BoundaryError::StopUnavailable.into());
    };
    let chunk =
        turnkeep_core::projection::chunks::stop_request(&running.turn_id, now_ms).to_string();
    deadline
        .guard(async {
            log.append(std::slice::from_ref(&chunk), None, token)
                .await
                .map_err(|e| Refusal::internal(Stage::SessionLog, e.port_error()))
        })
        .await?;
    Ok(StopAnswer::Stopping {
        turn_id: running.turn_id.clone(),
    })
}
