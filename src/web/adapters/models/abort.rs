//! An `AbortController` that fires when its owner is dropped, so a dropped model future or
//! stream (a turn that stopped, a deadline that fired) never leaves a fetch or generator running.

use web_sys::{AbortController, AbortSignal};

pub struct AbortOnDrop {
    controller: Option<AbortController>,
}

impl AbortOnDrop {
    /// A fresh controller; `None` only where the host has no `AbortController` at all.
    pub fn new() -> Option<Self> {
        AbortController::new().ok().map(|c| Self {
            controller: Some(c),
        })
    }

    pub fn signal(&self) -> Option<AbortSignal> {
        self.controller.as_ref().map(AbortController::signal)
    }

    /// Aborts now (idempotent).
    pub fn abort(&mut self) {
        if let Some(controller) = self.controller.take() {
            controller.abort();
        }
    }

    /// The call finished normally: dropping no longer aborts.
    pub fn disarm(&mut self) {
        self.controller = None;
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.abort();
    }
}
