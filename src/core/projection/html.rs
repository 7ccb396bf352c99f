//! Render parts as HTML: the markup of a conversation, one `<article>` per message, the same
//! for a server-rendered first paint and for the live page (which runs this same code in wasm
//! and swaps a message's markup when it changes). Every value is escaped; nothing here comes
//! from the client unescaped.
//!
//! The markup (class names are the page's styling hooks):
//! ```html
//! <article class="msg assistant streaming" data-message-id="a1">
//!   <div class="bubble">
//!     <details class="reasoning"><summary>Reasoning</summary><div class="reasoning-text">…</div></details>
//!     <div class="text">…</div>
//!     <div class="tool-card" data-tool-call-id="c1" data-status="complete">
//!       <div class="tool-head"><span class="tool-name">lookup</span><span class="badge">complete</span></div>
//!       <code class="tool-args">{"query":"x"}</code>
//!       <div class="tool-outcome"><span class="tool-mark">→ </span><span class="tool-result">result for x</span></div>
//!     </div>
//!   </div>
//! </article>
//! ```
//! Reasoning is a `<details>` without `open`: collapsed until the reader opens it.
//! A call that `requires_confirmation` is drawn distinctly (`data-status="requires_confirmation"`,
//! class `needs-confirmation`) with an empty `<div class="tool-confirmation">` slot: where the
//! page puts what a person decides with (Approve / Reject).

use serde_json::{Map, Value};

use crate::sandbox::escape::html_attribute as escape;

/// One message's markup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageHtml {
    pub id: String,
    pub html: String,
}

/// Groups render parts (as JSON: the `renderParts` of a snapshot) by message, in order, and
/// renders each message. Parts that are not render parts are skipped.
pub fn render_messages_html(parts: &[Value]) -> Vec<MessageHtml> {
    let mut out: Vec<MessageHtml> = Vec::new();
    let mut open: Option<(String, String, Option<String>, String)> = None; // id, role, status, inner
    for part in parts {
        let Some(id) = field(part, "messageId") else {
            continue;
        };
        let inner = match field(part, "type") {
            Some("text") => text_html(part),
            Some("reasoning") => reasoning_html(part),
            Some("tool") => tool_html(part),
            _ => continue,
        };
        if open.as_ref().is_some_and(|(open_id, ..)| open_id != id) {
            out.extend(open.take().map(close));
        }
        let entry = open.get_or_insert_with(|| {
            let role = field(part, "role").unwrap_or("assistant").to_owned();
            (id.to_owned(), role, None, String::new())
        });
        if matches!(field(part, "type"), Some("text" | "reasoning")) {
            entry.1 = field(part, "role").unwrap_or("assistant").to_owned();
            entry.2 = field(part, "status").map(str::to_owned);
        }
        entry.3.push_str(&inner);
    }
    out.extend(open.map(close));
    out
}

/// The whole conversation's markup.
pub fn render_conversation_html(parts: &[Value]) -> String {
    render_messages_html(parts)
        .into_iter()
        .map(|m| m.html)
        .collect()
}

fn close((id, role, status, inner): (String, String, Option<String>, String)) -> MessageHtml {
    let role = match role.as_str() {
        "user" | "assistant" | "system" => role.as_str(),
        _ => "assistant",
    };
    let status_class = match status.as_deref() {
        Some("streaming") => " streaming",
        Some("pending") => " pending",
        Some("error") => " error",
        _ => "",
    };
    let html = format!(
        r#"<article class="msg {role}{status_class}" data-message-id="{}"><div class="bubble">{inner}</div></article>"#,
        escape(&id)
    );
    MessageHtml { id, html }
}

fn text_html(part: &Value) -> String {
    format!(
        r#"<div class="text">{}</div>"#,
        escape(field(part, "text").unwrap_or(""))
    )
}

fn reasoning_html(part: &Value) -> String {
    format!(
        r#"<details class="reasoning"><summary>Reasoning</summary><div class="reasoning-text">{}</div></details>"#,
        escape(field(part, "text").unwrap_or(""))
    )
}

