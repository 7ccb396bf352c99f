//! The sender's response body as a [`TurnSink`]: a pull-based coalescing `ReadableStream`
//! ([`PullStream`]) whose lines the turn's [`LineEncoder`] builds from the controller's state
//! when a reader asks. Cancelling the body interrupts the turn (`ResponseCancelled`).

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use wasm_bindgen::prelude::*;
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

/// What every response of this module instance did, summed (`__snapshotCountsForBench`):
/// states offered to readers, lines encoded, messages encoded and reused.
#[derive(Clone, Copy, Default)]
struct Counts {
    offered: u64,
    lines: crate::turn::snapshot::LineCounts,
}

thread_local! {
    static COUNTS: std::cell::Cell<Counts> = std::cell::Cell::new(Counts::default());
}

/// Snapshot counts of every chat response so far, for bench/turn.mjs (not part of the npm
/// surface): `{ statesOffered, linesEmitted, messagesEncoded, messagesReused }`. The lines are
/// encoded when a reader pulls, so lines built and lines emitted are the same count.
#[wasm_bindgen(js_name = __snapshotCountsForBench)]
pub fn snapshot_counts_for_bench() -> JsValue {
    let counts = COUNTS.with(|c| c.get());
    let out = js_sys::Object::new();
    let set = |k: &str, v: u64| crate::web::js::set(&out, k, v as f64);
    set("statesOffered", counts.offered);
    set("linesEmitted", counts.lines.lines);
    set("messagesEncoded", counts.lines.messages_encoded);
    set("messagesReused", counts.lines.messages_reused);
    out.into()
}

fn count(change: impl FnOnce(&mut Counts)) {
    COUNTS.with(|c| {
        let mut counts = c.get();
        change(&mut counts);
        c.set(counts);
    });
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
            count(|c| {
                c.lines.lines += after.lines - before.lines;
                c.lines.messages_encoded += after.messages_encoded - before.messages_encoded;
                c.lines.messages_reused += after.messages_reused - before.messages_reused;
            });
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
        count(|c| c.offered += 1);
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
