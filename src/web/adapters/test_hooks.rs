//! **Test-only** wasm exports: they let `node --test` drive each JS-backed adapter directly
//! (tests/js/openai-fixture.test.mjs, tests/js/adapters.test.mjs). They are not part of the
//! public API, are not re-exported by js/api.mjs, and may change without notice; their names
//! start with `__` and end with `ForTest`.

use js_sys::Function;
use serde_json::{json, Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

use super::chat_memory::JsChatMemory;
use super::models::model_from_js;
use super::session_storage::JsSessionStorage;
use super::tool::JsTool;
use crate::core::chat::model::{FinishReason, ModelChunk, ModelRequest, ToolSpec};
use crate::core::protocol::message::{decode_messages, messages_to_value};
use crate::ports::chat::{CancelToken, ChatMemory, Tool, ToolContext};
use crate::ports::session::SessionStorage;
use crate::storage::check_session_storage;
use crate::web::convert::{from_json, js_error, to_json};
use crate::web::js::{get, sleep_ms};

/// **Test only.** `__streamModelForTest(model, { messages, tools? }, { abortAfterChunks? })` ->
/// Promise of `{ chunks, error?, afterAbort? }`: starts the model adapter `model_from_js` picks,
/// collects its chunks as `{type: 'text'|'tool-call'|'finish', ...}` until it ends or fails
/// (`error` is the `PortError` text). With `abortAfterChunks: n` it calls `abort()` after `n`
/// chunks and reports what one more `next_chunk` gave (`afterAbort`, `null` when nothing).
#[wasm_bindgen(js_name = __streamModelForTest)]
pub fn stream_model_for_test(
    model: JsValue,
    request: JsValue,
    options: JsValue,
) -> Result<js_sys::Promise, JsValue> {
    let adapter = model_from_js(&model).map_err(|m| js_error(&m))?;
    let request = read_request(&request).map_err(|m| js_error(&m))?;
    let abort_after = get(&options, "abortAfterChunks")
        .as_f64()
        .map(|n| n as usize);
    Ok(future_to_promise(async move {
        let mut out = Map::new();
        let mut chunks = Vec::new();
        let mut stream = match adapter.start(request).await {
            Ok(stream) => stream,
            Err(e) => {
                out.insert("chunks".into(), Value::Array(chunks));
                out.insert("error".into(), Value::String(e.message));
                return Ok(from_json(&Value::Object(out)));
            }
        };
        loop {
            if abort_after == Some(chunks.len()) {
                stream.abort();
                let after = stream.next_chunk().await;
                let after = match after {
                    None => Value::Null,
                    Some(Ok(c)) => chunk_value(&c),
                    Some(Err(e)) => json!({ "error": e.message }),
                };
                out.insert("afterAbort".into(), after);
                break;
            }
            match stream.next_chunk().await {
                None => break,
                Some(Ok(chunk)) => chunks.push(chunk_value(&chunk)),
                Some(Err(e)) => {
                    out.insert("error".into(), Value::String(e.message));
                    break;
                }
            }
        }
        out.insert("chunks".into(), Value::Array(chunks));
        Ok(from_json(&Value::Object(out)))
    }))
}

/// **Test only.** `__sessionStorageConformanceForTest(makeStore)` -> Promise of
/// `{ passed: string[], failed: { name, detail }[] }`: the shared SessionStorage conformance
/// suite run over `JsSessionStorage`, one fresh host store from `makeStore()` per case.
#[wasm_bindgen(js_name = __sessionStorageConformanceForTest)]
pub fn session_storage_conformance_for_test(
    make_store: Function,
) -> Result<js_sys::Promise, JsValue> {
    let first_host = make_store.call0(&JsValue::UNDEFINED)?;
    JsSessionStorage::from_js(&first_host).map_err(|m| js_error(&m))?;
    Ok(future_to_promise(async move {
        // A factory that stops returning stores falls back to the first one, whose shared state
        // then fails the suite (an honest failure, not a panic).
        let make = || {
            make_store
                .call0(&JsValue::UNDEFINED)
                .ok()
                .and_then(|host| JsSessionStorage::from_js(&host).ok())
                .unwrap_or_else(|| JsSessionStorage::from_js(&first_host).expect("checked above"))
        };
        let report = check_session_storage(make).await;
        let failed: Vec<Value> = report
            .failed
            .iter()
            .map(|f| json!({ "name": f.name, "detail": f.detail }))
            .collect();
        Ok(from_json(
            &json!({ "passed": report.passed, "failed": failed }),
        ))
    }))
}

/// **Test only.** `__sessionStorageForTest(store, 'load', sessionId)` or
/// `(store, 'save', snapshot, expectedCursor)` -> Promise of `{ ok: true, value }` or
/// `{ ok: false, error }` through `JsSessionStorage` (`value`: the loaded JSON or `null`; the
/// save's boolean).
#[wasm_bindgen(js_name = __sessionStorageForTest)]
pub fn session_storage_for_test(
    store: JsValue,
    op: String,
    a: JsValue,
    b: JsValue,
) -> Result<js_sys::Promise, JsValue> {
    let storage = JsSessionStorage::from_js(&store).map_err(|m| js_error(&m))?;
    let snapshot = if op == "save" {
        to_json(&a).map_err(|m| js_error(&m))?
    } else {
        Value::Null
    };
    Ok(future_to_promise(async move {
        let result = match op.as_str() {
            "load" => {
                let id = a.as_string().unwrap_or_default();
                storage
                    .load(&id, &CancelToken::new())
                    .await
                    .map(|v| v.unwrap_or(Value::Null))
            }
            "save" => {
                let cursor = b.as_f64().map(|n| n as u64);
                storage
                    .save(&snapshot, cursor, &CancelToken::new())
                    .await
                    .map(Value::Bool)
            }
            _ => return Err(js_error("op must be 'load' or 'save'")),
        };
        Ok(from_json(&outcome(result.map_err(|e| e.message))))
    }))
}

/// **Test only.** `__chatMemoryForTest(memory, messages?)` -> Promise of `{ ok: true, value }`
/// or `{ ok: false, error }`: with `messages`, saves them (canonicalised) through `JsChatMemory`
/// then loads; without, only loads. `value` is the loaded canonical messages.
#[wasm_bindgen(js_name = __chatMemoryForTest)]
pub fn chat_memory_for_test(
    memory: JsValue,
    messages: JsValue,
) -> Result<js_sys::Promise, JsValue> {
    let memory = JsChatMemory::from_js(&memory).map_err(|m| js_error(&m))?;
    let to_save = if messages.is_undefined() {
        None
    } else {
        let json = to_json(&messages).map_err(|m| js_error(&m))?;
        Some(decode_messages(&json).map_err(|e| js_error(&e.message()))?)
    };
    Ok(future_to_promise(async move {
        let result = async {
            if let Some(messages) = &to_save {
                memory.save(messages, None, &CancelToken::new()).await?;
            }
            memory.load(&CancelToken::new()).await
        }
        .await;
        Ok(from_json(&outcome(
            result.map(|m| messages_to_value(&m)).map_err(|e| e.message),
        )))
    }))
}

/// **Test only.** `__runToolForTest(tool, args, { cancelAfterMs? })` -> Promise of
/// `{ ok: true, value: resultText }` or `{ ok: false, error: errorText }`, plus `spec`. With
/// `cancelAfterMs` the turn's cancel token fires after that many milliseconds.
#[wasm_bindgen(js_name = __runToolForTest)]
pub fn run_tool_for_test(
    tool: JsValue,
    args: JsValue,
    options: JsValue,
) -> Result<js_sys::Promise, JsValue> {
    let rules = crate::web::adapters::ToolRules {
        agentskit: get(&options, "agentskit").as_bool() == Some(true),
        validate_args: None,
    };
    let tool = JsTool::from_js(&tool, &rules).map_err(|m| js_error(&m))?;
    let args = match to_json(&args).map_err(|m| js_error(&m))? {
        Value::Object(map) => map,
        _ => return Err(js_error("args must be an object")),
    };
    let cancel_after = get(&options, "cancelAfterMs").as_f64().map(|n| n as u32);
    Ok(future_to_promise(async move {
        let token = CancelToken::new();
        if let Some(ms) = cancel_after {
            let t = token.clone();
            wasm_bindgen_futures::spawn_local(async move {
                sleep_ms(ms).await;
                t.cancel();
            });
        }
        let result = tool
            .execute(args, ToolContext::new(token, "call-test"))
            .await
            .map(Value::String)
            .map_err(|e| match e {
                crate::ports::chat::ToolFailure::Failed(e) => e.message,
                crate::ports::chat::ToolFailure::InvalidInput(issues) => {
                    issues.text(&tool.spec().name)
                }
            });
        let mut value = outcome(result);
        value["spec"] = spec_value(tool.spec());
        Ok(from_json(&value))
    }))
}

fn outcome(result: Result<Value, String>) -> Value {
    match result {
        Ok(value) => json!({ "ok": true, "value": value }),
        Err(error) => json!({ "ok": false, "error": error }),
    }
}

fn spec_value(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "requiresConfirmation": spec.requires_confirmation,
    })
}

