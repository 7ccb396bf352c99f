//! Reading the plain descriptor objects made by `createDemoModel` and
//! `createOpenAICompatibleModel` (js/chat.mjs). The JS factories validate too, for early
//! errors; this is the authority, since a host may hand-build a descriptor.

use wasm_bindgen::prelude::*;

use crate::core::limits::{
    DEMO_CHUNK_DELAY_MS_DEFAULT, DEMO_CHUNK_DELAY_MS_MAX, MODEL_API_KEY_CHARS_MAX,
    MODEL_BASE_URL_CHARS_MAX, MODEL_NAME_CHARS_MAX,
};
use crate::web::js::get;

/// The `kind` brand of a demo model descriptor.
pub const DEMO_KIND: &str = "turnkeep.demo";
/// The `kind` brand of an OpenAI-compatible model descriptor.
pub const OPENAI_COMPATIBLE_KIND: &str = "turnkeep.openai-compatible";

/// `chunkDelayMs`: absent means the default; else an integer in `0..=DEMO_CHUNK_DELAY_MS_MAX`.
pub fn chunk_delay_ms(descriptor: &JsValue) -> Result<u32, String> {
    let value = get(descriptor, "chunkDelayMs");
    if value.is_undefined() {
        return Ok(DEMO_CHUNK_DELAY_MS_DEFAULT);
    }
    match value.as_f64() {
        Some(n) if n.fract() == 0.0 && (0.0..=f64::from(DEMO_CHUNK_DELAY_MS_MAX)).contains(&n) => {
            Ok(n as u32)
        }
        _ => Err(format!(
            "chunkDelayMs must be an integer from 0 to {DEMO_CHUNK_DELAY_MS_MAX}"
        )),
    }
}

/// The settings of an OpenAI-compatible endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiSettings {
    /// `baseUrl` without a trailing `/`.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub include_usage: bool,
}

impl std::fmt::Debug for OpenAiSettings {
    /// Never prints the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiSettings")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("model", &self.model)
            .field("include_usage", &self.include_usage)
            .finish()
    }
}

pub fn openai_settings(descriptor: &JsValue) -> Result<OpenAiSettings, String> {
    let base_url = get(descriptor, "baseUrl")
        .as_string()
        .ok_or("baseUrl must be a string")?;
    let base_url = base_url.trim_end_matches('/').to_string();
    let scheme_ok = base_url.starts_with("http://") || base_url.starts_with("https://");
    if !scheme_ok
        || base_url.len() > MODEL_BASE_URL_CHARS_MAX
        || base_url.chars().any(char::is_whitespace)
    {
        return Err(format!(
            "baseUrl must be an http(s) URL of at most {MODEL_BASE_URL_CHARS_MAX} characters"
        ));
    }
    let model = get(descriptor, "model").as_string().unwrap_or_default();
    if model.is_empty() || model.chars().count() > MODEL_NAME_CHARS_MAX {
        return Err(format!(
            "model must be a non-empty string of at most {MODEL_NAME_CHARS_MAX} characters"
        ));
    }
    let key = get(descriptor, "apiKey");
    let api_key = if key.is_undefined() || key.is_null() {
        None
    } else {
        let key = key
            .as_string()
            .ok_or("apiKey must be a string when given")?;
        let printable = key.chars().all(|c| (' '..='~').contains(&c));
        if key.is_empty() || key.len() > MODEL_API_KEY_CHARS_MAX || !printable {
            return Err(format!(
                "apiKey must be 1 to {MODEL_API_KEY_CHARS_MAX} printable ASCII characters"
            ));
        }
        Some(key)
    };
    let usage = get(descriptor, "includeUsage");
    let include_usage = match usage.as_bool() {
        Some(b) => b,
        None if usage.is_undefined() => false,
        None => return Err("includeUsage must be a boolean when given".into()),
    };
    Ok(OpenAiSettings {
        base_url,
        api_key,
        model,
        include_usage,
    })
}
