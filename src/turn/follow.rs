//! Following a session log for a client that joins a turn late: the AI SDK's resume route
//! (`GET …/:id/stream`) and a decision that lost the race for a confirmation (it gets the
//! winner's continuation). First the log's projection gives the conversation so far (what the
//! client rebuilds); then the chunks appended after it are handed over as they come, until the
//! caller says the run ended, the caller's token fires, or reads keep failing.

use serde_json::Value;
use turnkeep_core::limits::{FOLLOW_POLL_MS, FOLLOW_READ_FAILURES_MAX, FOLLOW_READ_INTERVAL_MS};
use turnkeep_core::projection::chunks::RUN_STARTED;
use turnkeep_core::projection::Projection;
use turnkeep_ports::chat::Sleep;
use turnkeep_ports::log::{LogError, ReadFrom, SessionLog};
use turnkeep_ports::CancelToken;

use super::admit::resume_refusal;
use super::external::{read_all, read_projection};
use super::fault::{Refusal, Stage};
use super::interrupt::Interrupt;
use super::{ChatSetup, Ports};
use turnkeep_core::protocol::Message;
use turnkeep_core::session::{resume_session, ActiveTurn, Confirmation};

/// The log as a late client finds it.
pub struct Joined {
    pub projection: Projection,
    /// Where the chunks that follow start (`None`: the log holds nothing).
    pub offset: Option<String>,
}

/// Reads the whole log into the projection.
pub async fn join(log: &dyn SessionLog, cancel: &CancelToken) -> Result<Joined, LogError> {
    let (projection, offset) = read_projection(log, cancel).await?;
    Ok(Joined { projection, offset })
}

/// The log as a client that continues run `run_id`'s answer finds it: the projection of
/// everything before the run started, and the run's chunks so far (empty when it has not
/// started).
pub struct JoinedRun {
    pub before: Projection,
    pub run: Vec<Value>,
    pub offset: Option<String>,
}

/// Reads the whole log, split at `run_id`'s `RUN_STARTED` (the last one, should a run id repeat).
pub async fn join_run(
    log: &dyn SessionLog,
    run_id: &str,
    cancel: &CancelToken,
) -> Result<JoinedRun, LogError> {
    let mut chunks: Vec<Value> = Vec::new();
    let offset = read_all(log, cancel, &mut |batch| chunks.extend_from_slice(batch)).await?;
    let start = chunks.iter().rposition(|c| {
        c.get("type").and_then(Value::as_str) == Some(RUN_STARTED)
            && c.get("runId").and_then(Value::as_str) == Some(run_id)
    });
    let run = start.map_or_else(Vec::new, |at| chunks.split_off(at));
    let mut before = Projection::new();
    before.feed_all(&chunks);
    Ok(JoinedRun {
        before,
        run,
        offset,
    })
}

/// Why following ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FollowEnd {
    /// `take` said the run it waits for ended.
    Ended,
    /// `cancel` fired (the client left, the follow's time was up).
    Cancelled,
    /// Reads failed `FOLLOW_READ_FAILURES_MAX` times in a row.
    Failed,
}

/// Hands every chunk appended after `offset` to `take`, batch by batch, until `take` returns
/// `true` (the run ended), `cancel` fires or reads keep failing.
pub async fn follow(
    log: &dyn SessionLog,
    sleep: &dyn Sleep,
    offset: Option<String>,
    cancel: &CancelToken,
    take: &mut dyn FnMut(&[Value]) -> bool,
) -> FollowEnd {
    let mut offset = offset;
    let mut failures = 0u32;
    while !cancel.is_cancelled() {
        let from = offset.as_deref().map_or(ReadFrom::Start, ReadFrom::After);
        match log.read(from, FOLLOW_POLL_MS, cancel).await {
            Ok(read) => {
                failures = 0;
                if read.offset.is_some() {
                    offset = read.offset;
                }
                if !read.chunks.is_empty() {
                    if take(&read.chunks) {
                        return FollowEnd::Ended;
                    }
                    sleep.sleep(FOLLOW_READ_INTERVAL_MS).await;
                }
            }
            Err(_) => {
                failures += 1;
                if failures >= FOLLOW_READ_FAILURES_MAX {
                    return FollowEnd::Failed;
                }
            }
        }
    }
    FollowEnd::Cancelled
}

/// The turn that holds the session now (its lease not lapsed), if any.
pub async fn running_turn(
    ports: &Ports,
    chat: &ChatSetup,
    session_id: &str,
    deadline: &Interrupt,
) -> Result<Option<ActiveTurn>, Refusal> {
    let stored = deadline
        .guard(async {
            ports
                .storage
                .load(session_id, deadline.token())
                .await
                .map_err(|e| Refusal::internal(Stage::SessionLoad, e))
        })
        .await?;
    let now_ms = ports.clock.now_ms();
    let resumed =
        resume_session(stored.as_ref(), &chat.identity, now_ms).map_err(resume_refusal)?;
    Ok(resumed
        .envelope
        .active_turn
        .filter(|active| active.expires_at > now_ms))
}

/// The saved conversation and the session's confirmation records (for a host with no log).
pub async fn saved_conversation(
    ports: &Ports,
    chat: &ChatSetup,
    session_id: &str,
    deadline: &Interrupt,
) -> Result<(Vec<Message>, Vec<Confirmation>), Refusal> {
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
    let resumed =
        resume_session(stored.as_ref(), &chat.identity, now_ms).map_err(resume_refusal)?;
    let messages = deadline
        .guard(async {
            ports
                .memory
                .load(token)
                .await
                .map_err(|e| Refusal::internal(Stage::MemoryLoad, e))
        })
        .await?;
    let messages = if messages.is_empty() {
        chat.initial_messages.clone()
    } else {
        messages
    };
    Ok((messages, resumed.envelope.confirmations))
}