fn read_request(value: &JsValue) -> Result<ModelRequest, String> {
    let messages = decode_messages(&to_json(&get(value, "messages"))?).map_err(|e| e.message())?;
    let tools = get(value, "tools");
    let tools = match tools.dyn_ref::<js_sys::Array>() {
        None => Vec::new(),
        Some(list) => list
            .iter()
            .map(|t| JsTool::from_js(&t, &Default::default()).map(|t| t.spec().clone()))
            .collect::<Result<Vec<_>, _>>()?,
    };
    Ok(ModelRequest::new(messages, tools))
}

/// A model chunk in the shape a host model yields (see `models::custom`).
fn chunk_value(chunk: &ModelChunk) -> Value {
    match chunk {
        ModelChunk::Text(text) => json!({ "type": "text", "text": text }),
        ModelChunk::Reasoning(text) => json!({ "type": "reasoning", "text": text }),
        ModelChunk::ToolCall {
            index,
            id,
            name,
            args_delta,
        } => {
            let mut v = json!({ "type": "tool-call", "index": index, "argsDelta": args_delta });
            if let Some(id) = id {
                v["id"] = json!(id);
            }
            if let Some(name) = name {
                v["name"] = json!(name);
            }
            v
        }
        ModelChunk::Finish { reason, usage } => {
            let mut v = json!({ "type": "finish", "reason": reason_text(*reason) });
            if let Some(u) = usage {
                v["usage"] = json!({
                    "promptTokens": u.prompt_tokens,
                    "completionTokens": u.completion_tokens,
                    "totalTokens": u.total_tokens,
                });
            }
            v
        }
    }
}

fn reason_text(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::Length => "length",
        FinishReason::ToolCalls => "tool-calls",
        FinishReason::ContentFilter => "content-filter",
        FinishReason::Other => "other",
    }
}
