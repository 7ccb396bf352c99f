//! The demo model: plays the pure demo script (`core::chat::demo`) with `chunkDelayMs` between
//! chunks, through the host's `setTimeout`. Deterministic, no network.

use std::collections::VecDeque;

use wasm_bindgen::prelude::*;

use super::descriptor::chunk_delay_ms;
use crate::core::chat::demo::{demo_script, DemoStep};
use crate::core::chat::model::{ModelChunk, ModelRequest};
use crate::ports::chat::{ModelAdapter, ModelStream};
use crate::ports::{LocalFuture, PortError};
use crate::web::chat::js::sleep_ms;

/// What the demo's `/fail` command ends with.
pub const DEMO_FAILURE: &str = "the demo model failed on purpose (/fail)";

/// The demo model with its delay between chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemoModel {
    pub chunk_delay_ms: u32,
}

impl DemoModel {
    pub fn new(chunk_delay_ms: u32) -> Self {
        Self { chunk_delay_ms }
    }

    /// From `{ kind: 'turnkeep.demo', chunkDelayMs? }`.
    pub fn from_descriptor(descriptor: &JsValue) -> Result<Self, String> {
        chunk_delay_ms(descriptor).map(Self::new)
    }
}

impl ModelAdapter for DemoModel {
    fn start(&self, request: ModelRequest) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>> {
        let stream = DemoStream {
            steps: demo_script(&request).into(),
            chunk_delay_ms: self.chunk_delay_ms,
            started: false,
        };
        Box::pin(async move { Ok(Box::new(stream) as Box<dyn ModelStream>) })
    }
}

struct DemoStream {
    steps: VecDeque<DemoStep>,
    chunk_delay_ms: u32,
    /// The first chunk comes at once; each later one `chunk_delay_ms` after the previous.
    started: bool,
}

impl ModelStream for DemoStream {
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>> {
        Box::pin(async move {
            self.steps.front()?;
            if self.started && self.chunk_delay_ms > 0 {
                let _ = sleep_ms(self.chunk_delay_ms).await; // dropping this future is the abort
            }
            self.started = true;
            match self.steps.pop_front()? {
                DemoStep::Chunk(chunk) => Some(Ok(chunk)),
                DemoStep::Fail => {
                    self.steps.clear();
                    Some(Err(PortError::new(DEMO_FAILURE)))
                }
            }
        })
    }

    fn abort(&mut self) {
        self.steps.clear();
    }
}
