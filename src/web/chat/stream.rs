//! The response body: a JS `ReadableStream` whose `pull` is implemented here, over the pure
//! one-slot [`Coalescer`], which also says when its item is due (`core::coalesce`: the byte
//! budget, the minimum update rate, one frame for a prompt change). The stream's high-water mark
//! is 0, so `pull` runs only when a reader actually asks; whatever was published meanwhile was
//! overwritten, and the reader gets the newest item, encoded at that moment (so its sequence is
//! the next one for this response).
//!
//! Crossings per line: `pull` enters wasm once and answers synchronously (it returns nothing to
//! await). With an item due, the encoder's bytes become the chunk (one `Uint8Array` copy) and
//! are enqueued through the typed controller method (no property lookups). With none, the stream
//! is remembered as wanting one: the next publish (or, for an item not due yet, one timer set
//! for its time) encodes and enqueues it, which hands it to the reader's pending `read()` (a
//! stream may enqueue outside `pull`; with a high-water mark of 0 nothing is pulled or encoded
//! until a reader asks again). The clock is the host's monotonic `performance.now()`.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use js_sys::{Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::ReadableStreamDefaultController as Controller;

use crate::core::coalesce::{Coalescer, Pacing, Take, Urgency};

use super::js::{clear_timeout, get, set, set_timeout};

/// Turns an item into one NDJSON line's chunk when a reader takes it. The flag says whether it
/// is the last line (the stream closes after it). `None` skips the item.
pub type Encoder<T> = Box<dyn FnMut(T, bool) -> Option<Uint8Array>>;

struct Inner<T> {
    slot: Coalescer<T>,
    encode: Encoder<T>,
    /// The stream controller while a reader waits for an item (its `pull` found none due).
    wanted: Option<Controller>,
    /// The last item given to [`PullStream::close_with`]. It follows whatever item was still
    /// pending rather than overwriting it, so a slow reader gets the final state *and* the
    /// closing line (a diagnostic must not hide the snapshot that was saved).
    trailer: Option<T>,
    cancelled: bool,
    on_cancel: Option<Box<dyn FnOnce()>>,
    /// The timer set for a pending item that is not due yet: its id and the time it fires at.
    timer: Option<(JsValue, u64)>,
    /// What that timer calls (made on the first wait; it holds this state weakly).
    on_due: Option<Function>,
}

impl<T> Inner<T> {
    /// The stream is over (closed or cancelled): the encoder and what it captured (the turn,
    /// its buffers), and the cancel callback (a weak handle on the turn, which keeps the turn's
    /// allocation), are handed back to be dropped now (or, for the callback, run). The `pull` and `cancel` callbacks belong
    /// to JS and live until it collects the stream, and this state with them; without this a
    /// turn's state stayed in wasm memory until then (a host that answers turns back to back
    /// without yielding to its event loop grew by a turn's state per turn).
    fn retire(&mut self) -> (Encoder<T>, Option<Box<dyn FnOnce()>>) {
        self.trailer = None;
        self.disarm();
        self.on_due = None;
        let encode = std::mem::replace(&mut self.encode, Box::new(|_, _| None));
        (encode, self.on_cancel.take())
    }

    fn disarm(&mut self) {
        if let Some((id, _)) = self.timer.take() {
            clear_timeout(&id);
        }
    }
}

/// The writer's handle to the stream.
pub struct PullStream<T> {
    inner: Rc<RefCell<Inner<T>>>,
}

