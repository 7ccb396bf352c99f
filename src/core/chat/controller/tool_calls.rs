//! Tool calls of one streamed response: fragments accumulate per index, and when the response
//! ends each call is resolved into a canonical [`ToolCall`] plus what to do with it.

use serde_json::{Map, Value};

use super::state::ChatError;
use super::{IdSource, ToolInvocation};
use crate::chat::input_schema::check_input;
use crate::chat::model::ToolSpec;
use crate::checks::{is_safe_id, within_bounds, BOUNDED_JSON};
use crate::limits::{
    CONFIRMATION_CALL_ID_CHARS_MAX, TOOL_ARGS_BYTES_MAX, TOOL_CALLS_PER_RESPONSE_MAX,
};
use crate::protocol::{ToolCall, ToolCallStatus};

/// Error texts recorded on a tool call (fixed, so nothing internal leaks).
pub const ARGS_NOT_OBJECT: &str = "The tool arguments are not a JSON object.";
pub const UNKNOWN_TOOL: &str = "The model called a tool that does not exist.";
pub const UNNAMED_TOOL: &str = "The model called a tool without a name.";
pub const ITERATIONS_EXCEEDED: &str = "Not run: the turn reached its tool iteration limit.";
pub const STOPPED: &str = "Stopped before the tool finished.";
pub const RESULT_TOO_LARGE: &str = "The tool result is too large.";
pub const INPUT_TOO_LARGE_TO_CONFIRM: &str =
    "Not run: the tool arguments are too large to ask a person to confirm.";
/// What the model reads when a person rejected a call (a reason follows when one was given).
pub const REJECTED: &str = "A person rejected this tool call.";
/// What the model reads when nobody approved a call in time.
pub const CONFIRMATION_EXPIRED: &str =
    "Not run: the confirmation expired before anyone approved it.";

/// The `name` recorded for a call the model left unnamed (the wire requires a non-empty name).
pub const UNNAMED: &str = "unnamed";

/// Fragments received so far, one entry per tool-call index, in order of first appearance.
#[derive(Clone, Debug, Default)]
pub(super) struct PendingCalls {
    calls: Vec<PendingCall>,
}

#[derive(Clone, Debug)]
pub(super) struct PendingCall {
    index: u32,
    id: Option<String>,
    name: Option<String>,
    args: String,
}

/// What the controller does with one resolved call.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum CallPlan {
    Run(ToolInvocation),
    AwaitConfirmation,
    /// Not runnable; the text is already recorded as the call's error.
    Rejected(String),
}

