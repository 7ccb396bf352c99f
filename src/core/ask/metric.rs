//! Privacy-safe metrics (AgentsKit's `agentskit.chat.backend-metric` v1): identifiers, a fixed
//! name, a number with its unit and an outcome. Never a prompt, an answer, a source, a subject
//! or session id, a credential or a provider error.

use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricName {
    RequestTotalMs,
    FirstEventMs,
    FirstTokenMs,
    StreamBytes,
    StreamEvents,
    StreamSnapshots,
    DeterministicFallback,
    RetrievalTotalMs,
    RetrievalDocuments,
    PersistenceTotalMs,
    CancellationCount,
    ConflictCount,
    ErrorCount,
    InputTokens,
    OutputTokens,
    TotalTokens,
    CostUsd,
}

impl MetricName {
    /// The wire name and its unit.
    pub const fn name_and_unit(self) -> (&'static str, &'static str) {
        match self {
            Self::RequestTotalMs => ("request.total_ms", "ms"),
            Self::FirstEventMs => ("stream.first_event_ms", "ms"),
            Self::FirstTokenMs => ("stream.first_token_ms", "ms"),
            Self::StreamBytes => ("stream.bytes", "bytes"),
            Self::StreamEvents => ("stream.events", "count"),
            Self::StreamSnapshots => ("stream.snapshots", "count"),
            Self::DeterministicFallback => ("deterministic.fallback", "count"),
            Self::RetrievalTotalMs => ("retrieval.total_ms", "ms"),
            Self::RetrievalDocuments => ("retrieval.documents", "count"),
            Self::PersistenceTotalMs => ("persistence.total_ms", "ms"),
            Self::CancellationCount => ("cancellation.count", "count"),
            Self::ConflictCount => ("conflict.count", "count"),
            Self::ErrorCount => ("error.count", "count"),
            Self::InputTokens => ("usage.input_tokens", "tokens"),
            Self::OutputTokens => ("usage.output_tokens", "tokens"),
            Self::TotalTokens => ("usage.total_tokens", "tokens"),
            Self::CostUsd => ("cost.usd", "usd"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Rejected,
    Cancelled,
    Error,
}

impl Outcome {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Rejected => "rejected",
            Self::Cancelled => "cancelled",
            Self::Error => "error",
        }
    }
}

/// Who the metric is about: the trusted site, its corpus and this request.
pub struct MetricScope<'a> {
    pub site_id: &'a str,
    pub corpus_id: &'a str,
    pub request_id: &'a str,
}

/// One metric record. A negative or non-finite value is recorded as 0 (a clock that went
/// backwards must not produce a record the schema rejects).
pub fn metric_value(
    scope: &MetricScope<'_>,
    name: MetricName,
    value: f64,
    outcome: Outcome,
    emitted_at: &str,
) -> Value {
    let (name, unit) = name.name_and_unit();
    let value = if value.is_finite() && value > 0.0 {
        value
    } else {
        0.0
    };
    json!({
        "protocol": "agentskit.chat.backend-metric",
        "version": 1,
        "name": name,
        "siteId": scope.site_id,
        "corpusId": scope.corpus_id,
        "requestId": scope.request_id,
        "value": value,
        "unit": unit,
        "outcome": outcome.as_str(),
        "emittedAt": emitted_at,
    })
}
