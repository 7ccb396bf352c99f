//! Small JavaScript interop helpers for the handlers and adapters: property access, calling host
//! callbacks, timers and abort signals. (Racing futures is host-independent: `crate::turn::race`.)
//!
//! Everything goes through `globalThis`, so the same code runs in workerd, Node and browsers.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use js_sys::{Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use crate::core::limits::{JS_KEYS_INTERNED_MAX, JS_SETTLERS_IDLE_MAX};

thread_local! {
    /// Property names as JS strings, made once: a name crossing from wasm is decoded from UTF-8
    /// into a fresh JS string each time, and a turn reads the same few dozen names hundreds of
    /// times. Bounded (the names are the crate's own literals, so the bound is never reached).
    static KEYS: RefCell<HashMap<String, JsValue, BuildHasherDefault<Fnv1a>>> = RefCell::default();
}

/// FNV-1a for the interned keys: a few short names, all the crate's own literals, so neither
/// SipHash's flooding resistance nor its cost (it showed in a streaming turn's profile: every
/// chunk reads four properties) buys anything here.
#[derive(Default)]
struct Fnv1a(u64);

impl Hasher for Fnv1a {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for byte in bytes {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

/// Runs `f` with `key` as a JS string, interned (see `KEYS`), borrowed: no new reference to the
/// string is made for a read. `f` may call back into this module (a host getter that calls an
/// export): the table is only ever borrowed shared while `f` runs, and a name interned by such a
/// call while the table is borrowed is simply used uncached.
fn with_key<R>(key: &str, f: impl FnOnce(&JsValue) -> R) -> R {
    KEYS.with(|keys| {
        {
            let interned = keys.borrow();
            if let Some(value) = interned.get(key) {
                return f(value);
            }
        }
        let value = JsValue::from_str(key);
        let out = f(&value);
        if let Ok(mut keys) = keys.try_borrow_mut() {
            if keys.len() < JS_KEYS_INTERNED_MAX {
                keys.insert(key.to_owned(), value);
            }
        }
        out
    })
}

/// `key` as a JS string, interned (see `KEYS`).
pub fn key(key: &str) -> JsValue {
    with_key(key, JsValue::clone)
}

/// `obj[key]`, or `undefined` when `obj` is not an object.
pub fn get(obj: &JsValue, key_name: &str) -> JsValue {
    if !obj.is_object() && !obj.is_function() {
        return JsValue::UNDEFINED;
    }
    with_key(key_name, |k| Reflect::get(obj, k)).unwrap_or(JsValue::UNDEFINED)
}

/// Whether `value` is the string `name` (one crossing: compared with the interned key).
pub fn is_key(value: &JsValue, name: &str) -> bool {
    with_key(name, |k| value == k)
}

/// Sets `obj[key] = value` on a plain object we created ourselves (cannot fail).
pub fn set(obj: &Object, key_name: &str, value: impl Into<JsValue>) {
    let value = value.into();
    with_key(key_name, |k| {
        let _ = Reflect::set(obj, k, &value);
    });
}

/// `obj[key]` as a function, if it is one.
pub fn get_fn(obj: &JsValue, key: &str) -> Option<Function> {
    get(obj, key).dyn_into::<Function>().ok()
}

/// Awaits a value that may or may not be a promise (host callbacks may return either).
/// A synchronous throw and a rejection both become `Err`. Every answer goes through
/// `Promise.resolve`, a value answered at once too: telling a thenable apart first (an
/// `instanceof`, a `then` read) was measured costing more than the microtask it saves
/// (docs/figures.md, "Speed: a whole turn").
pub async fn resolve(result: Result<JsValue, JsValue>) -> Result<JsValue, JsValue> {
    let value = result?;
    settled(Promise::resolve(&value)).await
}

/// Awaits `promise`, like `JsFuture`, through `then` callbacks taken from a pool instead of
/// two closures made (and released) for every await: a turn awaits its model once per chunk.
pub fn settled(promise: Promise) -> Settling {
    let settler = SETTLERS
        .with(|pool| pool.borrow_mut().pop())
        .unwrap_or_else(Settler::new);
    *settler.slot.borrow_mut() = Slot::Waiting(None);
    let promise: &NativePromise = promise.unchecked_ref();
    promise.then_with(&settler.on_fulfilled, &settler.on_rejected);
    Settling {
        settler: Some(settler),
    }
}

#[wasm_bindgen]
extern "C" {
    /// A `Promise`, for `then` with callbacks that are already JS functions.
    type NativePromise;
    #[wasm_bindgen(method, js_name = then)]
    fn then_with(this: &NativePromise, on_fulfilled: &Function, on_rejected: &Function);
}

thread_local! {
    /// Idle settlers (their promise settled and was read), at most `JS_SETTLERS_IDLE_MAX`.
    static SETTLERS: RefCell<Vec<Settler>> = RefCell::default();
}

/// A pair of `then` callbacks that write into one slot. JS owns the callbacks (a promise still
/// pending when its `Settling` was dropped keeps them, and they stay callable); the pool gets a
/// settler back only after its promise settled, so a pair is never attached to two pending
/// promises at once.
struct Settler {
    slot: Rc<RefCell<Slot>>,
    on_fulfilled: Function,
    on_rejected: Function,
}

enum Slot {
    Idle,
    Waiting(Option<Waker>),
    Settled(Result<JsValue, JsValue>),
}

impl Settler {
    fn new() -> Self {
        let slot = Rc::new(RefCell::new(Slot::Idle));
        let callback = |ok: bool| {
            let slot = slot.clone();
            Closure::<dyn FnMut(JsValue)>::new(move |value: JsValue| {
                let outcome = if ok { Ok(value) } else { Err(value) };
                let previous = std::mem::replace(&mut *slot.borrow_mut(), Slot::Settled(outcome));
                if let Slot::Waiting(Some(waker)) = previous {
                    waker.wake();
                }
            })
            .into_js_value()
            .unchecked_into::<Function>()
        };
        Self {
            on_fulfilled: callback(true),
            on_rejected: callback(false),
            slot,
        }
    }

