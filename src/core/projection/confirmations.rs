//! The tool confirmations a session log shows: what a client needs to draw an Approve / Reject
//! card and post `client.confirmation.resolve` (the token), and how each one ended. Read from
//! TanStack's approval request (`CUSTOM approval-requested`, `approval.id`), AG-UI's interrupt
//! outcome of `RUN_FINISHED` (`interrupts[].id`, `expiresAt`) and turnkeep's
//! `CUSTOM turnkeep.confirmation` (the record's state as a turn changed it). The session
//! envelope stays the authority; a log can lag it (a turn that crashed before its release) or
//! lead it (a release that failed), and the resolve answer says which state is real.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::chunks::{APPROVAL_REQUESTED, CONFIRMATION, INTERRUPT_KIND_APPROVAL};
use crate::checks::parse_iso_millis_utc;
use crate::session::{decode_confirmations, ConfirmationStatus};

/// One confirmation as the log shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogConfirmation {
    pub token: String,
    pub tool_call_id: String,
    /// The tool's name (a TanStack approval request) or the record's `action`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(default)]
    pub input: Map<String, Value>,
    /// Epoch milliseconds, when the log says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    pub status: ConfirmationStatus,
}

/// The confirmations of a log, in order of first appearance.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Confirmations {
    list: Vec<LogConfirmation>,
}

impl Confirmations {
    pub(crate) fn list(&self) -> &[LogConfirmation] {
        &self.list
    }

    /// The confirmations a client holds already (a seed's `confirmations`, as `list` serializes
    /// them); entries that are not one are skipped.
    pub(crate) fn from_seed(seed: &Value) -> Confirmations {
        let list = seed
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|item| serde_json::from_value::<LogConfirmation>(item.clone()).ok())
            .filter(|c| !c.token.is_empty() && !c.tool_call_id.is_empty())
            .fold(Vec::<LogConfirmation>::new(), |mut list, c| {
                if !list.iter().any(|known| known.token == c.token) {
                    list.push(c);
                }
                list
            });
        Confirmations { list }
    }

    /// A `CUSTOM` chunk named `name` with `value`: an approval request or a record's state.
    pub(crate) fn custom(&mut self, name: Option<&str>, value: &Value) {
        match name {
            Some(APPROVAL_REQUESTED) => {
                let (Some(token), Some(call_id)) = (
                    text(value.pointer("/approval/id")),
                    text(value.get("toolCallId")),
                ) else {
                    return;
                };
                self.upsert(LogConfirmation {
                    token: token.to_owned(),
                    tool_call_id: call_id.to_owned(),
                    action: text(value.get("toolName")).map(str::to_owned),
                    input: object(value.get("input")),
                    expires_at: None,
                    status: ConfirmationStatus::Pending,
                });
            }
            Some(CONFIRMATION) => {
                let Ok(mut records) = decode_confirmations(&Value::Array(vec![value.clone()]))
                else {
                    return;
                };
                if let Some(record) = records.pop() {
                    self.set(LogConfirmation {
                        token: record.token,
                        tool_call_id: record.tool_call_id,
                        action: Some(record.action),
                        input: record.input,
                        expires_at: Some(record.expires_at),
                        status: record.status,
                    });
                }
            }
            _ => {}
        }
    }

    /// A `RUN_FINISHED` chunk: its approval interrupts, if its outcome is an interrupt.
    pub(crate) fn run_finished(&mut self, chunk: &Value) {
        if chunk.pointer("/outcome/type").and_then(Value::as_str) != Some("interrupt") {
            return;
        }
        let interrupts = chunk
            .pointer("/outcome/interrupts")
            .and_then(Value::as_array);
        for interrupt in interrupts.into_iter().flatten() {
            let approval = interrupt.pointer("/metadata/kind").and_then(Value::as_str)
                == Some(INTERRUPT_KIND_APPROVAL)
                || text(interrupt.get("reason")) == Some("approval_required");
            let (Some(token), Some(call_id)) =
                (text(interrupt.get("id")), text(interrupt.get("toolCallId")))
            else {
                continue;
            };
            if !approval {
                continue;
            }
            self.upsert(LogConfirmation {
                token: token.to_owned(),
                tool_call_id: call_id.to_owned(),
                action: text(interrupt.pointer("/metadata/toolName")).map(str::to_owned),
                input: object(interrupt.pointer("/metadata/input")),
                expires_at: text(interrupt.get("expiresAt")).and_then(parse_iso_millis_utc),
                status: ConfirmationStatus::Pending,
            });
        }
    }

    /// Adds a newly requested confirmation, or completes what an earlier chunk said about it
    /// (its status is kept: a request never moves a record back to pending).
    fn upsert(&mut self, new: LogConfirmation) {
        match self.list.iter_mut().find(|c| c.token == new.token) {
            Some(known) => {
                known.action = known.action.take().or(new.action);
                known.expires_at = known.expires_at.or(new.expires_at);
                if known.input.is_empty() {
                    known.input = new.input;
                }
            }
            None => self.list.push(new),
        }
    }

    /// A record's state as a turn wrote it replaces what the log said before.
    fn set(&mut self, record: LogConfirmation) {
        match self.list.iter_mut().find(|c| c.token == record.token) {
            Some(known) => *known = record,
            None => self.list.push(record),
        }
    }
}

fn text(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn object(value: Option<&Value>) -> Map<String, Value> {
    value
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}
