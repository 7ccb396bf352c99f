//! The sandbox's failures, mapped to the diagnostic registry's rows (`core::diagnostics`). Every failure is the
//! versioned JSON body `{"error":{"version":1,"code","message","retryable"}}`; none echoes the
//! request's values back.

use crate::diagnostics::{sandbox, Row};
use crate::protocol::TurnDiagnostic;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SandboxFailure {
    MethodNotAllowed,
    UriInvalid,
    NotFound,
    ResourceInvalid,
    Cancelled,
    Internal,
}

impl SandboxFailure {
    pub const ALL: [SandboxFailure; 6] = [
        Self::MethodNotAllowed,
        Self::UriInvalid,
        Self::NotFound,
        Self::ResourceInvalid,
        Self::Cancelled,
        Self::Internal,
    ];

    /// The mapping to the registry's rows (`core::diagnostics::sandbox`).
    pub const fn row(self) -> Row {
        match self {
            Self::MethodNotAllowed => sandbox::METHOD_NOT_ALLOWED,
            Self::UriInvalid => sandbox::URI_INVALID,
            Self::NotFound => sandbox::NOT_FOUND,
            Self::ResourceInvalid => sandbox::RESOURCE_INVALID,
            Self::Cancelled => sandbox::CANCELLED,
            Self::Internal => sandbox::INTERNAL,
        }
    }

    pub const fn status(self) -> u16 {
        self.row().status
    }

    pub fn diagnostic(self) -> TurnDiagnostic {
        self.row().diagnostic()
    }

    pub fn error_body_json(self) -> String {
        self.diagnostic().error_body_json(None)
    }
}