    fn release(self) {
        *self.slot.borrow_mut() = Slot::Idle;
        SETTLERS.with(|pool| {
            let mut pool = pool.borrow_mut();
            if pool.len() < JS_SETTLERS_IDLE_MAX {
                pool.push(self);
            }
        });
    }
}

/// The future [`settled`] returns.
pub struct Settling {
    settler: Option<Settler>,
}

impl Future for Settling {
    type Output = Result<JsValue, JsValue>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(settler) = self.settler.as_ref() else {
            panic!("Settling polled after it completed");
        };
        let outcome = {
            let mut slot = settler.slot.borrow_mut();
            match std::mem::replace(&mut *slot, Slot::Idle) {
                Slot::Settled(outcome) => outcome,
                Slot::Waiting(_) | Slot::Idle => {
                    *slot = Slot::Waiting(Some(cx.waker().clone()));
                    return Poll::Pending;
                }
            }
        };
        if let Some(settler) = self.settler.take() {
            settler.release();
        }
        Poll::Ready(outcome)
    }
}

impl Drop for Settling {
    fn drop(&mut self) {
        let Some(settler) = self.settler.take() else {
            return;
        };
        // Settled but never read: reusable. Still pending: its promise keeps the callbacks.
        if matches!(*settler.slot.borrow(), Slot::Settled(_)) {
            settler.release();
        }
    }
}

/// Calls `f(args...)` with `this = undefined` and awaits its (possibly async) result.
pub async fn call(f: &Function, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    resolve(invoke(f, &JsValue::UNDEFINED, args)).await
}

/// Calls the method `obj[key](args...)` and awaits it.
pub async fn call_method(obj: &JsValue, key: &str, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    let f =
        get_fn(obj, key).ok_or_else(|| JsValue::from_str(&format!("{key} is not a function")))?;
    resolve(invoke(&f, obj, args)).await
}

/// `f.call(this, ...args)`: one crossing for up to three arguments (an `apply` first builds its
/// argument array, one crossing per argument).
fn invoke(f: &Function, this: &JsValue, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    match args {
        [] => f.call0(this),
        [a] => f.call1(this, a),
        [a, b] => f.call2(this, a, b),
        [a, b, c] => f.call3(this, a, b, c),
        _ => f.apply(this, &args.iter().collect()),
    }
}

/// A JS callback that wakes a Rust future: what a timer or an abort listener calls. No Promise
/// in between: a future over a promise that never settles (a cleared timer, a signal that never
/// aborts) keeps its `then` callbacks and their state alive in a cycle through wasm memory, two
/// closures per wait, for ever (measured: 4 closures and ~200 B of wasm memory per turn before
/// this). The Rust side owns the callback; dropping it destroys it, and the JS side, which
/// called it or unhooked it first, holds nothing of it.
struct Wakeup {
    state: Rc<RefCell<(bool, Option<Waker>)>>,
    callback: Closure<dyn FnMut()>,
}

impl Wakeup {
    fn new() -> Self {
        let state: Rc<RefCell<(bool, Option<Waker>)>> = Rc::default();
        let wake = state.clone();
        let callback = Closure::<dyn FnMut()>::new(move || {
            let waker = {
                let mut state = wake.borrow_mut();
                state.0 = true;
                state.1.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        });
        Self { state, callback }
    }

    fn function(&self) -> &Function {
        self.callback.as_ref().unchecked_ref()
    }

    fn poll(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.state.borrow_mut();
        if state.0 {
            return Poll::Ready(());
        }
        state.1 = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[wasm_bindgen]
extern "C" {
    /// The global `setTimeout`, looked up when called (a host's fake timers are seen); a host
    /// without one throws a `ReferenceError`, caught.
    #[wasm_bindgen(catch, js_name = setTimeout)]
    fn global_set_timeout(handler: &Function, ms: u32) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = clearTimeout)]
    fn global_clear_timeout(id: &JsValue) -> Result<(), JsValue>;
}

/// `setTimeout(handler, ms)`: the timer's id, or `None` where the host has no timers. One
/// crossing: a turn sets and clears a few timers (its deadline, each cleanup budget).
pub fn set_timeout(handler: &Function, ms: u32) -> Option<JsValue> {
    global_set_timeout(handler, ms).ok()
}

/// `clearTimeout(id)` (nothing where the host has no timers).
pub fn clear_timeout(id: &JsValue) {
    let _ = global_clear_timeout(id);
}

/// Resolves after `ms` milliseconds, through the host's own `setTimeout`. Dropping it before
/// then clears the timer: a budget or a pause that lost its race leaves nothing behind (no
/// timer keeping a process alive, nothing held until it would have fired).
pub fn sleep_ms(ms: u32) -> Sleeping {
    let wakeup = Wakeup::new();
    let id = match set_timeout(wakeup.function(), ms) {
        Some(id) => id,
        None => {
            wakeup.state.borrow_mut().0 = true;
            JsValue::UNDEFINED
        }
    };
    Sleeping { wakeup, id }
}

/// The future of [`sleep_ms`].
pub struct Sleeping {
    wakeup: Wakeup,
    /// The timer, until it fired.
    id: JsValue,
}

impl Future for Sleeping {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let ready = self.wakeup.poll(cx);
        if ready.is_ready() {
            self.id = JsValue::UNDEFINED;
        }
        ready
    }
}

impl Drop for Sleeping {
    fn drop(&mut self) {
        if self.id.is_undefined() || self.wakeup.state.borrow().0 {
            return;
        }
        clear_timeout(&self.id);
    }
}

/// Resolves when `signal` aborts (at once when it already has). Dropping it unhooks its
/// listener: a turn's one signal outlives hundreds of waits, and each would otherwise stay
/// registered (and hold its callback) until the signal fires or is collected.
pub fn aborted(signal: &AbortSignal) -> Aborted {
    let wakeup = Wakeup::new();
    on_abort(signal, wakeup.function());
    Aborted {
        wakeup,
        signal: signal.clone(),
    }
}

/// The future [`aborted`] returns.
pub struct Aborted {
    wakeup: Wakeup,
    signal: AbortSignal,
}

impl Future for Aborted {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.wakeup.poll(cx)
    }
}

