//! The sender's response body as a [`TurnSink`]: a pull-based coalescing `ReadableStream`
//! ([`PullStream`]) whose lines the turn's [`LineEncoder`] builds from the controller's state
//! when a reader asks. Cancelling the body interrupts the turn (`ResponseCancelled`).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use web_sys::ReadableStream;

use super::stream::PullStream;
use crate::core::protocol::BoundaryError;
use crate::turn::{Cause, Line, LineEncoder, Turn, TurnSink};

pub struct ResponseSink {
    stream: PullStream<Line>,
}

impl ResponseSink {
    /// The sink of `turn` and the stream to answer with.
    pub fn open(turn: &Rc<Turn>) -> Result<(Rc<Self>, ReadableStream), JsValue> {
        let sub = turn.submission();
        let encoder = LineEncoder::new(&sub.session_id, &sub.turn_id, turn.claim().generation())
            .map_err(|_| JsValue::from_str("claim cursor too large"))?;
        let encoder = RefCell::new(encoder);
        let reader = turn.clone();
        let encode = Box::new(move |line: Line, is_last: bool| {
            let ports = reader.ports();
            let state = reader.state();
            let confirmations = reader.confirmations();
            encoder
                .borrow_mut()
                .encode(
                    line,
                    is_last,
                    &state,
                    &confirmations,
                    ports.clock.as_ref(),
                    ports.ids.as_ref(),
                )
                .map(String::into_bytes)
        });
        let weak = Rc::downgrade(turn);
        let on_cancel = Box::new(move || {
            if let Some(turn) = weak.upgrade() {
                turn.interrupt(Cause::ResponseCancelled);
            }
        });
        let (stream, body) = PullStream::new(encode, on_cancel)?;
        Ok((Rc::new(Self { stream }), body))
    }
}

impl TurnSink for ResponseSink {
    fn changed(&self) {
        self.stream.publish(Line::State);
    }

    fn close(&self, last: Option<BoundaryError>) {
        self.stream.close_with(last.map(Line::Diagnostic));
    }
}
