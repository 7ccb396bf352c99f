//! The UI message stream of a turn a client joins late: the AI SDK's resume route (the stock
//! transport's `reconnectToStream`, whose stream is a replay: the client rebuilds its message
//! from the first `start`) and a decision that lost the race to the winner's continuation. The
//! log's projection gives the answer so far, rebuilt as UI chunks (`UiStream::rebuild`); then
//! the log is followed (`turn::follow`) and each chunk appended goes through the one mapping,
//! until the run ends, the follow's time is up or the client leaves. A run the log has not seen
//! start yet is followed from the tail, as a new turn; one that ended is rebuilt and finished.
//! A lost decision ([`join_response`]) continues the client's message instead of rebuilding it.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use web_sys::{ReadableStream, Response};

use super::deadline::RequestDeadline;
use super::stream::TextStream;
use crate::core::protocol::ToolCallStatus;
use crate::core::ui::sse::{push_events, DONE, HEADERS};
use crate::core::ui::{run_answer, turn_answer, ToolConfirmations, UiStream};
use crate::ports::chat::Sleep;
use crate::ports::log::SessionLog;
use crate::ports::CancelToken;
use crate::turn::follow::{follow, Joined, JoinedRun};

/// A 200 UI message stream response over `body`.
pub fn ui_stream_response(body: &ReadableStream) -> Result<Response, JsValue> {
    let (content_type, rest) = HEADERS.split_first().expect("the content type comes first");
    crate::web::http::respond(200, body, content_type.1, rest)
}

/// A UI message stream cancelled with `token` when its reader goes: the stream (to close), the
/// response, and what writes UI chunks to it as SSE events.
fn event_stream(
    token: &CancelToken,
) -> Result<(Rc<TextStream>, Response, impl Fn(&[serde_json::Value])), JsValue> {
    let cancelled = token.clone();
    let (stream, body) = TextStream::new(Box::new(move || cancelled.cancel()))?;
    let response = ui_stream_response(&body)?;
    let writer = stream.clone();
    let write = move |chunks: &[serde_json::Value]| {
        let mut text = String::new();
        push_events(&mut text, chunks);
        writer.write(&text);
    };
    Ok((stream, response, write))
}

/// The late stream (see the module comment), answered at once and written as the log is read.
pub fn follow_response(
    log: Rc<dyn SessionLog>,
    sleep: Rc<dyn Sleep>,
    joined: Joined,
    run_id: String,
    deadline: RequestDeadline,
) -> Result<Response, JsValue> {
    let token = deadline.interrupt().token().clone();
    let (stream, response, write) = event_stream(&token)?;
    let projection = &joined.projection;
    let messages = projection.to_messages();
    let confirmations = ToolConfirmations::from_log(projection.confirmations());
    // Running in the log (follow it), not started yet (wait for it), or over (rebuild, finish).
    let live = if projection.active_run() == Some(run_id.as_str()) {
        Some(true)
    } else if projection.last_run() != Some(run_id.as_str()) {
        Some(false)
    } else {
        None
    };
    // A continuation (its run is a confirmation's token) adds to the answer the log holds; a new
    // turn starts with its user's message.
    let continues = confirmations.has_token(&run_id);
    let mut ui = match live {
        // A new turn the log has not seen start yet: its own chunks will say everything.
        Some(false) if !continues => UiStream::new(),
        _ => {
            let (ui, rebuilt) =
                UiStream::rebuild(&run_answer(projection, continues), &confirmations);
            write(&rebuilt);
            ui
        }
    };
    let Some(_) = live else {
        let waiting = messages
            .iter()
            .flat_map(|m| m.tool_calls.iter().flatten())
            .any(|c| c.status == ToolCallStatus::RequiresConfirmation);
        let mut out = Vec::new();
        ui.finish(if waiting { "tool-calls" } else { "stop" }, &mut out);
        write(&out);
        stream.close(DONE);
        deadline.clear();
        return Ok(response);
    };
    ui.follow_run(&run_id);
    let live = Live {
        log,
        sleep,
        token,
        stream,
        deadline,
    };
    wasm_bindgen_futures::spawn_local(live.follow(joined.offset, ui, write));
    Ok(response)
}

/// The stream of a decision that lost the race for its confirmation (an identical resubmit,
/// another tab): the client holds the answer with the call answered, so the winner's
/// continuation is written into it as the winner's own stream was — from the run's start in the
/// log, then live until it ends. A record settled with no run in the log (nothing ran) finishes.
pub fn join_response(
    log: Rc<dyn SessionLog>,
    sleep: Rc<dyn Sleep>,
    joined: JoinedRun,
    run_id: String,
    settled: bool,
    deadline: RequestDeadline,
) -> Result<Response, JsValue> {
    let token = deadline.interrupt().token().clone();
    let (stream, response, write) = event_stream(&token)?;
    let messages = joined.before.to_messages();
    let confirmations = ToolConfirmations::from_log(joined.before.confirmations());
    let resolving = confirmations.call_of(&run_id).map(str::to_owned);
    let mut ui = UiStream::continuing(turn_answer(&messages), &confirmations, resolving.as_deref());
    ui.follow_run(&run_id);
    let mut out = Vec::new();
    for chunk in &joined.run {
        ui.feed(chunk, &mut out);
    }
    if !ui.is_ended() && joined.run.is_empty() && settled {
        ui.finish("stop", &mut out);
    }
    write(&out);
    if ui.is_ended() {
        stream.close(DONE);
        deadline.clear();
        return Ok(response);
    }
    let live = Live {
        log,
        sleep,
        token,
        stream,
        deadline,
    };
    wasm_bindgen_futures::spawn_local(live.follow(joined.offset, ui, write));
    Ok(response)
}

/// What a late or joined stream needs to go on live after its first chunks.
struct Live {
    log: Rc<dyn SessionLog>,
    sleep: Rc<dyn Sleep>,
    token: CancelToken,
    stream: Rc<TextStream>,
    deadline: RequestDeadline,
}

impl Live {
    /// Maps what the log appends after `offset` until the run ends. However it ends (the run's
    /// end, the time up, the client gone, the log failing), the stream closes cleanly: a client
    /// whose turn still runs resumes again.
    async fn follow(
        self,
        offset: Option<String>,
        mut ui: UiStream,
        write: impl Fn(&[serde_json::Value]),
    ) {
        let mut take = |chunks: &[serde_json::Value]| {
            let mut out = Vec::new();
            for chunk in chunks {
                ui.feed(chunk, &mut out);
            }
            write(&out);
            ui.is_ended()
        };
        follow(
            self.log.as_ref(),
            self.sleep.as_ref(),
            offset,
            &self.token,
            &mut take,
        )
        .await;
        self.stream.close(DONE);
        self.deadline.clear();
    }
}
