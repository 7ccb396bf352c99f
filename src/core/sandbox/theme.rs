//! Theme token sets: read once from the handler's `themes` option, selected per request by
//! `?theme=` with a fallback, and written as the `:root` block of the sandbox document.

use serde_json::Value;

use super::escape::css_value;
use crate::limits::{
    SANDBOX_THEMES_MAX, SANDBOX_THEME_NAME_CHARS_MAX, SANDBOX_THEME_TOKENS_MAX,
    SANDBOX_TOKEN_NAME_CHARS_MAX, SANDBOX_TOKEN_VALUE_CHARS_MAX,
};
use crate::protocol::field::FieldError;

/// One named token set. Only `--ns-*` tokens are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Theme {
    pub name: String,
    pub tokens: Vec<(String, String)>,
}

/// `{ [name]: { [--ns-token]: value } }`, in the object's order. Tokens with another name are
/// dropped (they are not the sandbox's to inject); a value that is not a string is an error.
pub fn decode_themes(v: &Value) -> Result<Vec<Theme>, FieldError> {
    let map = v
        .as_object()
        .filter(|m| m.len() <= SANDBOX_THEMES_MAX)
        .ok_or_else(|| FieldError::new("themes", "must be an object of at most 64 themes"))?;
    map.iter()
        .map(|(name, tokens)| {
            let path = format!("themes[{name:?}]");
            if name.is_empty() || name.chars().count() > SANDBOX_THEME_NAME_CHARS_MAX {
                return Err(FieldError::new(
                    path,
                    "must be named by 1 to 128 characters",
                ));
            }
            let tokens = tokens
                .as_object()
                .filter(|m| m.len() <= SANDBOX_THEME_TOKENS_MAX)
                .ok_or_else(|| {
                    FieldError::new(path.clone(), "must be an object of at most 512 tokens")
                })?;
            let mut kept = Vec::new();
            for (token, value) in tokens {
                let value = value
                    .as_str()
                    .filter(|s| s.chars().count() <= SANDBOX_TOKEN_VALUE_CHARS_MAX)
                    .ok_or_else(|| {
                        FieldError::new(
                            format!("{path}[{token:?}]"),
                            "must be a string of at most 1024 characters",
                        )
                    })?;
                if is_token_name(token) {
                    kept.push((token.clone(), value.to_owned()));
                }
            }
            Ok(Theme {
                name: name.clone(),
                tokens: kept,
            })
        })
        .collect()
}

/// `^--ns-[A-Za-z0-9_-]+$`, at most [`SANDBOX_TOKEN_NAME_CHARS_MAX`] characters.
pub(crate) fn is_token_name(name: &str) -> bool {
    name.len() <= SANDBOX_TOKEN_NAME_CHARS_MAX
        && name.strip_prefix("--ns-").is_some_and(|r| {
            !r.is_empty()
                && r.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
}

/// The theme a request gets: the requested one when it exists, else the default one, else the
/// first theme; with no themes at all, an empty set named `default_name`. A blank request
/// counts as absent.
pub fn select_theme(themes: &[Theme], requested: Option<&str>, default_name: &str) -> Theme {
    let find = |name: &str| themes.iter().find(|t| t.name == name);
    requested
        .filter(|r| !r.trim().is_empty())
        .and_then(find)
        .or_else(|| find(default_name))
        .or_else(|| themes.first())
        .cloned()
        .unwrap_or_else(|| Theme {
            name: default_name.to_owned(),
            tokens: Vec::new(),
        })
}

/// The document's one style block: the tokens on `:root` (values escaped), and a base rule that
/// makes the page follow them (resources cannot carry inline styles under the sandbox CSP).
pub fn theme_style(theme: &Theme) -> String {
    let mut css = String::from(":root {\n  color-scheme: light dark;\n");
    for (name, value) in &theme.tokens {
        css.push_str(&format!("  {name}: {};\n", css_value(value)));
    }
    css.push_str(
        "}\nbody {\n  margin: 0;\n  background: var(--ns-color-surface, Canvas);\n  color: var(--ns-color-text, CanvasText);\n  font: 15px/1.5 var(--ns-font-family, system-ui, sans-serif);\n}\n",
    );
    css
}
