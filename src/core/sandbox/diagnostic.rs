//! The sandbox's failure table: status, code, literal message, retryable. Every failure is the
//! versioned JSON body `{"error":{"version":1,"code","message","retryable"}}`; none echoes the
//! request's values back.

pub use crate::core::protocol::diagnostic::FailureRow;

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
}

impl FailureRow for SandboxFailure {
    #[rustfmt::skip]
    fn row(self) -> (u16, &'static str, &'static str, bool) {
        match self {
            Self::MethodNotAllowed => (405, "REQUEST_METHOD_NOT_ALLOWED", "Only GET and HEAD are supported.", false),
            Self::UriInvalid => (400, "SANDBOX_URI_INVALID", "Expected a ui:// resource URI in ?uri=.", false),
            Self::NotFound => (404, "SANDBOX_RESOURCE_NOT_FOUND", "No ui:// resource is registered at this URI.", false),
            Self::ResourceInvalid => (500, "SANDBOX_RESOURCE_INVALID", "The ui:// resource could not be served.", false),
            Self::Cancelled => (499, "REQUEST_CANCELLED", "The sandbox request was cancelled.", true),
            Self::Internal => (500, "SANDBOX_INTERNAL", "The sandbox request failed.", true),
        }
    }
}
