//! The trace of one ended turn, for a chat handler's `tracer`: what each span is (name, kind,
//! parent, start and end on the turn's clock, attributes, error) is decided here from the
//! turn's [`TurnSummary`], and the shell only hands each one to `tracer.startSpan` and
//! `span.end` with these times. Names and attributes follow the OpenTelemetry GenAI semantic
//! conventions (Development status; the agent and inference span documents):
//!
//! - the turn: `invoke_agent {definition id}` (INTERNAL), `gen_ai.operation.name = invoke_agent`,
//!   `gen_ai.agent.name`, the summed `gen_ai.usage.*`, `gen_ai.response.finish_reasons`;
//! - each model call: `chat {model}` (CLIENT), `gen_ai.operation.name = chat`,
//!   `gen_ai.provider.name` and `gen_ai.request.model` when the model says, its usage and
//!   finish reason;
//! - each tool run: `execute_tool {tool}` (INTERNAL), `gen_ai.tool.name`, `gen_ai.tool.call.id`,
//!   `gen_ai.tool.type = function`;
//! - each approval (not a GenAI operation, so turnkeep's own name): `approval {tool}`
//!   (INTERNAL), the tool's name and call id and `turnkeep.approval.decision`.
//!
//! Every span has `gen_ai.conversation.id` (the session). The turn comes first and is every
//! other span's parent. A failed span has `error.type` and the error status. Never message text,
//! arguments or results.

use super::steps::{ModelCall, Step, StepEnd, ToolRun};
use super::summary::{Approval, TurnSummary};
use turnkeep_core::chat::FinishReason;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    Internal,
    Client,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrValue {
    Str(String),
    Int(u64),
    Strs(Vec<String>),
}

/// One span to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpanRecord {
    pub name: String,
    pub kind: SpanKind,
    /// The index of its parent in the same list (always earlier); `None` for the turn.
    pub parent: Option<usize>,
    pub start_ms: u64,
    pub end_ms: u64,
    pub attributes: Vec<(&'static str, AttrValue)>,
    /// `error.type` of a failed span (its status is then the error status).
    pub error: Option<String>,
}

/// The turn's spans, the turn's own first.
pub fn turn_spans(summary: &TurnSummary) -> Vec<SpanRecord> {
    let mut spans = vec![turn_span(summary)];
    for step in &summary.steps {
        spans.push(match step {
            Step::Model(call) => model_span(summary, call),
            Step::Tool(run) => tool_span(summary, run),
        });
    }
    spans.extend(summary.approvals.iter().map(|a| approval_span(summary, a)));
    for span in &mut spans {
        if let Some(error) = &span.error {
            span.attributes.push(("error.type", str(error)));
        }
    }
    spans
}

fn str(value: &str) -> AttrValue {
    AttrValue::Str(value.to_owned())
}

fn turn_span(summary: &TurnSummary) -> SpanRecord {
    let mut attributes = vec![
        ("gen_ai.operation.name", str("invoke_agent")),
        ("gen_ai.agent.name", str(&summary.agent)),
        ("gen_ai.conversation.id", str(&summary.session_id)),
    ];
    model_attributes(summary, &mut attributes);
    attributes.extend([
        (
            "gen_ai.usage.input_tokens",
            AttrValue::Int(summary.usage.prompt_tokens),
        ),
        (
            "gen_ai.usage.output_tokens",
            AttrValue::Int(summary.usage.completion_tokens),
        ),
        (
            "gen_ai.response.finish_reasons",
            AttrValue::Strs(vec![summary.finish_reason.to_owned()]),
        ),
        ("turnkeep.turn.id", str(&summary.turn_id)),
        ("turnkeep.turn.outcome", str(summary.outcome)),
    ]);
    let failed =
        matches!(summary.finish_reason, "error" | "timeout") || summary.outcome != "completed";
    let error = failed.then(|| {
        summary
            .error_code
            .unwrap_or(match summary.finish_reason {
                "error" | "timeout" => summary.finish_reason,
                _ => "indeterminate",
            })
            .to_owned()
    });
    SpanRecord {
        name: format!("invoke_agent {}", summary.agent),
        kind: SpanKind::Internal,
        parent: None,
        start_ms: summary.started_ms,
        end_ms: summary.ended_ms,
        attributes,
        error,
    }
}

/// `gen_ai.provider.name` and `gen_ai.request.model`, as far as the model says.
fn model_attributes(summary: &TurnSummary, attributes: &mut Vec<(&'static str, AttrValue)>) {
    if let Some(provider) = &summary.model.provider {
        attributes.push(("gen_ai.provider.name", str(provider)));
    }
    if let Some(model) = &summary.model.model {
        attributes.push(("gen_ai.request.model", str(model)));
    }
}

fn model_span(summary: &TurnSummary, call: &ModelCall) -> SpanRecord {
    let mut attributes = vec![
        ("gen_ai.operation.name", str("chat")),
        ("gen_ai.conversation.id", str(&summary.session_id)),
    ];
    model_attributes(summary, &mut attributes);
    if let Some(usage) = call.usage {
        attributes.push((
            "gen_ai.usage.input_tokens",
            AttrValue::Int(usage.prompt_tokens),
        ));
        attributes.push((
            "gen_ai.usage.output_tokens",
            AttrValue::Int(usage.completion_tokens),
        ));
    }
    if let Some(reason) = call.finish {
        let reason = match reason {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other => "other",
        };
        attributes.push((
            "gen_ai.response.finish_reasons",
            AttrValue::Strs(vec![reason.to_owned()]),
        ));
    }
    let name = match &summary.model.model {
        Some(model) => format!("chat {model}"),
        None => "chat".to_owned(),
    };
    SpanRecord {
        name,
        kind: SpanKind::Client,
        parent: Some(0),
        start_ms: call.started_ms,
        end_ms: call.ended_ms.max(call.started_ms),
        attributes,
        error: error_type(call.end, "model_error"),
    }
}

fn tool_span(summary: &TurnSummary, run: &ToolRun) -> SpanRecord {
    SpanRecord {
        name: format!("execute_tool {}", run.name),
        kind: SpanKind::Internal,
        parent: Some(0),
        start_ms: run.started_ms,
        end_ms: run.ended_ms.max(run.started_ms),
        attributes: vec![
            ("gen_ai.operation.name", str("execute_tool")),
            ("gen_ai.conversation.id", str(&summary.session_id)),
            ("gen_ai.tool.name", str(&run.name)),
            ("gen_ai.tool.call.id", str(&run.call_id)),
            ("gen_ai.tool.type", str("function")),
        ],
        error: error_type(run.end, "tool_error"),
    }
}

fn approval_span(summary: &TurnSummary, approval: &Approval) -> SpanRecord {
    SpanRecord {
        name: format!("approval {}", approval.tool_name),
        kind: SpanKind::Internal,
        parent: Some(0),
        start_ms: approval.started_ms,
        end_ms: approval.ended_ms,
        attributes: vec![
            ("gen_ai.conversation.id", str(&summary.session_id)),
            ("gen_ai.tool.name", str(&approval.tool_name)),
            ("gen_ai.tool.call.id", str(&approval.call_id)),
            ("turnkeep.approval.decision", str(approval.decision)),
        ],
        error: None,
    }
}

/// A failed step's `error.type`; a stopped one is no error (the turn says it was stopped).
fn error_type(end: StepEnd, failed: &str) -> Option<String> {
    (end == StepEnd::Failed).then(|| failed.to_owned())
}
