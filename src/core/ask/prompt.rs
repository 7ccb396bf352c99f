//! A chat model as an Ask generator: the grounded request it is sent (the numbered sources in a
//! system message, then the conversation) and how its usage maps to Ask usage.

use super::answer::AskUsage;
use super::request::{AskMessage, AskRole};
use super::sources::Source;
use crate::chat::model::{ModelRequest, Usage};
use crate::protocol::{Message, MessageStatus, Role};

const INSTRUCTIONS: &str = "Answer the user's last question using only the numbered sources \
below. If they do not answer it, say that the documentation does not cover it. Refer to a \
source by its number, like [1]. Be brief.";

/// The model request for one Ask turn. `created_at` stamps the messages (an argument: the core
/// reads no clock).
pub fn grounded_request(
    conversation: &[AskMessage],
    sources: &[Source],
    created_at: &str,
) -> ModelRequest {
    let mut system = String::from(INSTRUCTIONS);
    for (i, s) in sources.iter().enumerate() {
        system.push_str(&format!(
            "\n\n[{}] {} ({})\n{}",
            i + 1,
            s.title,
            s.href,
            s.excerpt
        ));
    }
    let message = |i: usize, role: Role, content: String| Message {
        id: format!("ask-{i}"),
        role,
        content,
        status: MessageStatus::Complete,
        created_at: created_at.to_owned(),
        parts: None,
        tool_calls: None,
        tool_call_id: None,
        metadata: None,
    };
    let mut messages = vec![message(0, Role::System, system)];
    for (i, m) in conversation.iter().enumerate() {
        let role = match m.role {
            AskRole::User => Role::User,
            AskRole::Assistant => Role::Assistant,
        };
        messages.push(message(i + 1, role, m.content.clone()));
    }
    ModelRequest::new(messages, Vec::new())
}

/// A chat model's token usage as Ask usage.
pub fn ask_usage(usage: Usage) -> AskUsage {
    AskUsage {
        input_tokens: Some(usage.prompt_tokens),
        output_tokens: Some(usage.completion_tokens),
        total_tokens: Some(usage.total_tokens),
        cost_usd: None,
        model: None,
    }
}
