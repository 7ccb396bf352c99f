//! The AI SDK UI message stream's client side, exported to JS (every build with the protocol:
//! the browser's `TurnkeepChatTransport` and a server rendering a first paint run the same
//! rules as the server's routes, `core::ui`):
//!
//! - `toUIMessages(messages, confirmations?)`: a conversation (canonical messages, as a
//!   projection or `ChatMemory` holds them) as `UIMessage[]`;
//! - `UIMessageChunkMapper`: the one mapping from session log chunks to UI message chunks, for a
//!   stream that starts from what a page holds (`rebuild`) and goes on with the chunks it reads.

use js_sys::Array;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::core::projection::LogConfirmation;
use crate::core::protocol::decode_messages;
use crate::core::ui::{turn_answer, ui_messages, ToolConfirmations, UiStream};
use crate::web::convert::{from_json, js_error, to_json};

/// The messages and confirmations a caller hands over (a projection's snapshot shapes).
fn conversation(
    messages: &JsValue,
    confirmations: &JsValue,
) -> Result<(Vec<crate::core::protocol::Message>, ToolConfirmations), JsValue> {
    let value = to_json(messages).map_err(|m| js_error(&m))?;
    let messages = decode_messages(&value)
        .map_err(|e| js_error(&format!("messages must be chat messages: {e}")))?;
    let records: Vec<LogConfirmation> = if confirmations.is_undefined() || confirmations.is_null() {
        Vec::new()
    } else {
        let value = to_json(confirmations).map_err(|m| js_error(&m))?;
        serde_json::from_value(value)
            .map_err(|_| js_error("confirmations must be a snapshot's confirmations"))?
    };
    Ok((messages, ToolConfirmations::from_log(&records)))
}

/// `toUIMessages(messages, confirmations?)` → `UIMessage[]` (one assistant message per turn).
#[wasm_bindgen(js_name = toUIMessages)]
pub fn to_ui_messages(messages: JsValue, confirmations: JsValue) -> Result<JsValue, JsValue> {
    let (messages, confirmations) = conversation(&messages, &confirmations)?;
    Ok(from_json(&Value::Array(ui_messages(
        &messages,
        &confirmations,
    ))))
}

/// `new UIMessageChunkMapper()`: one turn's UI message stream, fed session log chunks.
#[wasm_bindgen(js_name = UIMessageChunkMapper)]
pub struct UiChunkMapper {
    inner: UiStream,
}

#[wasm_bindgen(js_class = UIMessageChunkMapper)]
impl UiChunkMapper {
    #[wasm_bindgen(constructor)]
    pub fn new() -> UiChunkMapper {
        UiChunkMapper {
            inner: UiStream::new(),
        }
    }

    /// Starts from the conversation a page holds mid-turn: the chunks that rebuild its last
    /// turn's answer (a stream that replays from its first `start`), `runId` the run to follow.
    pub fn rebuild(
        &mut self,
        messages: JsValue,
        confirmations: JsValue,
        run_id: Option<String>,
    ) -> Result<Array, JsValue> {
        let (messages, confirmations) = conversation(&messages, &confirmations)?;
        let (stream, chunks) = UiStream::rebuild(turn_answer(&messages), &confirmations);
        self.inner = stream;
        if let Some(run) = run_id {
            self.inner.follow_run(&run);
        }
        Ok(to_array(&chunks))
    }

    /// The UI chunks a log chunk maps to.
    pub fn feed(&mut self, chunk: JsValue) -> Result<Array, JsValue> {
        let chunk = to_json(&chunk).map_err(|m| js_error(&m))?;
        let mut out = Vec::new();
        self.inner.feed(&chunk, &mut out);
        Ok(to_array(&out))
    }

    /// True once the run it follows ended (finished, failed or stopped).
    #[wasm_bindgen(getter)]
    pub fn ended(&self) -> bool {
        self.inner.is_ended()
    }
}

impl Default for UiChunkMapper {
    fn default() -> Self {
        Self::new()
    }
}

fn to_array(chunks: &[Value]) -> Array {
    chunks.iter().map(from_json).collect()
}

/// `new UIMessageStreamReader()`: a UI message stream's bytes back into chunks
/// (`push(bytes)` → `{ chunks, done }`; throws on a stream that is not one).
#[wasm_bindgen(js_name = UIMessageStreamReader)]
pub struct UiReader {
    inner: crate::core::ui::sse::UiStreamReader,
}

#[wasm_bindgen(js_class = UIMessageStreamReader)]
impl UiReader {
    #[wasm_bindgen(constructor)]
    pub fn new() -> UiReader {
        UiReader {
            inner: Default::default(),
        }
    }

    pub fn push(&mut self, bytes: &[u8]) -> Result<js_sys::Object, JsValue> {
        let read = self.inner.push(bytes).map_err(js_error)?;
        let out = js_sys::Object::new();
        crate::web::js::set(&out, "chunks", to_array(&read.chunks));
        crate::web::js::set(&out, "done", read.done);
        Ok(out)
    }
}

impl Default for UiReader {
    fn default() -> Self {
        Self::new()
    }
}
