//! `createChatHandler(options)`: reading and validating the host's options once, at
//! construction. A bad option throws an Error with `code: "SERVER_INVALID_CONFIG"`.

use js_sys::Function;
use wasm_bindgen::prelude::*;

use crate::core::limits;
use crate::core::protocol::BoundaryError;

use super::js::coded_error;
use crate::web::options::OptionReader;

/// The validated options of one handler.
pub struct HandlerOptions {
    pub authenticate: Option<Function>,
    pub resolve_definition: Function,
    pub session_storage: Function,
    pub timeout_ms: u32,
    pub cleanup_timeout_ms: u32,
    pub body_bytes_max: u64,
    pub now: Option<Function>,
    pub create_id: Option<Function>,
    /// `sessionLog(context, sessionId, signal)` → the session's durable log, or nothing.
    pub session_log: Option<Function>,
    /// `onError(error, { stage, sessionId?, turnId? })`: every fault, for the operator.
    pub on_error: Option<Function>,
    /// `rateLimit({ context, sessionId, signal })` → `{ ok: true } | { ok: false, retryAfterMs? }`,
    /// asked before a turn-starting request claims anything.
    pub rate_limit: Option<Function>,
    /// `onTurnEnd({ sessionId, turnId, outcome, finishReason, usage, durationMs, errorCode? })`.
    pub on_turn_end: Option<Function>,
    /// `onMetric(record)`: each ended turn's metrics (`turn::metrics`).
    pub on_metric: Option<Function>,
    /// An OpenTelemetry `Tracer` (`startSpan`): each ended turn's spans (`turn::spans`).
    pub tracer: Option<JsValue>,
    /// How long a tool confirmation stays approvable (`confirmationTtlMs`).
    pub confirmation_ttl_ms: u64,
    /// The snapshot stream's byte budget (`snapshotBytesPerSecond`, `core::coalesce`).
    pub snapshot_bytes_per_s: u64,
    /// How long a model stream may go quiet mid-answer (`modelStallMs`).
    pub model_stall_ms: u64,
    /// What a send does while a turn runs (`sendPolicy`, `sendQueueWaitMs`).
    pub send: crate::turn::SendRules,
    /// The definitions `resolveDefinition` returned, as read.
    pub definitions: super::definition::DefinitionCache,
}

impl HandlerOptions {
    /// Reads `options`; `body_bytes_default` is the handler's `maxBodyBytes` when none is given.
    pub fn from_js(options: &JsValue, body_bytes_default: u64) -> Result<Self, JsValue> {
        if !options.is_object() {
            return Err(invalid("options must be an object"));
        }
        let read = OptionReader {
            options,
            invalid: &invalid,
        };
        Ok(Self {
            authenticate: read.optional_fn("authenticate")?,
            resolve_definition: read.required_fn("resolveDefinition")?,
            session_storage: read.required_fn("sessionStorage")?,
            timeout_ms: read.positive_ms("timeoutMs", limits::TURN_TIMEOUT_MS_DEFAULT)?,
            cleanup_timeout_ms: read
                .positive_ms("cleanupTimeoutMs", limits::CLEANUP_TIMEOUT_MS_DEFAULT)?,
            body_bytes_max: read.positive_int("maxBodyBytes", body_bytes_default)?,
            now: read.optional_fn("now")?,
            create_id: read.optional_fn("createId")?,
            session_log: read.optional_fn("sessionLog")?,
            on_error: read.optional_fn("onError")?,
            rate_limit: read.optional_fn("rateLimit")?,
            on_turn_end: read.optional_fn("onTurnEnd")?,
            on_metric: read.optional_fn("onMetric")?,
            tracer: tracer(&read)?,
            confirmation_ttl_ms: read
                .positive_int("confirmationTtlMs", limits::CONFIRMATION_TTL_MS_DEFAULT)?,
            snapshot_bytes_per_s: read.positive_int(
                "snapshotBytesPerSecond",
                limits::SNAPSHOT_BYTES_PER_S_DEFAULT,
            )?,
            model_stall_ms: read.positive_int("modelStallMs", limits::MODEL_STALL_MS_DEFAULT)?,
            send: send_rules(&read)?,
            definitions: Default::default(),
        })
    }
}

/// `sendPolicy` (`'reject'` | `'queue'` | `'latest'`) and `sendQueueWaitMs`, which must leave
/// the turn some of the request's `timeoutMs` (the wait counts against it). `latest` stops the
/// running turn through the session log, so it needs `sessionLog`.
fn send_rules(read: &OptionReader<'_>) -> Result<crate::turn::SendRules, JsValue> {
    use crate::core::session::SendPolicy;
    let value = read.value("sendPolicy");
    let policy = if value.is_undefined() {
        SendPolicy::Reject
    } else {
        value
            .as_string()
            .as_deref()
            .and_then(SendPolicy::parse)
            .ok_or_else(|| read.error("sendPolicy must be 'reject', 'queue' or 'latest'"))?
    };
    let timeout_ms = u64::from(read.positive_ms("timeoutMs", limits::TURN_TIMEOUT_MS_DEFAULT)?);
    let default_wait_ms = limits::SEND_QUEUE_WAIT_MS_DEFAULT.min(timeout_ms / 2);
    let wait_ms = read.positive_int("sendQueueWaitMs", default_wait_ms.max(1))?;
    // Only a send that waits spends its deadline on waiting (`reject` never does).
    if policy != SendPolicy::Reject && wait_ms >= timeout_ms {
        return Err(
            read.error("sendQueueWaitMs must be less than timeoutMs (the wait counts against it)")
        );
    }
    if policy == SendPolicy::Latest && read.value("sessionLog").is_undefined() {
        return Err(read.error("sendPolicy 'latest' stops the running turn through the session log: it needs sessionLog"));
    }
    Ok(crate::turn::SendRules { policy, wait_ms })
}

impl HandlerOptions {
    /// The hooks that hear of each ended turn.
    pub fn observers(&self) -> super::host::Observers {
        super::host::Observers {
            on_turn_end: self.on_turn_end.clone(),
            on_metric: self.on_metric.clone(),
            tracer: self.tracer.clone(),
        }
    }
}

/// `tracer`: absent, or an object with `startSpan` (an `@opentelemetry/api` Tracer).
fn tracer(read: &OptionReader<'_>) -> Result<Option<JsValue>, JsValue> {
    let tracer = read.value("tracer");
    if tracer.is_undefined() {
        return Ok(None);
    }
    if super::js::get_fn(&tracer, "startSpan").is_none() {
        return Err(read.error("tracer must be an OpenTelemetry Tracer (an object with startSpan)"));
    }
    Ok(Some(tracer))
}

fn invalid(detail: &str) -> JsValue {
    let row = BoundaryError::InvalidConfig.row();
    coded_error(row.code, &format!("{} {detail}", row.message))
}
