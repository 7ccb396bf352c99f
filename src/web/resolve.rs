//! `resolveChatSnapshot({ target })` (feature `server`): reads a session log from its start and
//! projects it with `super::projection` — the seed for server rendering, paired with the offset a
//! live reader continues from.

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::ports::log::SessionLog;
use crate::turn::external::read_projection;
use crate::web::adapters::host::token_of;
use crate::web::adapters::http_log::HttpLog;
use crate::web::adapters::session_log::log_error_to_js;
use crate::web::adapters::JsSessionLog;
use crate::web::convert::js_error;
use crate::web::js::{get, get_fn, set};
use crate::web::projection::snapshot_of;

/// `resolveChatSnapshot({ target, sessionId?, definitionRevision? })` → Promise of `{ messages,
/// renderParts, nativeMessages, confirmations, activeRunId, inFlight, offset }`, stamped with
/// `sessionId` and `definitionRevision` when given (renderers prepared for another refuse it). `target` is a session log (`{ append, read }`, e.g. `createDurableStreamsLog`) or
/// the options of one (`{ url, headers?, fetch? }`). `offset` is `null` for an empty log; pass it
/// to the live connection so seed and live continue one log.
#[cfg(feature = "server")]
#[wasm_bindgen(js_name = resolveChatSnapshot)]
pub fn resolve_chat_snapshot(options: JsValue) -> Result<Promise, JsValue> {
    let target = get(&options, "target");
    let target = if target.is_undefined() {
        options.clone()
    } else {
        target
    };
    let log: Rc<dyn SessionLog> = if get_fn(&target, "read").is_some() {
        Rc::new(
            JsSessionLog::from_js(&target)
                .map_err(|m| js_error(&format!("resolveChatSnapshot: {m}")))?,
        )
    } else {
        Rc::new(
            HttpLog::from_js(&target)
                .map_err(|m| js_error(&format!("resolveChatSnapshot: {m}")))?,
        )
    };
    let cancel = token_of(&get(&options, "signal"));
    // The identity the seed is stamped with, so the renderers it is handed to can check it.
    let identity = crate::web::projection::identity_of(&options, "resolveChatSnapshot")?;
    Ok(future_to_promise(async move {
        let out = resolve_snapshot(log, crate::ports::CancelToken::clone(&cancel)).await?;
        if let Some(id) = &identity.session_id {
            set(&out, "sessionId", id.as_str());
        }
        if let Some(revision) = identity.definition_revision {
            set(&out, "definitionRevision", revision as f64);
        }
        Ok(JsValue::from(out))
    }))
}

/// Reads `log` from its start and projects it: `{ messages, renderParts, nativeMessages,
/// confirmations, activeRunId, offset }` (what `resolveChatSnapshot` resolves to; the demo
/// Worker's session view too).
#[cfg(feature = "server")]
pub(crate) async fn resolve_snapshot(
    log: Rc<dyn SessionLog>,
    cancel: crate::ports::CancelToken,
) -> Result<js_sys::Object, JsValue> {
    let (projection, offset) = read_projection(log.as_ref(), &cancel)
        .await
        .map_err(|e| log_error_to_js(&e))?;
    let out = snapshot_of(&projection);
    set(
        &out,
        "offset",
        offset.as_deref().map_or(JsValue::NULL, JsValue::from_str),
    );
    Ok(out)
}
