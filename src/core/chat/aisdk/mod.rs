//! AI SDK language models (`LanguageModelV2`, `V3`, `V4` of `@ai-sdk/provider`: every
//! provider package — Workers AI, Anthropic, OpenAI, OpenAI-compatible, … — and `ai/test`'s
//! mocks) as pure translation. The shell (`web::adapters::models::aisdk`) calls
//! `model.doStream(options)` with the options built here and reads each stream part field by
//! field into a [`StreamPart`] (the parts are JS objects: `Date`s, `Error`s, `Uint8Array`s), which
//! [`AiSdkStream`] turns into the controller's [`ModelChunk`](super::ModelChunk)s.
//!
//! - [`prompt`]: a [`ModelRequest`](super::ModelRequest) → the call options (`prompt`, `tools`,
//!   `toolChoice`, the settings).
//! - [`stream`]: stream parts → model chunks, usage totals, finish reasons, failures.

pub mod prompt;
pub mod stream;

pub use prompt::{call_options, CallOptions};
pub use stream::{AiSdkError, AiSdkStream, StreamPart};

/// The specification a model implements (`model.specificationVersion`). What differs between
/// them here: the shape of file data in the prompt, and of usage and finish reasons in the
/// stream (read by the shell into the same fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecVersion {
    V2,
    V3,
    V4,
}

impl SpecVersion {
    /// `'v2'`, `'v3'` or `'v4'`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "v2" => Some(Self::V2),
            "v3" => Some(Self::V3),
            "v4" => Some(Self::V4),
            _ => None,
        }
    }
}
