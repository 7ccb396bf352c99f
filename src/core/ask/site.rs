//! The trusted site policy: AgentsKit's `agentskit.chat.backend-site` v1 config, resolved by the
//! host from its authenticated context (never from the request), plus turnkeep's additive
//! `citations` policy.
//!
//! `citations.origins` (turnkeep): the absolute origins a citation may link to. Site-relative
//! links (`/docs/...`) are always allowed. Without `citations` every safe http(s) link is
//! allowed, which is AgentsKit's rule.

use serde_json::{json, Map, Value};

use super::fields::{array_of, int_in, one_of, strict, MUST_BE_LABEL};
use super::text::{label, origin_of, Href};
use crate::checks::is_safe_id;
use crate::limits::{
    ASK_ACTIONS_MAX, ASK_CITATION_ORIGINS_MAX, ASK_COMPONENTS_MAX, ASK_GENERATION_TIMEOUT_MS_MAX,
    ASK_REQUEST_TIMEOUT_MS_MAX, ASK_RETRIEVAL_TIMEOUT_MS_MAX, ASK_SOURCES_MAX, ASK_SUGGESTIONS_MAX,
    ASK_TIMEOUT_MS_MIN,
};
use crate::protocol::field::{as_safe_id, FieldError, MUST_BE_SAFE_ID};

pub(crate) const SITE_PROTOCOL: &str = "agentskit.chat.backend-site";

/// Which retriever serves the site's corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CorpusMode {
    Local,
    Federated,
}

impl CorpusMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Federated => "federated",
        }
    }
}

/// A decoded site policy. `value` is its canonical JSON (labels trimmed), the one object every
/// host callback (rate limiter, retriever, generator) is handed.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub site_id: String,
    pub assistant_id: String,
    pub corpus_id: String,
    pub corpus_mode: CorpusMode,
    pub request_timeout_ms: u64,
    pub retrieval_timeout_ms: u64,
    pub generation_timeout_ms: u64,
    pub max_sources: usize,
    pub persistence_required: bool,
    /// `None`: any safe link. `Some(origins)`: relative links and these origins only.
    pub citation_origins: Option<Vec<String>>,
    pub value: Value,
}

impl Site {
    /// Whether a citation may link to `href` under this policy.
    pub fn allows(&self, href: &Href) -> bool {
        match (href, &self.citation_origins) {
            (Href::Relative, _) | (Href::Absolute { .. }, None) => true,
            (Href::Absolute { origin }, Some(allowed)) => allowed.iter().any(|a| a == origin),
        }
    }
}

const TOP: &[&str] = &[
    "protocol",
    "version",
    "siteId",
    "assistant",
    "corpus",
    "components",
    "actions",
    "limits",
    "persistence",
    "citations",
];

