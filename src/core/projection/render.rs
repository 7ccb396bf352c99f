//! Render parts: what a chat UI draws, reduced from the same projection (the transport's
//! `RenderPart`). A message's reasoning is one part (before its text, drawn collapsed), its
//! text another; each tool call is a card, which keeps its shape
//! as its status moves (pending → running → complete / error, or requires_confirmation) and
//! carries its result or error. `tool` messages draw nothing of their own: their content is on
//! the card of the call they answer.

use serde::Serialize;
use serde_json::{Map, Value};

use super::chunks::{message_status_str, role_str, tool_status_str};
use crate::protocol::{Message, Role};

/// One thing to draw.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum RenderPart {
    /// The model's reasoning (`metadata.reasoning`) for this message.
    #[serde(rename_all = "camelCase")]
    Reasoning {
        message_id: String,
        role: &'static str,
        text: String,
        status: &'static str,
    },
    #[serde(rename_all = "camelCase")]
    Text {
        message_id: String,
        role: &'static str,
        text: String,
        status: &'static str,
    },
    #[serde(rename = "tool", rename_all = "camelCase")]
    ToolCard {
        message_id: String,
        tool_call_id: String,
        name: String,
        args: Map<String, Value>,
        status: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// The render parts of `messages`, in order.
pub fn render_parts<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Vec<RenderPart> {
    let mut parts = Vec::new();
    for message in messages {
        if message.role == Role::Tool {
            continue;
        }
        if !message.reasoning().is_empty() {
            parts.push(RenderPart::Reasoning {
                message_id: message.id.clone(),
                role: role_str(message.role),
                text: message.reasoning().to_owned(),
                status: message_status_str(message.status),
            });
        }
        if !message.content.is_empty() {
            parts.push(RenderPart::Text {
                message_id: message.id.clone(),
                role: role_str(message.role),
                text: message.content.clone(),
                status: message_status_str(message.status),
            });
        }
        for call in message.tool_calls.iter().flatten() {
            parts.push(RenderPart::ToolCard {
                message_id: message.id.clone(),
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                args: call.args.clone(),
                status: tool_status_str(call.status),
                result: call.result.clone(),
                error: call.error.clone(),
            });
        }
    }
    parts
}
