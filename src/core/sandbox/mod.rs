//! The MCP `ui://` sandbox's decisions (`createMcpSandboxHandler`): which URIs are valid, which
//! theme a request gets, how every injected value is escaped, the per-resource CSP, and the
//! document. The shell (`src/web/sandbox.rs`) reads the request, calls the host's resolver and
//! sends what this module built.

pub mod csp;
pub mod diagnostic;
pub mod escape;
pub mod sha256;
pub mod theme;
pub mod uri;

pub use csp::{content_security_policy, decode_csp, ResourceCsp};
pub use diagnostic::SandboxFailure;
pub use theme::{decode_themes, select_theme, theme_style, Theme};
pub use uri::{check_ui_uri, UriError};

use serde_json::Value;

use crate::ask::fields::strict;
use crate::limits::SANDBOX_RESOURCE_BODY_BYTES_MAX;
use crate::protocol::field::FieldError;

/// A resolved resource: its HTML body and the origins it declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    pub body: String,
    pub csp: ResourceCsp,
}

/// What the resolver returned: a string (the body), or `{ body, csp? }`. Absent (null or
/// undefined) is [`None`]: not found.
pub fn decode_resource(v: &Value) -> Result<Option<Resource>, FieldError> {
    let (body, csp) = match v {
        Value::Null => return Ok(None),
        Value::String(body) => (body.clone(), ResourceCsp::default()),
        _ => {
            let o = strict(v, "resource", &["body", "csp"])?;
            let body = o.string("body")?;
            let csp = match o.get("csp") {
                None => ResourceCsp::default(),
                Some(v) => decode_csp(v)?,
            };
            (body, csp)
        }
    };
    if body.len() > SANDBOX_RESOURCE_BODY_BYTES_MAX {
        return Err(FieldError::new("resource.body", "must be at most 4 MiB"));
    }
    Ok(Some(Resource { body, csp }))
}

/// The response a resource gets: the document and its CSP header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub html: String,
    pub content_security_policy: String,
}

/// Builds the themed document: `data-theme` stamped on `<html>` (escaped), the theme's style
/// block before the resource body, and the CSP that allows exactly that style block plus the
/// resource's declared origins.
pub fn render_page(resource: &Resource, theme: &Theme) -> Page {
    let style = theme_style(theme);
    let content_security_policy = content_security_policy(&resource.csp, &style);
    let html = format!(
        "<!doctype html>\n<html data-theme=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<style data-turnkeep-theme>{style}</style>\n</head>\n<body>\n{}\n</body>\n</html>\n",
        escape::html_attribute(&theme.name),
        resource.body,
    );
    Page {
        html,
        content_security_policy,
    }
}
