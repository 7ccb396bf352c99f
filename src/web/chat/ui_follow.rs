//! The UI message stream of a turn a client joins late: the AI SDK's resume route (the stock
//! transport's `reconnectToStream`, whose stream is a replay: the client rebuilds its message
//! from the first `start`) and a decision that lost the race to the winner's continuation. The
//! log's projection gives the answer so far, rebuilt as UI chunks (`UiStream::rebuild`); then
//! the log is followed (`turn::follow`) and each chunk appended goes through the one mapping,
//! until the run ends, the follow's time is up or the client leaves. A run the log has not seen
//! start yet is followed from the tail, as a new turn; one that ended is rebuilt and finished.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use web_sys::{ReadableStream, Response};

use super::deadline::RequestDeadline;
use super::stream::PullStream;
use crate::core::protocol::ToolCallStatus;
use crate::core::ui::sse::{push_events, DONE, HEADERS};
use crate::core::ui::{turn_answer, ToolConfirmations, UiStream};
use crate::ports::chat::Sleep;
use crate::ports::log::SessionLog;
use crate::turn::follow::{follow, Joined};

/// Where a late stream starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FollowFrom {
    /// The run `runId` (a turn's id, or a confirmation token for its continuation): live if the
    /// log shows it running, from its start if not started yet, rebuilt and finished if ended.
    Run(String),
    /// Nothing runs: the answer as it stands, finished.
    Ended,
}

/// A 200 UI message stream response over `body`.
pub fn ui_stream_response(body: &ReadableStream) -> Result<Response, JsValue> {
    let (content_type, rest) = HEADERS.split_first().expect("the content type comes first");
    crate::web::http::respond(200, body, content_type.1, rest)
}

/// The late stream (see the module comment), answered at once and written as the log is read.
pub fn follow_response(
    log: Rc<dyn SessionLog>,
    sleep: Rc<dyn Sleep>,
    joined: Joined,
    from: FollowFrom,
    deadline: RequestDeadline,
) -> Result<Response, JsValue> {
    let buffer = Rc::new(RefCell::new(String::new()));
    let drained = buffer.clone();
    // Each pull takes everything written since the last one. The closing pull always yields a
    // chunk (empty if the one before took it all): the stream closes only after it.
    let encode = Box::new(move |(): (), is_last: bool| {
        let text = std::mem::take(&mut *drained.borrow_mut());
        (is_last || !text.is_empty()).then(|| {
            let bytes = Uint8Array::new_with_length(text.len() as u32);
            bytes.copy_from(text.as_bytes());
            bytes
        })
    });
    let token = deadline.interrupt().token().clone();
    let cancelled = token.clone();
    let (stream, body) = PullStream::new(encode, Box::new(move || cancelled.cancel()))?;
    let stream = Rc::new(stream);
    let response = ui_stream_response(&body)?;
    let write = {
        let (buffer, stream) = (buffer.clone(), stream.clone());
        move |chunks: &[serde_json::Value]| {
            if !chunks.is_empty() {
                push_events(&mut buffer.borrow_mut(), chunks);
                stream.publish(());
            }
        }
    };
    let projection = &joined.projection;
    let messages = projection.to_messages();
    let confirmations = ToolConfirmations::from_log(projection.confirmations());
    let live = match &from {
        FollowFrom::Run(run) if projection.active_run() == Some(run.as_str()) => Some(true),
        FollowFrom::Run(run) if projection.last_run() != Some(run.as_str()) => Some(false),
        _ => None,
    };
    let mut ui = match live {
        // Not started yet: the run's own chunks will say everything.
        Some(false) => UiStream::new(),
        _ => {
            let (ui, rebuilt) = UiStream::rebuild(turn_answer(&messages), &confirmations);
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
        buffer.borrow_mut().push_str(DONE);
        stream.close_with(Some(()));
        deadline.clear();
        return Ok(response);
    };
    if let FollowFrom::Run(run) = &from {
        ui.follow_run(run);
    }
    let offset = joined.offset;
    wasm_bindgen_futures::spawn_local(async move {
        let mut take = |chunks: &[serde_json::Value]| {
            let mut out = Vec::new();
            for chunk in chunks {
                ui.feed(chunk, &mut out);
            }
            write(&out);
            ui.is_ended()
        };
        // However it ends (the run's end, the time up, the client gone, the log failing), the
        // stream closes cleanly: a client whose turn still runs resumes again.
        follow(log.as_ref(), sleep.as_ref(), offset, &token, &mut take).await;
        buffer.borrow_mut().push_str(DONE);
        stream.close_with(Some(()));
        deadline.clear();
    });
    Ok(response)
}