fn tool_html(part: &Value) -> String {
    let status = field(part, "status").unwrap_or("pending");
    let status = match status {
        "pending" | "running" | "complete" | "error" | "requires_confirmation" => status,
        _ => "pending",
    };
    let call_id = escape(field(part, "toolCallId").unwrap_or(""));
    let name = escape(field(part, "name").unwrap_or("tool"));
    let args = part.get("args").and_then(Value::as_object).map_or_else(
        || Value::Object(Map::new()).to_string(),
        |a| Value::Object(a.clone()).to_string(),
    );
    let confirm = status == "requires_confirmation";
    let mut html = format!(
        r#"<div class="tool-card{}" data-tool-call-id="{call_id}" data-status="{status}"><div class="tool-head"><span class="tool-name">{name}</span><span class="badge">{}</span></div><code class="tool-args">{}</code>"#,
        if confirm { " needs-confirmation" } else { "" },
        status.replace('_', " "),
        escape(&args)
    );
    if let Some(result) = field(part, "result") {
        html.push_str(&format!(
            r#"<div class="tool-outcome"><span class="tool-mark">→ </span><span class="tool-result">{}</span></div>"#,
            escape(result)
        ));
    }
    if let Some(error) = field(part, "error") {
        html.push_str(&format!(
            r#"<div class="tool-outcome"><span class="tool-mark">✕ </span><span class="tool-error">{}</span></div>"#,
            escape(error)
        ));
    }
    if confirm {
        html.push_str(&format!(
            r#"<div class="tool-confirmation" data-tool-call-id="{call_id}">Waiting for a person to approve or reject this call.</div>"#
        ));
    }
    html.push_str("</div>");
    html
}

fn field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_group_by_message_and_every_value_is_escaped() {
        let parts = vec![
            json!({ "type": "text", "messageId": "u1", "role": "user", "text": "<b>hi</b> & \"you\"", "status": "complete" }),
            json!({ "type": "reasoning", "messageId": "a1", "role": "assistant", "text": "think <hard>", "status": "streaming" }),
            json!({ "type": "text", "messageId": "a1", "role": "assistant", "text": "let me look", "status": "streaming" }),
            json!({ "type": "tool", "messageId": "a1", "toolCallId": "c\"1", "name": "lookup", "args": { "q": "<x>" }, "status": "complete", "result": "r<1>" }),
            json!({ "type": "bogus", "messageId": "z" }),
            json!({ "type": "tool", "messageId": "a2", "toolCallId": "c2", "name": "transfer", "args": { "amount": 250 }, "status": "requires_confirmation" }),
        ];
        let html = render_messages_html(&parts);
        assert_eq!(
            html.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
            ["u1", "a1", "a2"]
        );
        assert_eq!(
            html[0].html,
            r#"<article class="msg user" data-message-id="u1"><div class="bubble"><div class="text">&lt;b&gt;hi&lt;/b&gt; &amp; &quot;you&quot;</div></div></article>"#
        );
        assert!(html[1]
            .html
            .starts_with(r#"<article class="msg assistant streaming" data-message-id="a1"><div class="bubble"><details class="reasoning"><summary>Reasoning</summary><div class="reasoning-text">think &lt;hard&gt;</div></details><div class="text">let me look</div>"#));
        assert!(html[1]
            .html
            .contains(r#"data-tool-call-id="c&quot;1" data-status="complete""#));
        assert!(html[1]
            .html
            .contains(r#"<code class="tool-args">{&quot;q&quot;:&quot;&lt;x&gt;&quot;}</code>"#));
        assert!(html[1].html.contains(
            r#"<span class="tool-mark">→ </span><span class="tool-result">r&lt;1&gt;</span>"#
        ));
        // A call waiting for a person is drawn distinctly, with the slot for the decision.
        assert!(html[2]
            .html
            .starts_with(r#"<article class="msg assistant" data-message-id="a2">"#));
        assert!(html[2].html.contains(r#"class="tool-card needs-confirmation" data-tool-call-id="c2" data-status="requires_confirmation""#));
        assert!(html[2]
            .html
            .contains(r#"<div class="tool-confirmation" data-tool-call-id="c2">"#));
        assert_eq!(
            render_conversation_html(&parts),
            html.iter().map(|m| m.html.as_str()).collect::<String>()
        );
        assert!(!render_conversation_html(&parts).contains("<b>"));
    }

    #[test]
    fn unknown_roles_and_statuses_fall_back_safely() {
        let parts = vec![
            json!({ "type": "text", "messageId": "x", "role": "evil\" onload=\"x", "text": "t", "status": "weird" }),
            json!({ "type": "tool", "messageId": "x", "toolCallId": "c", "name": "n", "status": "\"><script>" }),
        ];
        let html = render_conversation_html(&parts);
        assert!(
            html.starts_with(r#"<article class="msg assistant" data-message-id="x">"#),
            "{html}"
        );
        assert!(html.contains(r#"data-status="pending""#));
        assert!(!html.contains("<script>"));
        assert_eq!(render_conversation_html(&[]), "");
    }
}
