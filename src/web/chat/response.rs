//! The sender's response body as a [`TurnSink`]: a pull-based coalescing `ReadableStream`
//! ([`PullStream`]) whose lines the turn's [`LineEncoder`] builds from the controller's state
//! when a reader asks. Cancelling the body interrupts the turn (`ResponseCancelled`).

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use wasm_bindgen::JsValue;
use web_sys::ReadableStream;

use super::stream::PullStream;
use crate::core::coalesce::{Pacing, Urgency};
use crate::core::protocol::BoundaryError;
use crate::turn::{Cause, Line, LineEncoder, Turn, TurnSink};

pub struct ResponseSink {
    stream: PullStream<Line>,
    /// The line encoder (shared with the stream's encode step): it knows what the last line
    /// showed, so it says how long a change may wait (`LineEncoder::urgency`).
    encoder: Rc<RefCell<LineEncoder>>,
    /// Weak: the turn holds the sink while it runs.
    turn: Weak<Turn>,
}

impl ResponseSink {
    /// The sink of `turn` and the stream to answer with, paced by `pacing`.
    pub fn open(turn: &Rc<Turn>, pacing: Pacing) -> Result<(Rc<Self>, ReadableStream), JsValue> {
        let sub = turn.submission();
        let encoder = LineEncoder::new(&sub.session_id, &sub.turn_id, turn.claim().generation())
            .map_err(|_| JsValue::from_str("claim cursor too large"))?;
        let encoder = Rc::new(RefCell::new(encoder));
        let lines = encoder.clone();
        let reader = turn.clone();
        let encode = Box::new(move |line: Line, is_last: bool| {
            let ports = reader.ports();
            let controller = reader.controller();
            let confirmations = reader.confirmations();
            let mut encoder = lines.borrow_mut();
            let before = encoder.counts();
            let bytes = encoder.encode(
                line,
                is_last,
                &controller,
                &confirmations,
                ports.clock.as_ref(),
                ports.ids.as_ref(),
            )?;
            // The one copy out of wasm memory: the encoder reuses its buffer for the next line.
            let chunk = super::slab::copy_out(bytes);
            let after = encoder.counts();
            super::bench_counts::encoded(before, after);
            Some(chunk)
        });
        let weak = Rc::downgrade(turn);
        let on_cancel = Box::new(move || {
            if let Some(turn) = weak.upgrade() {
                turn.interrupt(Cause::ResponseCancelled);
            }
        });
        let (stream, body) = PullStream::new(encode, on_cancel, pacing)?;
        let sink = Self {
            stream,
            encoder,
            turn: Rc::downgrade(turn),
        };
        Ok((Rc::new(sink), body))
    }
}

impl TurnSink for ResponseSink {
    fn changed(&self) {
        super::bench_counts::offered();
        let urgency = match self.turn.upgrade() {
            Some(turn) => self.encoder.borrow().urgency(&turn.controller()),
            None => Urgency::Prompt,
        };
        self.stream.publish(Line::State, urgency);
    }

    fn close(&self, last: Option<BoundaryError>) {
        self.stream.close_with(last.map(Line::Diagnostic));
    }
}
