//! The demo model and its tools as port adapters: they play the pure scripts of
//! [`turnkeep_core::chat::demo`], pausing `chunk_delay_ms` before each chunk through a
//! [`Sleep`] port (none: no pauses, as in tests).

use std::collections::VecDeque;
use std::rc::Rc;

use serde_json::{Map, Value};

use turnkeep_core::chat::demo::{demo_script, demo_tools, run_demo_tool, DemoStep};
use turnkeep_core::chat::{ModelChunk, ModelRequest, ToolSpec};
use turnkeep_ports::chat::{
    ModelAdapter, ModelInfo, ModelStream, Sleep, Tool, ToolContext, ToolFailure,
};
use turnkeep_ports::{LocalFuture, PortError};

/// The deterministic demo model (`core::chat::demo` has its scripts).
#[derive(Clone)]
pub struct DemoModel {
    sleep: Option<Rc<dyn Sleep>>,
    chunk_delay_ms: u64,
}

impl DemoModel {
    /// Pauses `chunk_delay_ms` before each chunk through `sleep`; `None` streams at once.
    pub fn new(sleep: Option<Rc<dyn Sleep>>, chunk_delay_ms: u64) -> Self {
        Self {
            sleep,
            chunk_delay_ms,
        }
    }
}

impl ModelAdapter for DemoModel {
    fn start(
        &self,
        request: ModelRequest,
    ) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>> {
        let stream = DemoStream {
            steps: demo_script(&request).into(),
            sleep: self.sleep.clone(),
            chunk_delay_ms: self.chunk_delay_ms,
        };
        Box::pin(async move { Ok(Box::new(stream) as Box<dyn ModelStream>) })
    }

    fn describe(&self) -> ModelInfo {
        ModelInfo {
            provider: Some("turnkeep".to_owned()),
            model: Some("demo".to_owned()),
        }
    }
}

struct DemoStream {
    steps: VecDeque<DemoStep>,
    sleep: Option<Rc<dyn Sleep>>,
    chunk_delay_ms: u64,
}

impl ModelStream for DemoStream {
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>> {
        Box::pin(async move {
            let step = self.steps.pop_front()?;
            if let (
                Some(sleep),
                DemoStep::Chunk(ModelChunk::Text(_) | ModelChunk::ToolCall { .. }),
            ) = (&self.sleep, &step)
            {
                sleep.sleep(self.chunk_delay_ms).await;
            }
            Some(match step {
                DemoStep::Chunk(chunk) => Ok(chunk),
                DemoStep::Fail => {
                    self.steps.clear();
                    Err(PortError::new("the demo model failed on purpose (/fail)"))
                }
            })
        })
    }

    fn abort(&mut self) {
        self.steps.clear();
    }
}

/// One of the demo tools (`lookup`, `transfer`), answering as [`run_demo_tool`] does.
pub struct DemoTool {
    spec: ToolSpec,
}

impl DemoTool {
    /// Both demo tools, in the order of [`demo_tools`].
    pub fn all() -> Vec<DemoTool> {
        demo_tools()
            .into_iter()
            .map(|spec| DemoTool { spec })
            .collect()
    }
}

impl Tool for DemoTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn execute(
        &self,
        args: Map<String, Value>,
        _context: ToolContext,
    ) -> LocalFuture<'_, Result<String, ToolFailure>> {
        let result = run_demo_tool(&self.spec.name, &args).map_err(|e| PortError::new(e).into());
        Box::pin(async move { result })
    }
}