/// Decodes a site config (zod's strict v1 schema, plus `citations`).
pub fn decode_site(v: &Value) -> Result<Site, FieldError> {
    let o = strict(v, "", TOP)?;
    o.required("protocol", "must be \"agentskit.chat.backend-site\"", |v| {
        (v.as_str() == Some(SITE_PROTOCOL)).then_some(())
    })?;
    o.required("version", "must be the number 1", |v| {
        v.as_f64().filter(|n| *n == 1.0)
    })?;
    let site_id = o.safe_id("siteId")?;

    let a = strict(
        field(&o, "assistant")?,
        "assistant",
        &["id", "name", "suggestions"],
    )?;
    let assistant_id = a.safe_id("id")?;
    let name = a.required("name", MUST_BE_LABEL, |v| v.as_str().and_then(label))?;
    let suggestions = array_of(
        field(&a, "suggestions")?,
        "assistant.suggestions",
        ASK_SUGGESTIONS_MAX,
        "must be an array of at most 8 labels",
        |v, p| {
            v.as_str()
                .and_then(label)
                .ok_or_else(|| FieldError::new(p, MUST_BE_LABEL))
        },
    )?;

    let c = strict(field(&o, "corpus")?, "corpus", &["id", "mode"])?;
    let corpus_id = c.safe_id("id")?;
    let mode = c.required("mode", "must be \"local\" or \"federated\"", |v| {
        one_of(v, &["local", "federated"])
    })?;
    let corpus_mode = if mode == "local" {
        CorpusMode::Local
    } else {
        CorpusMode::Federated
    };

    let components = safe_ids(&o, "components", ASK_COMPONENTS_MAX)?;
    let actions = safe_ids(&o, "actions", ASK_ACTIONS_MAX)?;

    let l = strict(
        field(&o, "limits")?,
        "limits",
        &[
            "requestTimeoutMs",
            "retrievalTimeoutMs",
            "generationTimeoutMs",
            "maxSources",
        ],
    )?;
    let ms = |key: &str, max: u64, rule: &'static str| {
        l.required(key, rule, |v| int_in(v, ASK_TIMEOUT_MS_MIN, max))
    };
    let request_timeout_ms = ms(
        "requestTimeoutMs",
        ASK_REQUEST_TIMEOUT_MS_MAX,
        "must be an integer from 100 to 120000",
    )?;
    let retrieval_timeout_ms = ms(
        "retrievalTimeoutMs",
        ASK_RETRIEVAL_TIMEOUT_MS_MAX,
        "must be an integer from 100 to 60000",
    )?;
    let generation_timeout_ms = ms(
        "generationTimeoutMs",
        ASK_GENERATION_TIMEOUT_MS_MAX,
        "must be an integer from 100 to 120000",
    )?;
    let max_sources = l.required("maxSources", "must be an integer from 1 to 8", |v| {
        int_in(v, 1, ASK_SOURCES_MAX as u64)
    })? as usize;

    let p = strict(field(&o, "persistence")?, "persistence", &["mode"])?;
    let persistence = p.required("mode", "must be \"required\" or \"disabled\"", |v| {
        one_of(v, &["required", "disabled"])
    })?;

    let citation_origins = match o.get("citations") {
        None => None,
        Some(v) => Some(decode_citations(v)?),
    };

    let mut value = json!({
        "protocol": SITE_PROTOCOL,
        "version": 1,
        "siteId": site_id,
        "assistant": { "id": assistant_id, "name": name, "suggestions": suggestions },
        "corpus": { "id": corpus_id, "mode": mode },
        "components": components,
        "actions": actions,
        "limits": {
            "requestTimeoutMs": request_timeout_ms,
            "retrievalTimeoutMs": retrieval_timeout_ms,
            "generationTimeoutMs": generation_timeout_ms,
            "maxSources": max_sources,
        },
        "persistence": { "mode": persistence },
    });
    if let (Some(origins), Some(map)) = (&citation_origins, value.as_object_mut()) {
        let mut citations = Map::new();
        citations.insert("origins".into(), json!(origins));
        map.insert("citations".into(), Value::Object(citations));
    }
    Ok(Site {
        site_id,
        assistant_id,
        corpus_id,
        corpus_mode,
        request_timeout_ms,
        retrieval_timeout_ms,
        generation_timeout_ms,
        max_sources,
        persistence_required: persistence == "required",
        citation_origins,
        value,
    })
}

fn field<'a>(o: &crate::protocol::field::Obj<'a>, key: &str) -> Result<&'a Value, FieldError> {
    o.get(key)
        .ok_or_else(|| FieldError::new(o.path_of(key), "is required"))
}

fn safe_ids(
    o: &crate::protocol::field::Obj<'_>,
    key: &str,
    max: usize,
) -> Result<Vec<String>, FieldError> {
    array_of(
        field(o, key)?,
        &o.path_of(key),
        max,
        "must be an array of at most 64 SafeIds",
        |v, p| as_safe_id(v).ok_or_else(|| FieldError::new(p, MUST_BE_SAFE_ID)),
    )
}

/// `{ origins: [...] }`: each an http(s) origin exactly (`scheme://host[:port]`, nothing after).
fn decode_citations(v: &Value) -> Result<Vec<String>, FieldError> {
    let o = strict(v, "citations", &["origins"])?;
    const RULE: &str = "must be an http(s) origin (scheme://host[:port])";
    array_of(
        field(&o, "origins")?,
        "citations.origins",
        ASK_CITATION_ORIGINS_MAX,
        "must be an array of at most 64 origins",
        |v, p| {
            v.as_str()
                .filter(|s| {
                    s.split_once("://")
                        .is_some_and(|(_, r)| !r.contains(['/', '?', '#']))
                })
                .and_then(origin_of)
                .ok_or_else(|| FieldError::new(p, RULE))
        },
    )
}

/// Whether a client's `?corpus=` / `?persona=` hints agree with the trusted site. They are only
/// compatibility hints: absent is fine, equal is fine, anything else is `ASK_FORBIDDEN`.
pub fn hints_agree(site: &Site, corpus: Option<&str>, persona: Option<&str>) -> bool {
    corpus.is_none_or(|c| c == site.corpus_id) && persona.is_none_or(|p| p == site.assistant_id)
}

/// A host subject id: `^[A-Za-z0-9][A-Za-z0-9._:@-]{0,255}$`.
pub fn is_subject_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.len() <= crate::limits::ASK_SUBJECT_ID_CHARS_MAX
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"._:@-".contains(c))
}

/// A request id from the host's `createId`, used when it is a SafeId.
pub fn is_request_id(s: &str) -> bool {
    is_safe_id(s)
}
