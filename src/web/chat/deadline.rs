//! The request's deadline on the JS side (`timeoutMs`, covering the whole turn): a `timeoutMs` timer and the
//! request's own signal, each reported as a [`Cause`]. Before the stream starts they fire the
//! request's [`Interrupt`] (every pre-stream step runs under it, and host callbacks get
//! [`RequestDeadline::signal`]); once the turn runs they go to [`Turn::interrupt`], whose policy
//! decides what they mean (with a session log, a client that leaves does not stop the turn).
//! The timer is cleared when the request is done, so nothing a turn held outlives it.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use wasm_bindgen::prelude::*;
use web_sys::{AbortController, AbortSignal, Request};

use super::js::{clear_timeout, get_fn, set_timeout};
use crate::turn::{Cause, Interrupt, Turn};
use wasm_bindgen::JsCast;

pub struct RequestDeadline {
    inner: Rc<Inner>,
}

struct Inner {
    interrupt: Interrupt,
    /// Aborted with the first cause: the signal host callbacks receive.
    controller: Option<AbortController>,
    turn: RefCell<Weak<Turn>>,
    timer: RefCell<Option<(JsValue, Closure<dyn FnMut()>)>>,
    listener: RefCell<Option<(AbortSignal, Closure<dyn FnMut()>)>>,
    /// The request itself, held until the turn ends: in Node (undici) a `Request` built with a
    /// caller's signal follows it only while the `Request` is alive (it keeps the following
    /// controller; the caller's signal holds it weakly), so a collected request would never
    /// report its client gone.
    _request: Option<Request>,
}

impl RequestDeadline {
    pub fn start(request: &Request, timeout_ms: u32) -> Self {
        Self::start_from(
            Some(request.signal()),
            Some(Clone::clone(request)),
            timeout_ms,
        )
    }

    /// A deadline of `timeout_ms` that `signal` (when given) ends early (a client gone).
    pub fn start_with(signal: Option<AbortSignal>, timeout_ms: u32) -> Self {
        Self::start_from(signal, None, timeout_ms)
    }

    fn start_from(signal: Option<AbortSignal>, request: Option<Request>, timeout_ms: u32) -> Self {
        let interrupt = Interrupt::new();
        let controller = AbortController::new().ok();
        if let Some(controller) = &controller {
            // One controller for both views of the deadline: the interrupt's token hands this
            // signal to the ports it is given (`signal_of` asks the token's memo) and aborts it
            // when it fires, instead of a second controller made for the token (each is ~8 µs
            // in Node, and a short turn makes a handful).
            let token = interrupt.token();
            let signal = controller.signal();
            token.memo(move || signal);
            let abort = controller.clone();
            token.on_cancel(move || abort.abort());
        }
        let inner = Rc::new(Inner {
            interrupt,
            controller,
            turn: RefCell::new(Weak::new()),
            timer: RefCell::new(None),
            listener: RefCell::new(None),
            _request: request,
        });
        let weak = Rc::downgrade(&inner);
        let on_timeout = Closure::<dyn FnMut()>::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.fire(Cause::Timeout);
            }
        });
        if let Some(id) = set_timeout(on_timeout.as_ref().unchecked_ref(), timeout_ms) {
            *inner.timer.borrow_mut() = Some((id, on_timeout));
        }
        let Some(signal) = signal else {
            return Self { inner };
        };
        let weak = Rc::downgrade(&inner);
        let on_abort = Closure::<dyn FnMut()>::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.fire(Cause::ClientGone);
            }
        });
        if signal.aborted() {
            inner.fire(Cause::ClientGone);
        } else if let Some(add) = get_fn(&signal, "addEventListener") {
            let _ = add.call2(&signal, &crate::web::js::key("abort"), on_abort.as_ref());
            *inner.listener.borrow_mut() = Some((signal, on_abort));
        }
        Self { inner }
    }

    /// What every pre-stream step runs under.
    pub fn interrupt(&self) -> &Interrupt {
        &self.inner.interrupt
    }

    /// The signal handed to host callbacks (`authenticate`, `resolveDefinition`, ...).
    pub fn signal(&self) -> JsValue {
        self.inner
            .controller
            .as_ref()
            .map_or(JsValue::UNDEFINED, |c| c.signal().into())
    }

    /// From now on, causes go to `turn` (one that fired already is handed over at once).
    pub fn hand_over(&self, turn: &Rc<Turn>) {
        *self.inner.turn.borrow_mut() = Rc::downgrade(turn);
        if let Some(cause) = self.inner.interrupt.cause() {
            turn.interrupt(cause);
        }
    }

    /// Stops the timer and the listener (the request is done).
    pub fn clear(&self) {
        if let Some((id, _closure)) = self.inner.timer.borrow_mut().take() {
            clear_timeout(&id);
        }
        if let Some((signal, closure)) = self.inner.listener.borrow_mut().take() {
            if let Some(remove) = get_fn(&signal, "removeEventListener") {
                let _ = remove.call2(&signal, &crate::web::js::key("abort"), closure.as_ref());
            }
        }
        *self.inner.turn.borrow_mut() = Weak::new();
    }
}

impl Drop for RequestDeadline {
    fn drop(&mut self) {
        self.clear();
    }
}

impl Inner {
    fn fire(&self, cause: Cause) {
        let turn = self.turn.borrow().upgrade();
        match turn {
            Some(turn) => turn.interrupt(cause),
            None => self.interrupt.fire(cause),
        }
        if let Some(controller) = &self.controller {
            if !controller.signal().aborted() {
                controller.abort();
            }
        }
    }
}