impl<T: 'static> PullStream<T> {
    /// Builds the stream, paced by `pacing`. `on_cancel` runs once if the consumer cancels the
    /// body.
    pub fn new(
        encode: Encoder<T>,
        on_cancel: Box<dyn FnOnce()>,
        pacing: Pacing,
    ) -> Result<(Self, web_sys::ReadableStream), JsValue> {
        let inner = Rc::new(RefCell::new(Inner {
            slot: Coalescer::new(pacing),
            encode,
            wanted: None,
            trailer: None,
            cancelled: false,
            on_cancel: Some(on_cancel),
            timer: None,
            on_due: None,
        }));
        let source = Object::new();
        let pull_inner = inner.clone();
        let pull = Closure::<dyn FnMut(Controller) -> JsValue>::new(move |controller| {
            pull_once(&pull_inner, controller)
        });
        let cancel_inner = inner.clone();
        let cancel = Closure::<dyn FnMut(JsValue)>::new(move |_reason: JsValue| {
            let (_encode, callback) = {
                let mut inner = cancel_inner.borrow_mut();
                inner.cancelled = true;
                inner.wanted = None;
                inner.slot.close_with(None, now_ms());
                inner.retire()
            };
            if let Some(callback) = callback {
                callback();
            }
        });
        set(&source, "pull", pull.into_js_value());
        set(&source, "cancel", cancel.into_js_value());
        let strategy = Object::new();
        set(&strategy, "highWaterMark", 0);
        let ctor = get(&js_sys::global(), "ReadableStream");
        let args = js_sys::Array::of2(&source, &strategy);
        let stream = Reflect::construct(ctor.unchecked_ref::<Function>(), &args)?;
        Ok((Self { inner }, stream.unchecked_into()))
    }

    /// Overwrites the pending item (a change of `urgency`) and hands it to a waiting reader if
    /// it is due.
    pub fn publish(&self, item: T, urgency: Urgency) {
        self.inner
            .borrow_mut()
            .slot
            .publish(item, urgency, now_ms());
        deliver(&self.inner);
    }

    /// Closes after the pending item (if any) and then `last` (if any) were taken.
    pub fn close_with(&self, last: Option<T>) {
        {
            let mut inner = self.inner.borrow_mut();
            inner.trailer = last;
            inner.slot.close_with(None, now_ms());
        }
        deliver(&self.inner);
    }
}

/// Hands the newest item to a reader that is waiting for one, if it is due.
fn deliver<T: 'static>(inner: &Rc<RefCell<Inner<T>>>) {
    let wanted = inner.borrow_mut().wanted.take();
    if let Some(controller) = wanted {
        if !serve(inner, &controller) {
            inner.borrow_mut().wanted = Some(controller);
        }
    }
}

/// Serves at once, or remembers that a reader waits (see the module comment).
fn pull_once<T: 'static>(inner: &Rc<RefCell<Inner<T>>>, controller: Controller) -> JsValue {
    if !serve(inner, &controller) {
        inner.borrow_mut().wanted = Some(controller);
    }
    JsValue::UNDEFINED
}

/// Enqueues the newest item or closes the stream; false when there is nothing due yet.
fn serve<T: 'static>(inner: &Rc<RefCell<Inner<T>>>, controller: &Controller) -> bool {
    let mut guard = inner.borrow_mut();
    let state = &mut *guard;
    if state.cancelled {
        return true;
    }
    let now = now_ms();
    loop {
        let (item, is_last) = match state.slot.take(now) {
            Take::Item(item) => (item, state.slot.is_closed() && state.trailer.is_none()),
            Take::Closed => match state.trailer.take() {
                Some(item) => (item, true),
                None => {
                    let retired = state.retire();
                    drop(guard);
                    drop(retired);
                    // A controller closed or errored meanwhile throws; nothing is left to do then.
                    let _ = controller.close();
                    return true;
                }
            },
            Take::NotBefore(due_ms) => {
                arm(inner, state, due_ms, now);
                return false;
            }
            Take::Empty => return false,
        };
        state.disarm();
        // An item that encodes to nothing (nothing new since the last chunk) gives way to what
        // follows it: after a close, the trailer and then the close itself, which no later
        // publish would ever come to deliver.
        let Some(chunk) = (state.encode)(item, is_last) else {
            continue;
        };
        state.slot.sent(chunk.length() as usize, now);
        drop(guard);
        let _ = controller.enqueue_with_chunk(&chunk);
        return true;
    }
}

/// Sets the timer for an item due at `due_ms`, unless one fires by then already. Where the host
/// has no timers the item waits for the next publish or the close (which always delivers).
fn arm<T: 'static>(inner: &Rc<RefCell<Inner<T>>>, state: &mut Inner<T>, due_ms: u64, now: u64) {
    if state.timer.as_ref().is_some_and(|(_, at)| *at <= due_ms) {
        return;
    }
    state.disarm();
    let on_due = state
        .on_due
        .get_or_insert_with(|| {
            let weak: Weak<RefCell<Inner<T>>> = Rc::downgrade(inner);
            let fire = Closure::<dyn FnMut()>::new(move || {
                if let Some(inner) = weak.upgrade() {
                    inner.borrow_mut().timer = None;
                    deliver(&inner);
                }
            });
            fire.into_js_value().unchecked_into()
        })
        .clone();
    let wait_ms = u32::try_from(due_ms.saturating_sub(now)).unwrap_or(u32::MAX);
    state.timer = set_timeout(&on_due, wait_ms).map(|id| (id, due_ms));
}

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: monotonic milliseconds (a host without it throws, caught).
    #[wasm_bindgen(catch, js_namespace = performance, js_name = now)]
    fn performance_now() -> Result<f64, JsValue>;
}

