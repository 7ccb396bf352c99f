//! Renderers verify identity (the seed's ADR-0011: "renderers verify the prepared session
//! identity and revision"): a projection, its markup and the live connection are prepared for
//! one session and one definition revision, and refuse a chunk or a snapshot that names another.
//! The rule is here, once; `ChatProjection`, `renderChatHtml` and `createChatConnection` perform it.
//!
//! What names an identity: a chunk's or snapshot's `sessionId`, a run chunk's `threadId` (AG-UI's
//! thread is the session), and `definitionRevision` (a seed `resolveChatSnapshot` stamped, a
//! chunk a writer stamped). What names none passes: a session's own stream is one session's, and
//! TanStack writers name no revision. An expectation left unset checks nothing.

use serde_json::Value;

use crate::checks::is_safe_id;
use crate::limits::INTEGER_SAFE_MAX;
use crate::protocol::TurnDiagnostic;

/// The session and definition revision a renderer was prepared for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub session_id: Option<String>,
    pub definition_revision: Option<u64>,
}

/// Why a chunk or snapshot was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdentityMismatch {
    /// It names another session.
    ForeignSession,
    /// It names another definition revision (newer or older).
    OtherRevision,
}

impl IdentityMismatch {
    /// (code, literal message, retryable).
    #[rustfmt::skip]
    pub const fn row(self) -> (&'static str, &'static str, bool) {
        match self {
            Self::ForeignSession => ("RENDER_FOREIGN_SESSION", "The chunk or snapshot belongs to another session; nothing was rendered.", false),
            Self::OtherRevision => ("RENDER_REVISION_MISMATCH", "The chunk or snapshot was written for another definition revision; nothing was rendered.", false),
        }
    }

    pub fn diagnostic(self) -> TurnDiagnostic {
        let (code, message, retryable) = self.row();
        TurnDiagnostic {
            code: code.into(),
            message: message.into(),
            retryable,
        }
    }
}

/// Why an expected identity itself is unusable (said to the caller as a thrown `Error`).
pub const SESSION_ID_RULE: &str = "sessionId must be a SafeId";
pub const REVISION_RULE: &str = "definitionRevision must be a safe integer > 0";

impl Identity {
    /// An expectation from a host's values (absent: unchecked).
    pub fn expect(
        session_id: Option<&str>,
        definition_revision: Option<f64>,
    ) -> Result<Identity, &'static str> {
        let session_id = match session_id {
            None => None,
            Some(id) if is_safe_id(id) => Some(id.to_owned()),
            Some(_) => return Err(SESSION_ID_RULE),
        };
        let definition_revision = match definition_revision {
            None => None,
            Some(r) if r.fract() == 0.0 && r >= 1.0 && r <= INTEGER_SAFE_MAX as f64 => {
                Some(r as u64)
            }
            Some(_) => return Err(REVISION_RULE),
        };
        Ok(Identity {
            session_id,
            definition_revision,
        })
    }

    /// True when nothing is expected (every value passes).
    pub fn is_unchecked(&self) -> bool {
        self.session_id.is_none() && self.definition_revision.is_none()
    }

    /// Checks one chunk or snapshot: what it names must be what was prepared.
    pub fn check(&self, value: &Value) -> Result<(), IdentityMismatch> {
        if let Some(expected) = &self.session_id {
            for key in ["sessionId", "threadId"] {
                match value.get(key) {
                    None | Some(Value::Null) => {}
                    Some(named) if named.as_str() == Some(expected.as_str()) => {}
                    Some(_) => return Err(IdentityMismatch::ForeignSession),
                }
            }
        }
        if let Some(expected) = self.definition_revision {
            match value.get("definitionRevision") {
                None | Some(Value::Null) => {}
                Some(named) if named.as_u64() == Some(expected) => {}
                Some(_) => return Err(IdentityMismatch::OtherRevision),
            }
        }
        Ok(())
    }

    /// Checks every chunk before any is used: one foreign chunk refuses the whole delivery.
    pub fn check_all<'a>(
        &self,
        values: impl IntoIterator<Item = &'a Value>,
    ) -> Result<(), IdentityMismatch> {
        if self.is_unchecked() {
            return Ok(());
        }
        values.into_iter().try_for_each(|v| self.check(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_a_renderer_refuses() {
        let prepared = Identity::expect(Some("s1"), Some(2.0)).unwrap();
        let check = |value: Value, expected: Result<(), IdentityMismatch>| {
            assert_eq!(prepared.check(&value), expected, "{value}");
        };
        check(
            json!({ "type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x" }),
            Ok(()),
        );
        check(
            json!({ "type": "RUN_STARTED", "runId": "t", "threadId": "s1" }),
            Ok(()),
        );
        check(
            json!({ "type": "RUN_STARTED", "runId": "t", "threadId": "s2" }),
            Err(IdentityMismatch::ForeignSession),
        );
        check(
            json!({ "messages": [], "sessionId": "s1", "definitionRevision": 2 }),
            Ok(()),
        );
        check(
            json!({ "messages": [], "sessionId": "other" }),
            Err(IdentityMismatch::ForeignSession),
        );
        check(
            json!({ "sessionId": 7 }),
            Err(IdentityMismatch::ForeignSession),
        );
        for revision in [json!(3), json!(1), json!("2"), json!(2.5)] {
            check(
                json!({ "messages": [], "sessionId": "s1", "definitionRevision": revision }),
                Err(IdentityMismatch::OtherRevision),
            );
        }
        // Nothing expected: nothing refused.
        let open = Identity::default();
        assert_eq!(
            open.check(&json!({ "threadId": "any", "definitionRevision": 9 })),
            Ok(())
        );
        // One foreign chunk refuses them all.
        let chunks = [json!({ "threadId": "s1" }), json!({ "threadId": "s9" })];
        assert_eq!(
            prepared.check_all(&chunks),
            Err(IdentityMismatch::ForeignSession)
        );
    }

    #[test]
    fn expectations_must_be_usable() {
        assert_eq!(
            Identity::expect(Some("not safe"), None),
            Err(SESSION_ID_RULE)
        );
        for bad in [0.0, -1.0, 1.5, f64::NAN, 1e300] {
            assert_eq!(
                Identity::expect(None, Some(bad)),
                Err(REVISION_RULE),
                "{bad}"
            );
        }
        assert!(Identity::expect(None, None).unwrap().is_unchecked());
    }
}
