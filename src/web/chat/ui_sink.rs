//! A turn's own answer on the UI message stream wire: a [`TurnSink`] whose pull-based body
//! (the same [`PullStream`] as the snapshot stream) turns the controller's state into the
//! session log's chunks with the encoder the log is written with, and those into UI message
//! chunks with the one mapping (`core::ui::UiStream`). What is encoded is the difference from
//! what this response sent, taken when a reader asks: a slow reader gets fewer, larger deltas,
//! never a queue. The last pull adds the run's end and `[DONE]`.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use web_sys::ReadableStream;

use super::stream::{PullStream, DELTAS};
use crate::core::coalesce::Urgency;
use crate::core::projection::encode::TurnEncoder;
use crate::core::protocol::{BoundaryError, Message, ToolCallStatus};
use crate::core::session::{Confirmation, ConfirmationStatus};
use crate::core::ui::sse::{push_events, DONE};
use crate::core::ui::{ToolConfirmations, UiStream};
use crate::turn::{Cause, Turn, TurnSink};

/// One pull of the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UiLine {
    /// What changed since the last pull.
    State,
    /// The end: what changed, the run's end (or the failure that ended the response), `[DONE]`.
    End(Option<BoundaryError>),
}

pub struct UiSink {
    stream: PullStream<UiLine>,
}

/// What the body's pulls share.
struct Encoding {
    encoder: TurnEncoder,
    ui: UiStream,
    /// Chunks encoded before the first pull (the run's start, a continuation's claimed record).
    pending: Vec<serde_json::Value>,
}

impl UiSink {
    /// The sink of `turn` and the stream to answer with. `continuing`: the answer a continuation
    /// adds to (the client holds it), `None` for a new turn.
    pub fn open(
        turn: &Rc<Turn>,
        continuing: Option<&[Message]>,
    ) -> Result<(Rc<Self>, ReadableStream), JsValue> {
        let now_ms = turn.ports().clock.now_ms();
        let mut encoder = TurnEncoder::new();
        let records = turn.confirmations().clone();
        let ui = {
            let state = turn.state();
            encoder.begin(&state.messages[..turn.history_len()], true, false);
            let resolving = turn
                .claim()
                .resolves
                .as_ref()
                .map(|r| r.tool_call_id.as_str());
            match continuing {
                Some(answer) => UiStream::continuing(
                    answer,
                    &ToolConfirmations::from_records(&records),
                    resolving,
                ),
                None => UiStream::new(),
            }
        };
        let sub = turn.submission();
        let mut pending = encoder.run_started(&sub.session_id, &sub.turn_id, now_ms);
        if let Some(record) = &turn.claim().resolves {
            pending.extend(encoder.confirmations(std::slice::from_ref(record), now_ms));
        }
        let encoding = RefCell::new(Encoding {
            encoder,
            ui,
            pending,
        });
        let reader = turn.clone();
        let encode = Box::new(move |line: UiLine, _is_last: bool| {
            let mut encoding = encoding.borrow_mut();
            encode(&mut encoding, &reader, line)
        });
        let weak = Rc::downgrade(turn);
        let on_cancel = Box::new(move || {
            if let Some(turn) = weak.upgrade() {
                turn.interrupt(Cause::ResponseCancelled);
            }
        });
        let (stream, body) = PullStream::new(encode, on_cancel, DELTAS)?;
        Ok((Rc::new(Self { stream }), body))
    }
}

/// The bytes of one pull (`None`: nothing new yet).
fn encode(encoding: &mut Encoding, turn: &Turn, line: UiLine) -> Option<Uint8Array> {
    let now_ms = turn.ports().clock.now_ms();
    let mut chunks = std::mem::take(&mut encoding.pending);
    let state = turn.state();
    chunks.extend(encoding.encoder.diff(&state, now_ms));
    if let UiLine::End(_) = line {
        let waiting = waiting_records(&state.messages, &turn.confirmations());
        chunks.extend(encoding.encoder.run_ended(&state, &waiting, now_ms));
    }
    drop(state);
    let mut ui = Vec::new();
    for chunk in &chunks {
        encoding.ui.feed(chunk, &mut ui);
    }
    let mut text = String::new();
    if let UiLine::End(last) = line {
        if let Some(error) = last {
            encoding.ui.fail(&error.diagnostic().message, &mut ui);
        }
        push_events(&mut text, &ui);
        text.push_str(DONE);
    } else {
        push_events(&mut text, &ui);
    }
    if text.is_empty() {
        return None;
    }
    let bytes = Uint8Array::new_with_length(text.len() as u32);
    bytes.copy_from(text.as_bytes());
    Some(bytes)
}

/// The records of the calls this turn leaves waiting for a person (its run's interrupts).
fn waiting_records(messages: &[Message], records: &[Confirmation]) -> Vec<Confirmation> {
    records
        .iter()
        .filter(|r| r.status == ConfirmationStatus::Pending)
        .filter(|r| {
            messages
                .iter()
                .flat_map(|m| m.tool_calls.iter().flatten())
                .any(|c| c.id == r.tool_call_id && c.status == ToolCallStatus::RequiresConfirmation)
        })
        .cloned()
        .collect()
}

impl TurnSink for UiSink {
    fn changed(&self) {
        self.stream.publish(UiLine::State, Urgency::Prompt);
    }

    fn close(&self, last: Option<BoundaryError>) {
        self.stream.close_with(Some(UiLine::End(last)));
    }
}