impl Drop for Aborted {
    fn drop(&mut self) {
        if self.wakeup.state.borrow().0 {
            return; // a `once` listener that fired is gone already
        }
        if let Some(remove) = get_fn(&self.signal, "removeEventListener") {
            let _ = remove.call2(&self.signal, &key("abort"), self.wakeup.function());
        }
    }
}

/// Calls `callback()` once when `signal` aborts (at once when it already has).
pub fn on_abort(signal: &AbortSignal, callback: &Function) {
    if signal.aborted() {
        let _ = callback.call0(&JsValue::UNDEFINED);
    } else if let Some(add) = get_fn(signal, "addEventListener") {
        let options = Object::new();
        set(&options, "once", true);
        let _ = add.call3(signal, &key("abort"), callback, &options);
    }
}

/// `AbortSignal.timeout(ms)`.
pub fn timeout_signal(ms: u32) -> Result<AbortSignal, JsValue> {
    let ctor = get(&js_sys::global(), "AbortSignal");
    let f = get_fn(&ctor, "timeout")
        .ok_or_else(|| JsValue::from_str("AbortSignal.timeout is missing"))?;
    f.call1(&ctor, &JsValue::from(ms))?
        .dyn_into::<AbortSignal>()
}

/// `AbortSignal.any(signals)`, or a controller that follows them where `any` is missing.
pub fn any_signal(signals: &[&AbortSignal]) -> Result<AbortSignal, JsValue> {
    let ctor = get(&js_sys::global(), "AbortSignal");
    if let Some(any) = get_fn(&ctor, "any") {
        let list: js_sys::Array = signals.iter().collect();
        return any.call1(&ctor, &list)?.dyn_into::<AbortSignal>();
    }
    let controller = web_sys::AbortController::new()?;
    for s in signals {
        let c = controller.clone();
        on_abort(s, Closure::once_into_js(move || c.abort()).unchecked_ref());
    }
    Ok(controller.signal())
}

/// Runs `fut` unless `signal` aborts first (`None` then).
pub async fn unless_aborted<F: Future>(signal: &AbortSignal, fut: F) -> Option<F::Output> {
    if signal.aborted() {
        return None;
    }
    match crate::turn::race::race(fut, aborted(signal)).await {
        crate::turn::race::Either::Left(v) => Some(v),
        crate::turn::race::Either::Right(_) => None,
    }
}

/// A JS `Error` with a `code` property, for errors thrown to the host (construction errors).
pub fn coded_error(code: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    set(&error, "code", code);
    error.into()
}
