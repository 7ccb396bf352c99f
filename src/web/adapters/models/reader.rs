//! Reads one result of a host model's iterator per call, for [`super::custom::JsModelStream`]:
//! `next()` is called, awaited and its result's fields read in JavaScript, and the fields reach
//! Rust in one call. Every decision (is it done, is it a text chunk, is it valid) stays in Rust.
//!
//! Why: a model yields a chunk per token, and reading one the generic way (call `next()`,
//! `Promise.resolve`, `then`, then `done`, `value`, `value.type`, `value.text` one property at a
//! time) crossed between wasm and JS about a dozen times per chunk; this way it is three
//! (`readNext`, the callback, the text). The callbacks are made once per stream, not per chunk.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(inline_js = r#"
function tell(callback, ...args) {
  try {
    callback(...args);
  } catch {
    // The stream was dropped while this read was pending: its callbacks are gone.
  }
}
export function readNext(iterator, next, onResult, onError) {
  let pending;
  try {
    pending = next.call(iterator);
  } catch (error) {
    tell(onError, error);
    return;
  }
  Promise.resolve(pending).then((result) => {
    let done, value, type, text;
    try {
      done = result?.done;
      value = result?.value;
      if (value !== null && typeof value === 'object') {
        type = value.type;
        text = value.text;
      }
    } catch (error) {
      tell(onError, error);
      return;
    }
    tell(onResult, done, value, type, text);
  }, (error) => tell(onError, error));
}
"#)]
extern "C" {
    /// `next.call(iterator)`, awaited; then `onResult(done, value, value.type, value.text)` (the
    /// last two only for an object value), or `onError(thrown)` for a throw or a rejection.
    /// Never throws itself.
    #[wasm_bindgen(js_name = readNext)]
    fn read_next(iterator: &JsValue, next: &Function, on_result: &Function, on_error: &Function);
}

/// One result as read: the raw fields, for the caller to judge.
pub struct ReadResult {
    pub done: JsValue,
    pub value: JsValue,
    pub kind: JsValue,
    pub text: JsValue,
}

enum Slot {
    Idle,
    Waiting(Option<Waker>),
    Read(Result<ReadResult, JsValue>),
}

struct State {
    slot: Slot,
    /// Reads given up before they settled (their futures were dropped): their results, which
    /// come first (an iterator answers its `next` calls in order), are dropped.
    abandoned: u32,
}

/// The reader of one iterator. It owns its two callbacks, so what they hold is freed when the
/// stream is dropped, not when JS collects them; a read still pending then settles into a
/// callback that is gone, which `readNext` ignores.
pub struct ResultReader {
    state: Rc<RefCell<State>>,
    on_result: Closure<dyn FnMut(JsValue, JsValue, JsValue, JsValue)>,
    on_error: Closure<dyn FnMut(JsValue)>,
}

impl ResultReader {
    pub fn new() -> Self {
        let state = Rc::new(RefCell::new(State {
            slot: Slot::Idle,
            abandoned: 0,
        }));
        let settle = {
            let state = state.clone();
            move |outcome: Result<ReadResult, JsValue>| {
                let waker = {
                    let mut state = state.borrow_mut();
                    if state.abandoned > 0 {
                        state.abandoned -= 1;
                        return;
                    }
                    match std::mem::replace(&mut state.slot, Slot::Read(outcome)) {
                        Slot::Waiting(waker) => waker,
                        Slot::Idle | Slot::Read(_) => None,
                    }
                };
                if let Some(waker) = waker {
                    waker.wake();
                }
            }
        };
        let on_result = {
            let settle = settle.clone();
            Closure::<dyn FnMut(JsValue, JsValue, JsValue, JsValue)>::new(
                move |done, value, kind, text| {
                    settle(Ok(ReadResult {
                        done,
                        value,
                        kind,
                        text,
                    }))
                },
            )
        };
        let on_error = Closure::<dyn FnMut(JsValue)>::new(move |error| settle(Err(error)));
        Self {
            state,
            on_result,
            on_error,
        }
    }

    /// Calls `next` on `iterator` and resolves to its result's fields, or to what it threw or
    /// rejected with. One read at a time (the caller awaits each before the next).
    pub fn read(&self, iterator: &JsValue, next: &Function) -> Reading<'_> {
        self.state.borrow_mut().slot = Slot::Waiting(None);
        // May settle synchronously (a throwing `next`): the slot is not borrowed meanwhile.
        read_next(
            iterator,
            next,
            self.on_result.as_ref().unchecked_ref(),
            self.on_error.as_ref().unchecked_ref(),
        );
        Reading { reader: self }
    }
}

/// The future [`ResultReader::read`] returns.
pub struct Reading<'r> {
    reader: &'r ResultReader,
}

impl Future for Reading<'_> {
    type Output = Result<ReadResult, JsValue>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.reader.state.borrow_mut();
        match std::mem::replace(&mut state.slot, Slot::Idle) {
            Slot::Read(outcome) => Poll::Ready(outcome),
            Slot::Waiting(_) | Slot::Idle => {
                state.slot = Slot::Waiting(Some(cx.waker().clone()));
                Poll::Pending
            }
        }
    }
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        let mut state = self.reader.state.borrow_mut();
        if let Slot::Waiting(_) = state.slot {
            state.slot = Slot::Idle;
            state.abandoned += 1;
        }
    }
}
