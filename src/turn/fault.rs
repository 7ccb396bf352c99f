//! Failures of a request before its stream starts, and the faults an operator hears about.
//!
//! A client only ever sees a [`BoundaryError`] (a safe, versioned diagnostic). The port failure
//! behind it — what a store, the model, a tool or a host callback actually threw — is kept as a
//! [`Fault`] and handed to the operator (`onError`) at the one place a refusal becomes a response.

use turnkeep_core::protocol::BoundaryError;
use turnkeep_core::session::TurnOutcome;
use turnkeep_ports::PortError;

/// Where a fault happened. `as_str` is the `stage` an `onError` hook receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Authenticate,
    ResolveDefinition,
    SessionStorage,
    SessionLoad,
    SessionResume,
    SessionSave,
    MemoryLoad,
    MemorySave,
    Model,
    Tool,
    SessionLog,
    Stream,
    RateLimit,
    /// An operator's observer of ended turns failed (`onTurnEnd`, `onMetric`, `tracer`).
    OnTurnEnd,
    OnMetric,
    Tracer,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Authenticate => "authenticate",
            Stage::ResolveDefinition => "resolveDefinition",
            Stage::SessionStorage => "sessionStorage",
            Stage::SessionLoad => "session.load",
            Stage::SessionResume => "session.resume",
            Stage::SessionSave => "session.save",
            Stage::MemoryLoad => "memory.load",
            Stage::MemorySave => "memory.save",
            Stage::Model => "model",
            Stage::Tool => "tool",
            Stage::SessionLog => "sessionLog",
            Stage::Stream => "stream",
            Stage::RateLimit => "rateLimit",
            Stage::OnTurnEnd => "onTurnEnd",
            Stage::OnMetric => "onMetric",
            Stage::Tracer => "tracer",
        }
    }
}

/// A port failure, with where it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub stage: Stage,
    pub error: PortError,
}

impl Fault {
    pub fn new(stage: Stage, error: PortError) -> Self {
        Self { stage, error }
    }
}

/// What the operator hears: every fault (the host's `onError`, a log, a test's list), and each
/// turn's end (`onTurnEnd`: [`super::summary::TurnSummary`], no message text). A reporter must
/// never change what a client gets: a hook that throws is its own problem.
pub trait FaultReport {
    fn report(&self, fault: &Fault);

    /// A turn ended (its cleanup done, its sender's response closed).
    fn turn_ended(&self, _summary: &super::summary::TurnSummary) {}
}

/// Drops every fault (hosts that configured no hook).
pub struct IgnoreFaults;

impl FaultReport for IgnoreFaults {
    fn report(&self, _fault: &Fault) {}
}

/// Why a request ended before its stream started: the diagnostic the client gets, the recorded
/// outcome of a replayed turn, and the fault behind it for the operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub error: BoundaryError,
    /// `completed` or `indeterminate` for `TURN_REPLAYED`.
    pub replayed: Option<TurnOutcome>,
    pub fault: Option<Fault>,
}

impl Refusal {
    /// An internal failure caused by `error` at `stage`.
    pub fn internal(stage: Stage, error: PortError) -> Self {
        Self {
            error: BoundaryError::Internal,
            replayed: None,
            fault: Some(Fault::new(stage, error)),
        }
    }

    pub fn replayed(outcome: TurnOutcome) -> Self {
        Self {
            error: BoundaryError::TurnReplayed,
            replayed: Some(outcome),
            fault: None,
        }
    }
}

impl From<BoundaryError> for Refusal {
    fn from(error: BoundaryError) -> Self {
        Self {
            error,
            replayed: None,
            fault: None,
        }
    }
}
