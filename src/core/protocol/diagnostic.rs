//! Turn diagnostics: the versioned error shape every client sees, and the one table of
//! boundary failures (HTTP status, code, literal message, retryable) the handler maps to.

use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::Value;

use super::field::{FieldError, Obj, MUST_BE_BOOL, MUST_BE_NON_EMPTY_STRING};

/// The only `version` a v1 TurnDiagnostic carries.
pub const DIAGNOSTIC_VERSION: u32 = 1;

/// `{version: 1, code, message, retryable}` on the wire. `code` matches `^[A-Z][A-Z0-9_]*$`
/// and `message` is non-empty (checked by [`TurnDiagnostic::new`] and by the decoder).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnDiagnostic {
    pub code: String,
    pub message: String,
    pub retryable: bool,
}

impl TurnDiagnostic {
    /// A diagnostic whose code and message obey the wire rules.
    pub fn new(code: &str, message: &str, retryable: bool) -> Result<Self, FieldError> {
        if !is_diagnostic_code(code) {
            return Err(FieldError::new("code", CODE_RULE));
        }
        if message.is_empty() {
            return Err(FieldError::new("message", MUST_BE_NON_EMPTY_STRING));
        }
        Ok(Self {
            code: code.to_owned(),
            message: message.to_owned(),
            retryable,
        })
    }

    /// This diagnostic with extra fields written after the four standard ones
    /// (the handler adds `outcome` to `TURN_REPLAYED`). Additive fields are allowed in v1.
    pub(crate) fn with_outcome<'a>(&'a self, outcome: Option<&'a str>) -> ExtendedDiagnostic<'a> {
        ExtendedDiagnostic {
            diagnostic: self,
            outcome,
        }
    }

    /// The pre-stream error body `{"error": {...}}`, compact, with an optional `outcome`.
    pub fn error_body_json(&self, outcome: Option<&str>) -> String {
        #[derive(serde::Serialize)]
        struct Body<'a> {
            error: ExtendedDiagnostic<'a>,
        }
        super::encode::to_json(&Body {
            error: self.with_outcome(outcome),
        })
    }

    /// `{"version":1,"code":...,"message":...,"retryable":...}`.
    pub fn to_json(&self) -> String {
        super::encode::to_json(self)
    }
}

impl Serialize for TurnDiagnostic {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.with_outcome(None).serialize(s)
    }
}

/// A [`TurnDiagnostic`] plus optional extra fields, serialized in wire order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtendedDiagnostic<'a> {
    pub diagnostic: &'a TurnDiagnostic,
    /// `completed` or `indeterminate` for a replayed turn.
    pub outcome: Option<&'a str>,
}

impl Serialize for ExtendedDiagnostic<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.diagnostic;
        let mut st =
            s.serialize_struct("TurnDiagnostic", 4 + usize::from(self.outcome.is_some()))?;
        st.serialize_field("version", &DIAGNOSTIC_VERSION)?;
        st.serialize_field("code", &d.code)?;
        st.serialize_field("message", &d.message)?;
        st.serialize_field("retryable", &d.retryable)?;
        if let Some(outcome) = self.outcome {
            st.serialize_field("outcome", outcome)?;
        }
        st.end()
    }
}

