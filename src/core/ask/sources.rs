//! Grounding: the sources a retriever returned, kept only when each is a valid source whose
//! link the trusted site policy allows, cut to the site's `maxSources`. No source left means
//! the answer is not grounded (`ASK_NO_GROUNDED_SOURCES`), never an uncited answer.

use serde_json::{json, Value};

use super::fields::strict;
use super::site::Site;
use super::text::{label, safe_href, trimmed_text, Href};
use crate::limits::ASK_EXCERPT_UNITS_MAX;
use crate::protocol::field::{FieldError, MUST_BE_SAFE_ID};

/// A citable source (`id`, trimmed `title` and `excerpt`, safe `href`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub id: String,
    pub title: String,
    pub href: String,
    pub excerpt: String,
}

impl Source {
    pub fn to_value(&self) -> Value {
        json!({ "id": self.id, "title": self.title, "href": self.href, "excerpt": self.excerpt })
    }
}

/// Why a candidate was dropped (for tests and logs; never sent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dropped {
    Invalid(FieldError),
    OutsidePolicy { id: String },
}

/// The retriever's answer did not have the shape of a list at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotAList;

/// Keeps the valid, policy-allowed candidates, in order, at most `site.max_sources`.
pub fn ground(site: &Site, candidates: &Value) -> Result<(Vec<Source>, Vec<Dropped>), NotAList> {
    let list = candidates.as_array().ok_or(NotAList)?;
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for (i, candidate) in list.iter().enumerate() {
        if kept.len() == site.max_sources {
            break;
        }
        match decode_source(candidate, &format!("[{i}]")) {
            Ok((source, href)) if site.allows(&href) => kept.push(source),
            Ok((source, _)) => dropped.push(Dropped::OutsidePolicy { id: source.id }),
            Err(e) => dropped.push(Dropped::Invalid(e)),
        }
    }
    Ok((kept, dropped))
}

/// One source, strictly (AgentsKit's source schema).
pub(crate) fn decode_source(v: &Value, path: &str) -> Result<(Source, Href), FieldError> {
    let o = strict(v, path, &["id", "title", "href", "excerpt"])?;
    let id = o.required("id", MUST_BE_SAFE_ID, crate::protocol::field::as_safe_id)?;
    let title = o.required("title", super::fields::MUST_BE_LABEL, |v| {
        v.as_str().and_then(label)
    })?;
    let (href_text, href) = o.required(
        "href",
        "must be a site-relative path or an http(s) URL without credentials",
        |v| {
            let s = v.as_str()?;
            safe_href(s).map(|h| (s.to_owned(), h))
        },
    )?;
    let excerpt = o.required(
        "excerpt",
        "must be a string of 1 to 4096 UTF-16 units after trimming",
        |v| {
            v.as_str()
                .and_then(|s| trimmed_text(s, ASK_EXCERPT_UNITS_MAX))
        },
    )?;
    Ok((
        Source {
            id,
            title,
            href: href_text,
            excerpt,
        },
        href,
    ))
}
