//! The per-response Content-Security-Policy. Default deny: nothing loads, connects, frames or
//! runs unless the resource declared the origin, using the MCP Apps names for the lists
//! (`csp: { resourceDomains, connectDomains, frameDomains, baseUriDomains }`). The one inline
//! thing allowed is the sandbox's own theme style block, by its hash. Inline scripts never run.
//!
//! The document is also sandboxed (`sandbox allow-scripts`): it runs in an opaque origin, so a
//! resource cannot read the embedding application's cookies or storage even when it is served
//! from the same origin.

use serde_json::Value;

use super::sha256::{base64, sha256};
use crate::ask::fields::strict;
use crate::ask::text::is_host_name;
use crate::limits::{SANDBOX_CSP_DOMAINS_MAX, SANDBOX_CSP_DOMAIN_CHARS_MAX};
use crate::protocol::field::FieldError;

/// The origins a resource declares, per MCP Apps list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceCsp {
    /// Scripts, styles, images, fonts and media.
    pub resource_domains: Vec<String>,
    /// fetch / XHR / WebSocket / EventSource.
    pub connect_domains: Vec<String>,
    /// Nested frames.
    pub frame_domains: Vec<String>,
    /// `<base href>`.
    pub base_uri_domains: Vec<String>,
}

const RULE: &str = "must be an array of at most 32 origins like https://cdn.example.com (http, https, ws or wss; an optional *. subdomain wildcard and port)";

/// Decodes a resource's `csp` object. Every entry must be a plain origin: a quote, `;`, a
/// keyword (`'unsafe-inline'`), `*` or `data:` would widen the policy, so it is an error.
pub fn decode_csp(v: &Value) -> Result<ResourceCsp, FieldError> {
    let o = strict(
        v,
        "csp",
        &[
            "resourceDomains",
            "connectDomains",
            "frameDomains",
            "baseUriDomains",
        ],
    )?;
    let list = |key: &str| -> Result<Vec<String>, FieldError> {
        let Some(v) = o.get(key) else {
            return Ok(Vec::new());
        };
        let path = o.path_of(key);
        let items = v
            .as_array()
            .filter(|a| a.len() <= SANDBOX_CSP_DOMAINS_MAX)
            .ok_or_else(|| FieldError::new(path.clone(), RULE))?;
        items
            .iter()
            .map(|item| {
                item.as_str()
                    .and_then(csp_origin)
                    .ok_or_else(|| FieldError::new(path.clone(), RULE))
            })
            .collect()
    };
    Ok(ResourceCsp {
        resource_domains: list("resourceDomains")?,
        connect_domains: list("connectDomains")?,
        frame_domains: list("frameDomains")?,
        base_uri_domains: list("baseUriDomains")?,
    })
}

/// `scheme://[*.]host[:port]`, lower-cased, as a CSP host-source.
pub(crate) fn csp_origin(s: &str) -> Option<String> {
    if s.len() > SANDBOX_CSP_DOMAIN_CHARS_MAX {
        return None;
    }
    let (scheme, rest) = s.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "http" | "https" | "ws" | "wss") {
        return None;
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (rest, None),
    };
    let bare = host.strip_prefix("*.").unwrap_or(host);
    if !is_host_name(bare) {
        return None;
    }
    if let Some(p) = port {
        if p.is_empty()
            || p.len() > 5
            || !p.bytes().all(|b| b.is_ascii_digit())
            || p.parse::<u32>().ok()? > 65_535
        {
            return None;
        }
    }
    let host = host.to_ascii_lowercase();
    Some(match port {
        Some(p) => format!("{scheme}://{host}:{p}"),
        None => format!("{scheme}://{host}"),
    })
}

/// `'sha256-<base64>'` of `text` (the exact bytes inside the `<style>` element).
pub fn hash_source(text: &str) -> String {
    format!("'sha256-{}'", base64(&sha256(text.as_bytes())))
}

/// The Content-Security-Policy header value for a resource whose document carries `style`.
pub fn content_security_policy(csp: &ResourceCsp, style: &str) -> String {
    let or_none = |list: &[String]| {
        if list.is_empty() {
            "'none'".to_owned()
        } else {
            list.join(" ")
        }
    };
    let with = |first: &str, list: &[String]| {
        std::iter::once(first.to_owned())
            .chain(list.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let resources = &csp.resource_domains;
    [
        "default-src 'none'".to_owned(),
        format!("script-src {}", or_none(resources)),
        format!("style-src {}", with(&hash_source(style), resources)),
        format!("img-src {}", with("data:", resources)),
        format!("font-src {}", or_none(resources)),
        format!("media-src {}", or_none(resources)),
        format!("connect-src {}", or_none(&csp.connect_domains)),
        format!("frame-src {}", or_none(&csp.frame_domains)),
        format!("base-uri {}", or_none(&csp.base_uri_domains)),
        "form-action 'none'".to_owned(),
        "frame-ancestors 'self'".to_owned(),
        "sandbox allow-scripts".to_owned(),
    ]
    .join("; ")
}
