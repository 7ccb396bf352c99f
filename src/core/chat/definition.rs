//! The options a chat definition may have, by shape, and what turnkeep does with each. A name
//! that is not in its shape's table is a config error naming it, and so is an option turnkeep
//! cannot honour: nothing a definition says is dropped unseen.
//!
//! Shapes (the shell tells them apart; `web::chat::definition` reads them):
//! - [`DEFINE_OPTIONS`]: turnkeep's `defineChat({ id, revision, model, memory, ... })`, also
//!   inside `{ chat: defineChat(...) }`;
//! - [`AGENTSKIT_DEFINITION_OPTIONS`]: AgentsKit Chat's `ChatDefinition` `{ id, revision?, chat,
//!   ... }` (and the `{ chat: defineChat(...) }` wrapper);
//! - [`AGENTSKIT_CHAT_OPTIONS`]: its `chat` (AgentsKit's `ChatConfig`, with `adapter`).

use super::settings::Setting;

/// What turnkeep does with one option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handling {
    /// Read by the definition reader (the model, memory, tools, ...).
    Read,
    /// A call setting every model call is made with.
    Setting(Setting),
    /// Accepted with no effect on the server, as in AgentsKit's own server (the reason says
    /// who reads it).
    Accepted(&'static str),
    /// Not honoured: a config error says why.
    Refused(&'static str),
    /// Named otherwise in this shape: a config error gives the name to use.
    Renamed(&'static str),
}

/// One option of a shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionRow {
    pub name: &'static str,
    pub handling: Handling,
}

const fn row(name: &'static str, handling: Handling) -> OptionRow {
    OptionRow { name, handling }
}

use Handling::{Accepted, Read, Refused, Renamed};

/// `defineChat`'s options.
pub const DEFINE_OPTIONS: &[OptionRow] = &[
    row("id", Read),
    row("revision", Read),
    row("model", Read),
    row("memory", Read),
    row("tools", Read),
    row("maxToolIterations", Read),
    row("initialMessages", Read),
    row("conversation", Read),
    row("instructions", Handling::Setting(Setting::Instructions)),
    row("temperature", Handling::Setting(Setting::Temperature)),
    row(
        "maxOutputTokens",
        Handling::Setting(Setting::MaxOutputTokens),
    ),
    row("topP", Handling::Setting(Setting::TopP)),
    row("stopSequences", Handling::Setting(Setting::StopSequences)),
    row("toolChoice", Handling::Setting(Setting::ToolChoice)),
    row(
        "providerOptions",
        Handling::Setting(Setting::ProviderOptions),
    ),
    row("systemPrompt", Renamed("instructions")),
    row("maxTokens", Renamed("maxOutputTokens")),
    row("adapter", Renamed("model")),
];

/// AgentsKit's `ChatDefinition` (the outer object).
pub const AGENTSKIT_DEFINITION_OPTIONS: &[OptionRow] = &[
    row("id", Read),
    row("revision", Read),
    row("chat", Read),
    row("conversation", Read),
    row(
        "components",
        Accepted("the component manifest is read by AgentsKit's renderers, not by its server"),
    ),
    row(
        "choiceSubmission",
        Accepted("choice submission runs in AgentsKit's renderers, not in its server"),
    ),
];

/// AgentsKit's `ChatConfig` (`definition.chat`).
pub const AGENTSKIT_CHAT_OPTIONS: &[OptionRow] = &[
    row("adapter", Read),
    row("memory", Read),
    row("tools", Read),
    row("initialMessages", Read),
    row("maxToolIterations", Read),
    row("systemPrompt", Handling::Setting(Setting::Instructions)),
    row("temperature", Handling::Setting(Setting::Temperature)),
    row("maxTokens", Handling::Setting(Setting::MaxOutputTokens)),
    row("observers", Read),
    row("onError", Read),
    row("validateArgs", Read),
    row(
        "onMessage",
        Refused("a turn's messages reach clients in its snapshots and its session log"),
    ),
    row(
        "onToolCall",
        Refused(
            "tools run in turnkeep's turn; use the tool's own execute or an observer's tool:start",
        ),
    ),
    row(
        "authorizeToolCall",
        Refused("use requiresConfirmation (a person approves over HTTP) or check in execute"),
    ),
    row("skills", Refused("skills are not implemented")),
    row(
        "retriever",
        Refused("retrieval is not implemented in chat turns (the Ask service retrieves)"),
    ),
];

/// Checks the option names of one object of a shape (`at` names it in the error: `defineChat`,
/// `definition`, `definition.chat`). The first unknown, refused or renamed name fails it.
pub fn check_names<'a>(
    table: &[OptionRow],
    names: impl IntoIterator<Item = &'a str>,
    at: &str,
) -> Result<(), String> {
    for name in names {
        match table
            .iter()
            .find(|row| row.name == name)
            .map(|row| row.handling)
        {
            None => {
                let known: Vec<&str> = table
                    .iter()
                    .filter(|row| !matches!(row.handling, Refused(_) | Renamed(_)))
                    .map(|row| row.name)
                    .collect();
                return Err(format!(
                    "{at}: unknown option {} (known: {})",
                    quoted(name),
                    known.join(", ")
                ));
            }
            Some(Refused(why)) => {
                return Err(format!("{at}.{name} is not supported by turnkeep: {why}"))
            }
            Some(Renamed(to)) => return Err(format!("{at}: {name} is called {to} here")),
            Some(_) => {}
        }
    }
    Ok(())
}

/// The setting an option of `table` is, if it is one.
pub fn setting_of(table: &[OptionRow], name: &str) -> Option<Setting> {
    table
        .iter()
        .find(|row| row.name == name)
        .and_then(|row| match row.handling {
            Handling::Setting(setting) => Some(setting),
            _ => None,
        })
}

/// A name as the error quotes it (cut short: it is the host's, but may be anything).
fn quoted(name: &str) -> String {
    let short: String = name.chars().take(64).collect();
    serde_json::Value::String(short).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_against_their_shape() {
        let cases: Vec<(&[OptionRow], Vec<&str>, Result<(), &str>)> = vec![
            (DEFINE_OPTIONS, vec!["id", "model", "temperature"], Ok(())),
            (
                DEFINE_OPTIONS,
                vec!["id", "temprature"],
                Err("defineChat: unknown option \"temprature\" (known: id, revision, model, memory, tools, maxToolIterations, initialMessages, conversation, instructions, temperature, maxOutputTokens, topP, stopSequences, toolChoice, providerOptions)"),
            ),
            (
                DEFINE_OPTIONS,
                vec!["systemPrompt"],
                Err("defineChat: systemPrompt is called instructions here"),
            ),
            (AGENTSKIT_CHAT_OPTIONS, vec!["adapter", "systemPrompt", "observers"], Ok(())),
            (
                AGENTSKIT_CHAT_OPTIONS,
                vec!["adapter", "skills"],
                Err("defineChat.skills is not supported by turnkeep: skills are not implemented"),
            ),
            (AGENTSKIT_DEFINITION_OPTIONS, vec!["id", "chat", "components"], Ok(())),
        ];
        for (table, names, want) in cases {
            assert_eq!(
                check_names(table, names.clone(), "defineChat"),
                want.map_err(str::to_owned),
                "{names:?}"
            );
        }
        assert_eq!(
            setting_of(AGENTSKIT_CHAT_OPTIONS, "maxTokens"),
            Some(Setting::MaxOutputTokens)
        );
        assert_eq!(setting_of(DEFINE_OPTIONS, "model"), None);
    }
}
