//! The `?uri=` value: a `ui://` resource URI. Checked before the resolver sees it; a bad one is
//! 400 and is never echoed.

use crate::limits::SANDBOX_URI_CHARS_MAX;

/// Why a URI was refused (logs and tests only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UriError {
    Missing,
    TooLong,
    NotUi,
    NoHost,
    BadCharacter,
}

/// `ui://<host>[/<path>]`: at most [`SANDBOX_URI_CHARS_MAX`] characters of RFC 3986
/// unreserved, sub-delimiter, `:`, `@`, `/` and `%` characters, with a non-empty authority.
/// The scheme is matched exactly (lower case), as MCP writes it.
pub fn check_ui_uri(uri: Option<&str>) -> Result<&str, UriError> {
    let uri = uri.ok_or(UriError::Missing)?;
    if uri.chars().count() > SANDBOX_URI_CHARS_MAX {
        return Err(UriError::TooLong);
    }
    let rest = uri.strip_prefix("ui://").ok_or(UriError::NotUi)?;
    if !rest.bytes().all(is_uri_byte) {
        return Err(UriError::BadCharacter);
    }
    let host = rest.split('/').next().unwrap_or("");
    if host.is_empty() {
        return Err(UriError::NoHost);
    }
    Ok(uri)
}

fn is_uri_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!$&()*+,;=:@/%".contains(&b)
}
