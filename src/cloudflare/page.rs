//! The demo chat page (`GET /`), as pure decisions: which session a request shows (or where it
//! is sent), and the page itself — the template (`js/cloudflare/demo-page.html`) with the
//! conversation rendered in by `core::projection::html`, the renderer the live page runs too, and
//! the seed its script continues from. `entry.rs` reads the session's stream into a
//! [`Projection`] and performs these. Tested on the host in `tests/demo_page.rs`.
//!
//! - `GET /?session=<id>[&panes=3]` renders that session for the tenant of the
//!   `turnkeep_tenant` cookie (default `demo`), and remembers it (`turnkeep_session` cookie).
//! - `GET /` goes to the session this browser showed last (the cookie), else to a new one;
//!   `GET /?new` always to a new one. A session id that is not a SafeId is a new session too.

use serde_json::{json, Value};

use super::streams::route::decode_component;
use crate::core::checks::is_safe_id;
use crate::core::projection::html::render_conversation_html;
use crate::core::projection::{render_parts, Projection};
use crate::core::protocol::messages_to_value;
use crate::core::sandbox::escape::html_attribute as escape;

/// The cookie that names the tenant the page is rendered for (the tenant field sets it).
pub const TENANT_COOKIE: &str = "turnkeep_tenant";
/// The cookie that remembers the session this browser showed last.
pub const SESSION_COOKIE: &str = "turnkeep_session";
/// The tenant of a browser without a (valid) tenant cookie.
pub const DEFAULT_TENANT: &str = "demo";
/// Panes the page may show: one, or three readers of the same session over one stream read.
pub const PANE_COUNTS: [u8; 2] = [1, 3];

/// What `GET /` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageRequest {
    /// 302 to `location`.
    Redirect {
        location: String,
    },
    Render(PageTarget),
}

/// The page to render.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageTarget {
    pub tenant: String,
    pub session_id: String,
    /// One of [`PANE_COUNTS`].
    pub panes: u8,
}

impl PageTarget {
    /// The cookie the rendered page sets: this session is the one `GET /` goes to next.
    pub fn set_cookie(&self) -> String {
        format!("{SESSION_COOKIE}={}; Path=/; SameSite=Lax", self.session_id)
    }
}

/// Decides `GET /` from the URL's query (`search`, with or without its `?`) and the `Cookie`
/// header. `fresh_session` draws a new session id (a SafeId); it is called only when needed.
pub fn page_request(
    search: &str,
    cookie: Option<&str>,
    fresh_session: impl FnOnce() -> String,
) -> PageRequest {
    let panes = match query_value(search, "panes").as_deref() {
        Some("3") => 3,
        _ => 1,
    };
    let wants_new = query_value(search, "new").is_some();
    let asked = query_value(search, "session").filter(|s| is_safe_id(s));
    if let (Some(session_id), false) = (asked, wants_new) {
        return PageRequest::Render(PageTarget {
            tenant: page_tenant(cookie),
            session_id,
            panes,
        });
    }
    let remembered = cookie_value(cookie, SESSION_COOKIE).filter(|s| is_safe_id(s) && !wants_new);
    let session_id = remembered.unwrap_or_else(fresh_session);
    PageRequest::Redirect {
        location: page_path(&session_id, panes),
    }
}

/// The tenant a page is rendered for: its `turnkeep_tenant` cookie when that is a SafeId, else
/// the default tenant.
pub fn page_tenant(cookie: Option<&str>) -> String {
    cookie_value(cookie, TENANT_COOKIE)
        .filter(|t| is_safe_id(t))
        .unwrap_or_else(|| DEFAULT_TENANT.to_owned())
}

/// `/?session=<id>` (SafeIds need no escaping in a URL), with `&panes=3` for three panes.
pub fn page_path(session_id: &str, panes: u8) -> String {
    match panes {
        3 => format!("/?session={session_id}&panes=3"),
        _ => format!("/?session={session_id}"),
    }
}

/// The page of `target` over its session's projection (`offset`: where the stream was read up
/// to, `None` for an empty stream). Every value put into the markup is escaped; the seed is JSON
/// with `<` escaped, so no text in it can end its `<script>` element.
pub fn render_page(
    template: &str,
    target: &PageTarget,
    projection: &Projection,
    offset: Option<&str>,
) -> String {
    let parts = serde_json::to_value(render_parts(projection.messages())).unwrap_or(Value::Null);
    let conversation = render_conversation_html(parts.as_array().map_or(&[][..], Vec::as_slice));
    let messages = messages_to_value(&projection.to_messages());
    let running = projection.active_run();
    let seed = json!({
        "sessionId": target.session_id,
        "offset": offset,
        "activeRunId": running,
        "messages": messages,
        "confirmations": projection.confirmations(),
    });
    let three = target.panes == 3;
    let (tenant, session) = (escape(&target.tenant), escape(&target.session_id));
    fill(template, |slot| match slot {
        "TENANT" => tenant.clone(),
        "SESSION_ID" => session.clone(),
        "PANES" => panes_html(target.panes, &conversation),
        "PANE_COUNT" => target.panes.to_string(),
        "PANES_HREF" => escape(&page_path(&target.session_id, if three { 1 } else { 3 })),
        "PANES_LABEL" => (if three { "One pane" } else { "Three panes" }).to_owned(),
        "NEW_HREF" => escape(if three { "/?new&panes=3" } else { "/?new" }),
        "EMPTY_HIDDEN" => hidden_if(!projection.is_empty()),
        "STOP_DISABLED" => (if running.is_some() { "" } else { " disabled" }).to_owned(),
        "RUN_STATUS" => (if running.is_some() {
            "streaming"
        } else {
            "idle"
        })
        .to_owned(),
        "RUN_CLASS" => (if running.is_some() { " streaming" } else { "" }).to_owned(),
        "SEED_JSON" => seed.to_string().replace('<', "\\u003c"),
        _ => String::new(),
    })
}

/// Each pane holds the same conversation; the first pane's list is `#messages`.
fn panes_html(panes: u8, conversation: &str) -> String {
    (1..=panes)
        .map(|i| {
            let id = if i == 1 { r#" id="messages""# } else { "" };
            format!(
                r#"  <section class="pane" data-pane="{i}"><div class="pane-title">pane {i} · its own reader</div><div class="messages"{id} aria-live="polite">{conversation}</div></section>"#
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn hidden_if(hide: bool) -> String {
    (if hide { " hidden" } else { "" }).to_owned()
}

/// `template` with every `{{NAME}}` (capitals and `_`) replaced by `value(NAME)`.
fn fill(template: &str, value: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(template.len() + 4096);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
            .unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with("}}") {
            out.push_str(&value(&after[..name_len]));
            rest = &after[name_len + 2..];
        } else {
            out.push_str("{{");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The first value of `name` in a query string (`?a=1&b`: `b` is `Some("")`), percent-decoded.
pub fn query_value(search: &str, name: &str) -> Option<String> {
    search
        .trim_start_matches('?')
        .split('&')
        .filter(|pair| !pair.is_empty())
        .find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key == name).then(|| decode_component(value))?
        })
}

/// The value of cookie `name` in a `Cookie` header, percent-decoded.
pub fn cookie_value(header: Option<&str>, name: &str) -> Option<String> {
    header?.split(';').find_map(|pair| {
        let (key, value) = pair.trim().split_once('=')?;
        (key == name).then(|| decode_component(value.trim()))?
    })
}
