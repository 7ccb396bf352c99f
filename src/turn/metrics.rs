//! The metric records of one ended turn, for a chat handler's `onMetric`: a pure function of its
//! [`TurnSummary`], so every shell sends the same set and only calls the hook. The shape is the
//! Ask handler's (`core::ask::metric`): ids, a fixed name, a number with its unit and an
//! outcome, never message text. The set, in this order:
//!
//! | name | unit | value |
//! |---|---|---|
//! | `turn.duration_ms` | ms | claim to cleanup's end |
//! | `turn.first_chunk_ms` | ms | claim to the first model chunk (only when one arrived) |
//! | `model.calls` | count | model calls |
//! | `tool.calls` | count | tool runs (a call of an unknown tool too) |
//! | `approval.requested` | count | calls the turn left waiting for a person |
//! | `usage.input_tokens`, `usage.output_tokens`, `usage.total_tokens` | tokens | summed usage |

use serde_json::{json, Value};
use turnkeep_core::checks::format_iso_millis_at;

use super::steps::Step;
use super::summary::TurnSummary;

/// The records' protocol name (its version is `METRIC_VERSION`).
pub const METRIC_PROTOCOL: &str = "turnkeep.chat.turn-metric";
pub const METRIC_VERSION: u32 = 1;

/// The turn's outcome as a metric's: `ok` (answered, or waiting for a person), `cancelled`
/// (stopped, or taken over by a newer claim) or `error` (failed, timed out, or its record is
/// incomplete).
pub fn metric_outcome(summary: &TurnSummary) -> &'static str {
    if summary.outcome != "completed" {
        return "error";
    }
    match summary.finish_reason {
        "stop" | "tool-calls" => "ok",
        "stopped" | "fenced" => "cancelled",
        _ => "error",
    }
}

/// Every metric of `summary`, as records for `onMetric`.
pub fn turn_metrics(summary: &TurnSummary) -> Vec<Value> {
    let first_chunk_ms = summary.steps.iter().find_map(|step| match step {
        Step::Model(call) => call.first_chunk_ms,
        Step::Tool(_) => None,
    });
    let asked = summary
        .approvals
        .iter()
        .filter(|a| a.decision == "pending")
        .count() as u64;
    let usage = summary.usage;
    let mut values: Vec<(&str, &str, u64)> = vec![("turn.duration_ms", "ms", summary.duration_ms)];
    if let Some(at) = first_chunk_ms {
        values.push((
            "turn.first_chunk_ms",
            "ms",
            at.saturating_sub(summary.started_ms),
        ));
    }
    values.extend([
        ("model.calls", "count", u64::from(summary.model_calls)),
        ("tool.calls", "count", u64::from(summary.tool_calls)),
        ("approval.requested", "count", asked),
        ("usage.input_tokens", "tokens", usage.prompt_tokens),
        ("usage.output_tokens", "tokens", usage.completion_tokens),
        ("usage.total_tokens", "tokens", usage.total_tokens),
    ]);
    let outcome = metric_outcome(summary);
    let emitted_at = format_iso_millis_at(summary.ended_ms);
    values
        .into_iter()
        .map(|(name, unit, value)| {
            json!({
                "protocol": METRIC_PROTOCOL,
                "version": METRIC_VERSION,
                "name": name,
                "sessionId": summary.session_id,
                "turnId": summary.turn_id,
                "value": value,
                "unit": unit,
                "outcome": outcome,
                "emittedAt": emitted_at,
            })
        })
        .collect()
}