/// `^[A-Z][A-Z0-9_]*$`
pub fn is_diagnostic_code(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_uppercase())
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Every failure the chat boundary reports, before or inside the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoundaryError {
    MethodNotAllowed,
    UnsupportedMediaType,
    TooLarge,
    InvalidJson,
    InvalidEvent,
    SessionBusy,
    SessionConflict,
    TurnReplayed,
    Timeout,
    Cancelled,
    Internal,
    ChatTurnFailed,
    InvalidConfig,
    /// `client.turn.stop` for a turn that is not running in this session.
    TurnNotRunning,
    /// `client.turn.stop` where no session log is configured (nothing carries the request).
    StopUnavailable,
    /// `toChatResponse`: the host's `authorize(request, sessionId)` said no.
    Forbidden,
    /// `toChatResponse`: `newMessages` holds something that is not a chat message.
    InvalidMessages,
    /// `client.confirmation.resolve` with a token this session does not hold.
    ConfirmationNotFound,
    /// `client.confirmation.resolve` of a record whose tool call no longer waits in the
    /// conversation (the record stays pending; nothing ran).
    ConfirmationUnavailable,
    /// The stored session was written for another chat definition (id, revision, or a
    /// conversation its statechart does not accept).
    SessionIncompatible,
    /// The UI message stream route: the body is not the AI SDK's chat request.
    InvalidUiRequest,
    /// The same route: the body names a thread and a run but is not a usable `RunAgentInput`.
    InvalidRunInput,
    /// A `RunAgentInput` where no session log is configured (the client follows the run there).
    RunNeedsLog,
    /// `POST {api}/:id/messages`: the body is not the Durable Streams TanStack transport's
    /// `{ messages, data }` ending in a user message or an answer with approvals.
    InvalidTanStackSend,
    /// The host's `rateLimit` refused a turn-starting request.
    RateLimited,
    /// `sendPolicy: 'queue'`: as many sends wait as the session holds (`SEND_QUEUE_TURNS_MAX`).
    SendQueueFull,
    /// A queued send waited its whole `sendQueueWaitMs` without its turn coming.
    SendQueueTimeout,
    /// `sendPolicy: 'latest'`: a newer send took this waiting send's place; it never ran.
    TurnSuperseded,
}

/// One row of the boundary table (a row of the diagnostic registry).
pub type BoundaryRow = crate::diagnostics::Row;

impl BoundaryError {
    pub const ALL: [BoundaryError; 28] = [
        Self::MethodNotAllowed,
        Self::UnsupportedMediaType,
        Self::TooLarge,
        Self::InvalidJson,
        Self::InvalidEvent,
        Self::SessionBusy,
        Self::SessionConflict,
        Self::TurnReplayed,
        Self::Timeout,
        Self::Cancelled,
        Self::Internal,
        Self::ChatTurnFailed,
        Self::InvalidConfig,
        Self::TurnNotRunning,
        Self::StopUnavailable,
        Self::Forbidden,
        Self::InvalidMessages,
        Self::ConfirmationNotFound,
        Self::ConfirmationUnavailable,
        Self::SessionIncompatible,
        Self::InvalidUiRequest,
        Self::InvalidRunInput,
        Self::RunNeedsLog,
        Self::InvalidTanStackSend,
        Self::RateLimited,
        Self::SendQueueFull,
        Self::SendQueueTimeout,
        Self::TurnSuperseded,
    ];

    /// The mapping to the registry's rows (`core::diagnostics::chat`: AgentsKit's table plus
    /// turnkeep's additive codes).
    pub const fn row(self) -> BoundaryRow {
        use crate::diagnostics::chat;
        match self {
            Self::MethodNotAllowed => chat::METHOD_NOT_ALLOWED,
            Self::UnsupportedMediaType => chat::UNSUPPORTED_MEDIA_TYPE,
            Self::TooLarge => chat::TOO_LARGE,
            Self::InvalidJson => chat::INVALID_JSON,
            Self::InvalidEvent => chat::INVALID_EVENT,
            Self::SessionBusy => chat::SESSION_BUSY,
            Self::SessionConflict => chat::SESSION_CONFLICT,
            Self::TurnReplayed => chat::TURN_REPLAYED,
            Self::Timeout => chat::TIMEOUT,
            Self::Cancelled => chat::CANCELLED,
            Self::Internal => chat::INTERNAL,
            Self::ChatTurnFailed => chat::TURN_FAILED,
            Self::InvalidConfig => chat::INVALID_CONFIG,
            Self::TurnNotRunning => chat::TURN_NOT_RUNNING,
            Self::StopUnavailable => chat::STOP_UNAVAILABLE,
            Self::Forbidden => chat::FORBIDDEN,
            Self::InvalidMessages => chat::INVALID_MESSAGES,
            Self::ConfirmationNotFound => chat::CONFIRMATION_NOT_FOUND,
            Self::ConfirmationUnavailable => chat::CONFIRMATION_UNAVAILABLE,
            Self::SessionIncompatible => chat::SESSION_INCOMPATIBLE,
            Self::InvalidUiRequest => chat::INVALID_UI_REQUEST,
            Self::InvalidRunInput => chat::INVALID_RUN_INPUT,
            Self::RunNeedsLog => chat::RUN_NEEDS_LOG,
            Self::InvalidTanStackSend => chat::INVALID_TANSTACK_SEND,
            Self::RateLimited => chat::RATE_LIMITED,
            Self::SendQueueFull => chat::SEND_QUEUE_FULL,
            Self::SendQueueTimeout => chat::SEND_QUEUE_TIMEOUT,
            Self::TurnSuperseded => chat::TURN_SUPERSEDED,
        }
    }