/// The pacing clock: `performance.now()`, else `Date.now()`, in whole milliseconds.
fn now_ms() -> u64 {
    let ms = performance_now().unwrap_or_else(|_| js_sys::Date::now());
    if ms.is_finite() && ms > 0.0 {
        ms as u64
    } else {
        0
    }
}

/// A delta stream's bytes grow with the answer, not its square: no byte budget, only the one
/// frame between takes every stream keeps.
pub(crate) const DELTAS: Pacing = Pacing {
    bytes_per_s: u64::MAX,
};

/// A body written as text arrives, over a [`PullStream`]: each pull takes everything written
/// since the last one, so a slow reader gets fewer, larger chunks (what it holds is bounded by
/// what the writer writes). `close` ends it after what was written.
pub struct TextStream {
    stream: PullStream<()>,
    buffer: Rc<RefCell<String>>,
}

impl TextStream {
    /// The writer's handle and the body. `on_cancel` runs once if the consumer cancels.
    pub fn new(
        on_cancel: Box<dyn FnOnce()>,
    ) -> Result<(Rc<Self>, web_sys::ReadableStream), JsValue> {
        let buffer = Rc::new(RefCell::new(String::new()));
        let drained = buffer.clone();
        // The closing pull always yields a chunk (empty if the one before took it all): the
        // stream closes only after it.
        let encode: Encoder<()> = Box::new(move |(), is_last| {
            let text = std::mem::take(&mut *drained.borrow_mut());
            (is_last || !text.is_empty()).then(|| {
                let bytes = Uint8Array::new_with_length(text.len() as u32);
                bytes.copy_from(text.as_bytes());
                bytes
            })
        });
        let (stream, body) = PullStream::new(encode, on_cancel, DELTAS)?;
        Ok((Rc::new(Self { stream, buffer }), body))
    }

    pub fn write(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.buffer.borrow_mut().push_str(text);
        self.stream.publish((), Urgency::Prompt);
    }

    /// Ends the body after what was written (and `last`).
    pub fn close(&self, last: &str) {
        self.buffer.borrow_mut().push_str(last);
        self.stream.close_with(Some(()));
    }
}

/// An SSE body of JSON events, over a [`PullStream`]: what is pushed between two pulls is queued,
/// with consecutive text and argument deltas of one message or call merged into one event
/// (`core::projection::encode::merge_queued`, the log sender's rule), so a slow reader gets fewer,
/// larger events. Each pull writes the queue as `data: <event>\n\n` lines.
pub struct EventStream {
    stream: PullStream<()>,
    queue: Rc<RefCell<std::collections::VecDeque<serde_json::Value>>>,
}

impl EventStream {
    /// The writer's handle and the body. `on_cancel` runs once if the consumer cancels.
    pub fn new(
        on_cancel: Box<dyn FnOnce()>,
    ) -> Result<(Rc<Self>, web_sys::ReadableStream), JsValue> {
        let queue = Rc::new(RefCell::new(std::collections::VecDeque::new()));
        let drained = queue.clone();
        let encode: Encoder<()> = Box::new(move |(), is_last| {
            let events: Vec<serde_json::Value> = drained.borrow_mut().drain(..).collect();
            let mut text = String::new();
            crate::core::ui::sse::push_events(&mut text, &events);
            (is_last || !text.is_empty()).then(|| {
                let bytes = Uint8Array::new_with_length(text.len() as u32);
                bytes.copy_from(text.as_bytes());
                bytes
            })
        });
        let (stream, body) = PullStream::new(encode, on_cancel, DELTAS)?;
        Ok((Rc::new(Self { stream, queue }), body))
    }

    pub fn push(&self, events: Vec<serde_json::Value>) {
        if events.is_empty() {
            return;
        }
        let mut queue = self.queue.borrow_mut();
        for event in events {
            crate::core::projection::merge_queued(&mut queue, event);
        }
        drop(queue);
        self.stream.publish((), Urgency::Prompt);
    }

    /// Ends the body after what was pushed.
    pub fn close(&self) {
        self.stream.close_with(Some(()));
    }
}