impl PendingCalls {
    /// Adds one fragment. `id` and `name` are taken from the first fragment that has them.
    pub(super) fn add(
        &mut self,
        index: u32,
        id: Option<String>,
        name: Option<String>,
        args_delta: &str,
    ) -> Result<(), ChatError> {
        let position = match self.calls.iter().position(|c| c.index == index) {
            Some(p) => p,
            None if self.calls.len() >= TOOL_CALLS_PER_RESPONSE_MAX => {
                return Err(ChatError::TooManyToolCalls)
            }
            None => {
                self.calls.push(PendingCall {
                    index,
                    id: None,
                    name: None,
                    args: String::new(),
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[position];
        if call.args.len() + args_delta.len() > TOOL_ARGS_BYTES_MAX {
            return Err(ChatError::ToolArgsTooLarge);
        }
        call.args.push_str(args_delta);
        if call.id.is_none() {
            call.id = id.filter(|s| !s.is_empty());
        }
        if call.name.is_none() {
            call.name = name.filter(|s| !s.is_empty());
        }
        Ok(())
    }

    pub(super) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Takes every call, ordered by index. A call whose id repeats an earlier call's id loses
    /// it (a fresh one is drawn in [`resolve`]): results are matched to calls by id, so ids must
    /// be unique within one response, whatever the model sent.
    pub(super) fn take(&mut self) -> Vec<PendingCall> {
        let mut calls = std::mem::take(&mut self.calls);
        calls.sort_by_key(|c| c.index);
        let mut seen: Vec<String> = Vec::with_capacity(calls.len());
        for call in &mut calls {
            match call.id.take() {
                Some(id) if seen.contains(&id) => {}
                Some(id) => {
                    seen.push(id.clone());
                    call.id = Some(id);
                }
                None => {}
            }
        }
        calls
    }
}

/// Turns a finished call into its canonical form (status `pending`, `requires_confirmation`
/// or `error`) and the plan for it. A missing id is drawn from `ids`. Arguments that break the
/// tool's JSON Schema make the call an error whose text says what is wrong (the model reads it
/// as the call's result); the tool never sees them.
///
/// A call that waits for a person is bound to its confirmation record by id, and the record is
/// stored in the session envelope, whose ids are SafeIds (token `confirm-<id>`): such a call keeps
/// the model's id when it is a SafeId of at most `CONFIRMATION_CALL_ID_CHARS_MAX` characters and
/// gets a drawn one otherwise (models may send any string). Its arguments become
/// the record's `input`, so they must fit the bounded-JSON limits, or the call is not run.
pub(super) fn resolve(
    call: PendingCall,
    tools: &[ToolSpec],
    ids: &mut dyn IdSource,
) -> (ToolCall, CallPlan) {
    let parsed = parse_args(&call.args);
    let spec = call
        .name
        .as_deref()
        .and_then(|n| tools.iter().find(|t| t.name == n));
    let invalid = match (spec, &parsed) {
        (Some(spec), Ok(args)) if !spec.host_validates => {
            let issues = check_input(&spec.parameters, &Value::Object(args.clone()));
            (!issues.is_empty()).then(|| issues.text(&spec.name))
        }
        _ => None,
    };
    let mut plan = match (&call.name, spec, &parsed) {
        (None, _, _) => CallPlan::Rejected(UNNAMED_TOOL.to_owned()),
        (Some(_), None, _) => CallPlan::Rejected(UNKNOWN_TOOL.to_owned()),
        (_, _, Err(rule)) => CallPlan::Rejected((*rule).to_owned()),
        (_, Some(_), Ok(_)) if invalid.is_some() => {
            CallPlan::Rejected(invalid.clone().unwrap_or_default())
        }
        (_, Some(spec), Ok(args)) if spec.requires_confirmation => {
            if within_bounds(&Value::Object(args.clone()), &BOUNDED_JSON) {
                CallPlan::AwaitConfirmation
            } else {
                CallPlan::Rejected(INPUT_TOO_LARGE_TO_CONFIRM.to_owned())
            }
        }
        (Some(name), Some(_), Ok(args)) => CallPlan::Run(ToolInvocation {
            id: String::new(),
            name: name.clone(),
            args: args.clone(),
            idempotency_key: None,
        }),
    };
    let id = match (call.id, &plan) {
        (Some(id), CallPlan::AwaitConfirmation) if !is_confirmable_id(&id) => ids.next_id("call"),
        (Some(id), _) => id,
        (None, _) => ids.next_id("call"),
    };
    if let CallPlan::Run(invocation) = &mut plan {
        invocation.id = id.clone();
    }
    let status = match &plan {
        CallPlan::Run(_) => ToolCallStatus::Pending,
        CallPlan::AwaitConfirmation => ToolCallStatus::RequiresConfirmation,
        CallPlan::Rejected(_) => ToolCallStatus::Error,
    };
    let tool_call = ToolCall {
        id,
        name: call.name.unwrap_or_else(|| UNNAMED.to_owned()),
        args: parsed.unwrap_or_default(),
        status,
        result: None,
        error: match &plan {
            CallPlan::Rejected(text) => Some(text.clone()),
            _ => None,
        },
    };
    (tool_call, plan)
}

/// True for an id a confirmation can be bound to (see [`resolve`]).
pub fn is_confirmable_id(id: &str) -> bool {
    is_safe_id(id) && id.len() <= CONFIRMATION_CALL_ID_CHARS_MAX
}

/// The concatenated argument text as a JSON object; blank text is `{}` (some models send
/// nothing for a tool without parameters).
fn parse_args(text: &str) -> Result<Map<String, Value>, &'static str> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(ARGS_NOT_OBJECT),
    }
}