    /// HTTP status when reported before the stream starts.
    pub const fn status(self) -> u16 {
        self.row().status
    }

    pub const fn code(self) -> &'static str {
        self.row().code
    }

    /// The diagnostic as sent to clients.
    pub fn diagnostic(self) -> TurnDiagnostic {
        self.row().diagnostic()
    }

    /// The table entry whose code is `code`.
    #[cfg(test)]
    fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.code() == code)
    }
}

const CODE_RULE: &str = "must match ^[A-Z][A-Z0-9_]*$";
const VERSION_ONE_RULE: &str = "must be the number 1";

/// Decodes a TurnDiagnostic object at `path` (unknown fields dropped).
pub(crate) fn decode_diagnostic_at(v: &Value, path: &str) -> Result<TurnDiagnostic, FieldError> {
    let o = Obj::new(v, path)?;
    o.required("version", VERSION_ONE_RULE, |v| {
        v.as_f64().filter(|n| *n == 1.0)
    })?;
    Ok(TurnDiagnostic {
        code: o.required("code", CODE_RULE, |v| {
            v.as_str()
                .filter(|s| is_diagnostic_code(s))
                .map(str::to_owned)
        })?,
        message: o.non_empty_string("message")?,
        retryable: o.required("retryable", MUST_BE_BOOL, Value::as_bool)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn codes() {
        for (code, ok) in [
            ("A", true),
            ("SERVER_1", true),
            ("", false),
            ("_A", false),
            ("1A", false),
            ("Ab", false),
            ("A-B", false),
        ] {
            assert_eq!(is_diagnostic_code(code), ok, "{code}");
        }
    }

    #[test]
    fn table_rows_are_unique_and_valid() {
        for e in BoundaryError::ALL {
            let d = e.diagnostic();
            assert_eq!(
                TurnDiagnostic::new(&d.code, &d.message, d.retryable),
                Ok(d.clone())
            );
            assert_eq!(BoundaryError::from_code(&d.code), Some(e));
        }
        assert_eq!(BoundaryError::from_code("NOPE"), None);
    }

    #[test]
    fn serializes_in_wire_order_with_optional_outcome() {
        let d = BoundaryError::TurnReplayed.diagnostic();
        assert_eq!(
            d.error_body_json(Some("completed")),
            r#"{"error":{"version":1,"code":"TURN_REPLAYED","message":"This turn has already been processed.","retryable":false,"outcome":"completed"}}"#
        );
        assert_eq!(
            BoundaryError::Cancelled.diagnostic().to_json(),
            r#"{"version":1,"code":"REQUEST_CANCELLED","message":"The chat request was cancelled.","retryable":true}"#
        );
    }

    #[test]
    fn decodes_with_precise_errors() {
        let check = |v: Value, want: Result<TurnDiagnostic, &str>| {
            assert_eq!(
                decode_diagnostic_at(&v, "payload").map_err(|e| e.message()),
                want.map_err(str::to_owned),
                "{v}"
            );
        };
        let ok = TurnDiagnostic {
            code: "X".into(),
            message: "m".into(),
            retryable: true,
        };
        check(
            json!({"version": 1, "code": "X", "message": "m", "retryable": true, "extra": 1}),
            Ok(ok.clone()),
        );
        check(
            json!({"version": 1.0, "code": "X", "message": "m", "retryable": true}),
            Ok(ok),
        );
        check(
            json!({"version": "1", "code": "X", "message": "m", "retryable": true}),
            Err("payload.version must be the number 1"),
        );
        check(
            json!({"version": 1, "code": "x", "message": "m", "retryable": true}),
            Err("payload.code must match ^[A-Z][A-Z0-9_]*$"),
        );
        check(
            json!({"version": 1, "code": "X", "message": "", "retryable": true}),
            Err("payload.message must be a non-empty string"),
        );
        check(
            json!({"version": 1, "code": "X", "message": "m", "retryable": 1}),
            Err("payload.retryable must be a boolean"),
        );
        check(json!([]), Err("payload must be a JSON object"));
    }
}
