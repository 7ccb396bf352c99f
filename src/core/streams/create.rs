//! The decision for one PUT: create, idempotent re-create, or fork (Durable Streams protocol §5.1, §4.2).
//!
//! Facts relied on:
//! - Header checks come first, all 400: `Stream-TTL` and `Stream-Expires-At` together or
//!   malformed; a malformed `Stream-Fork-Offset`; `Stream-Fork-Sub-Offset` without
//!   `Stream-Forked-From` or not `0|[1-9][0-9]*`. A missing or malformed `Content-Type` is not an
//!   error: it defaults to `application/octet-stream` (or, on a fork, to the source's).
//! - A stream that already exists (and has not expired) answers 200 when the request's
//!   configuration matches and 409 otherwise; the body of such a PUT is ignored. Compared are:
//!   media type, TTL value, Expires-At as given, closure (`Stream-Closed: true` vs the stream's
//!   state), `Stream-Forked-From`, `Stream-Fork-Offset` (only when the request names one) and the
//!   sub-offset (absent = 0). A soft-deleted stream blocks its path: 409. An expired stream is
//!   gone and the path is created anew.
//! - Fork: a missing or expired source is 404, a soft-deleted source 409, a content type that
//!   differs from the source's 409, a fork offset beyond the source tail 400. The fork starts at
//!   its fork offset (offsets are shared with the source, no translation), open even when the
//!   source is closed, with no producer or `Stream-Seq` state, and with the expiry of the fork
//!   table (see `ttl::resolve_fork_expiry`). Resolving a non-zero sub-offset needs the source's
//!   data and stays with the server.
//! - Initial data: in JSON mode it is flattened like an append but `[]` is allowed (no
//!   messages); `Stream-Closed: true` creates the stream closed, with the body as its whole content.
//! - 201 Created carries `Location`, `Content-Type`, `Stream-Next-Offset` (and `Stream-Closed: true`
//!   when created closed); 200 on the idempotent path carries the same but `Location`.

use crate::diagnostics::{streams as rows, Row};
use std::fmt;

use super::closure::parse_stream_closed;
use super::content_type::{
    check_fork_content_type, is_json, matches, resolve_create_content_type, ContentTypeError,
    CreateContentType,
};
use super::json_mode::{flatten_json_body, JsonBodyError, JsonWrite};
use super::offset::{resolve_fork_offset, Offset, OffsetError};
use super::ttl::{parse_expiry_headers, resolve_fork_expiry, Expiry, ExpiryError};
use super::Rejection;
use crate::checks::parse_canonical_uint;
use crate::limits;

/// The headers of a PUT, as received.
#[derive(Clone, Copy, Debug, Default)]
pub struct CreateRequest<'a> {
    pub content_type: Option<&'a str>,
    pub ttl: Option<&'a str>,
    pub expires_at: Option<&'a str>,
    pub stream_closed: Option<&'a str>,
    pub forked_from: Option<&'a str>,
    pub fork_offset: Option<&'a str>,
    pub fork_sub_offset: Option<&'a str>,
}

/// A PUT whose headers are valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateHeaders {
    pub content_type: CreateContentType,
    /// The expiry the request asked for (before fork inheritance).
    pub expiry: Expiry,
    pub closed: bool,
    pub forked_from: Option<String>,
    /// The raw `Stream-Fork-Offset`, validated for shape only (the source decides the rest).
    pub fork_offset: Option<Offset>,
    pub fork_sub_offset: u64,
}

/// The configuration a stream keeps from its PUT (what an idempotent PUT is compared with).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamConfig {
    /// As given (or the default / inherited value); reported as `Content-Type`.
    pub content_type: String,
    /// Effective expiry (after fork inheritance).
    pub expiry: Expiry,
    /// Expiry the creating PUT asked for; idempotent PUTs are compared with this.
    pub requested_expiry: Expiry,
    pub forked_from: Option<String>,
    /// Where a fork diverges (also its first offset); `None` for a plain stream.
    pub fork_offset: Option<Offset>,
    pub fork_sub_offset: u64,
    /// Forks above this stream: 0 for a plain stream, its source's depth + 1 for a fork
    /// (bounded by `limits::STREAM_FORK_DEPTH_MAX`).
    pub fork_depth: u32,
}

/// What the server found at the target path.
#[derive(Clone, Copy, Debug)]
pub enum Target<'a> {
    /// Nothing, or an expired stream (which the server deletes first).
    Free,
    Live {
        config: &'a StreamConfig,
        closed: bool,
    },
    SoftDeleted,
}

/// What the server found at `Stream-Forked-From`.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// Missing or expired.
    Missing,
    SoftDeleted,
    Live {
        content_type: &'a str,
        expiry: &'a Expiry,
        tail: Offset,
        /// The source's own `StreamConfig::fork_depth`.
        fork_depth: u32,
    },
}

/// The answer to a PUT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CreateDecision {
    /// 201: create with `config`, starting at `start` (ZERO, or the fork offset), store
    /// `initial` after it, closed when `closed`.
    Create {
        config: StreamConfig,
        start: Offset,
        initial: InitialData,
        closed: bool,
    },
    /// 200: the same stream already exists; nothing changes (the body is ignored).
    Exists,
    /// Refused: nothing changes.
    Rejected(CreateRejection),
}

/// Initial content of a new stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InitialData {
    None,
    Bytes(Vec<u8>),
    Json(Vec<String>),
}

/// Why a PUT was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateRejection {
    Expiry(ExpiryError),
    ForkOffset(OffsetError),
    /// `Stream-Fork-Sub-Offset` malformed or without `Stream-Forked-From` (400).
    ForkSubOffset,
    /// `Stream-Fork-Offset` without `Stream-Forked-From` (400).
    ForkOffsetWithoutSource,
    /// The stream exists with another configuration, or its path is blocked (409).
    ConfigConflict,
    SourceMissing,
    SourceSoftDeleted,
    /// The source is already `limits::STREAM_FORK_DEPTH_MAX` forks deep (400).
    ForkTooDeep,
    ContentType(ContentTypeError),
    Json(JsonBodyError),
    BodyTooLarge,
}

/// Checks the PUT headers (before the body is read).
pub fn parse_create_headers(r: &CreateRequest<'_>) -> Result<CreateHeaders, CreateRejection> {
    let expiry = parse_expiry_headers(r.ttl, r.expires_at).map_err(CreateRejection::Expiry)?;
    let fork_offset = match (r.fork_offset, r.forked_from) {
        (None, _) => None,
        (Some(_), None) => return Err(CreateRejection::ForkOffsetWithoutSource),
        (Some(raw), Some(_)) => Some(Offset::parse(raw).map_err(CreateRejection::ForkOffset)?),
    };
    let fork_sub_offset = match (r.fork_sub_offset, r.forked_from) {
        (None, _) => 0,
        (Some(_), None) => return Err(CreateRejection::ForkSubOffset),
        (Some(raw), Some(_)) => parse_canonical_uint(raw).ok_or(CreateRejection::ForkSubOffset)?,
    };
    Ok(CreateHeaders {
        content_type: resolve_create_content_type(r.content_type, r.forked_from.is_some()),
        expiry,
        closed: parse_stream_closed(r.stream_closed),
        forked_from: r.forked_from.map(str::to_owned),
        fork_offset,
        fork_sub_offset,
    })
}

/// Decides a PUT whose headers parsed. `source` is consulted only for forks (pass
/// `Source::Missing` otherwise).
pub fn decide_create(
    h: &CreateHeaders,
    target: Target<'_>,
    source: Source<'_>,
    body: &[u8],
) -> CreateDecision {
    match decide(h, target, source, body) {
        Ok(decision) => decision,
        Err(rejection) => CreateDecision::Rejected(rejection),
    }
}

fn decide(
    h: &CreateHeaders,
    target: Target<'_>,
    source: Source<'_>,
    body: &[u8],
) -> Result<CreateDecision, CreateRejection> {
    match target {
        Target::SoftDeleted => return Err(CreateRejection::ConfigConflict),
        Target::Live { config, closed } if same_config(h, config, closed) => {
            return Ok(CreateDecision::Exists)
        }
        Target::Live { .. } => return Err(CreateRejection::ConfigConflict),
        Target::Free => {}
    }
    if body.len() as u64 > limits::STREAM_APPEND_BYTES_MAX {
        return Err(CreateRejection::BodyTooLarge);
    }
    let (config, start) = match &h.forked_from {
        None => (plain_config(h), Offset::ZERO),
        Some(from) => fork_config(h, from, source)?,
    };
    let initial = initial_data(&config.content_type, body)?;
    Ok(CreateDecision::Create {
        config,
        start,
        initial,
        closed: h.closed,
    })
}

fn same_config(h: &CreateHeaders, existing: &StreamConfig, closed: bool) -> bool {
    let content_type = match &h.content_type {
        CreateContentType::Use(value) => matches(value, &existing.content_type),
        CreateContentType::InheritFromSource => true,
    };
    content_type
        && h.expiry == existing.requested_expiry
        && h.closed == closed
        && h.forked_from == existing.forked_from
        && h.fork_offset
            .is_none_or(|o| Some(o) == existing.fork_offset)
        && h.fork_sub_offset == existing.fork_sub_offset
}

fn plain_config(h: &CreateHeaders) -> StreamConfig {
    let content_type = match &h.content_type {
        CreateContentType::Use(value) => value.clone(),
        CreateContentType::InheritFromSource => {
            super::content_type::DEFAULT_CONTENT_TYPE.to_owned()
        }
    };
    StreamConfig {
        content_type,
        expiry: h.expiry.clone(),
        requested_expiry: h.expiry.clone(),
        forked_from: None,
        fork_offset: None,
        fork_sub_offset: 0,
        fork_depth: 0,
    }
}

fn fork_config(
    h: &CreateHeaders,
    from: &str,
    source: Source<'_>,
) -> Result<(StreamConfig, Offset), CreateRejection> {
    let (source_type, source_expiry, tail, source_depth) = match source {
        Source::Missing => return Err(CreateRejection::SourceMissing),
        Source::SoftDeleted => return Err(CreateRejection::SourceSoftDeleted),
        Source::Live {
            content_type,
            expiry,
            tail,
            fork_depth,
        } => (content_type, expiry, tail, fork_depth),
    };
    if source_depth >= limits::STREAM_FORK_DEPTH_MAX {
        return Err(CreateRejection::ForkTooDeep);
    }
    let content_type = check_fork_content_type(&h.content_type, source_type)
        .map_err(CreateRejection::ContentType)?;
    let offset = resolve_fork_offset(h.fork_offset, tail).map_err(CreateRejection::ForkOffset)?;
    let config = StreamConfig {
        content_type,
        expiry: resolve_fork_expiry(source_expiry, &h.expiry),
        requested_expiry: h.expiry.clone(),
        forked_from: Some(from.to_owned()),
        fork_offset: Some(offset),
        fork_sub_offset: h.fork_sub_offset,
        fork_depth: source_depth + 1,
    };
    Ok((config, offset))
}

fn initial_data(content_type: &str, body: &[u8]) -> Result<InitialData, CreateRejection> {
    if body.is_empty() {
        return Ok(InitialData::None);
    }
    if !is_json(content_type) {
        return Ok(InitialData::Bytes(body.to_vec()));
    }
    match flatten_json_body(body, JsonWrite::Create).map_err(CreateRejection::Json)? {
        messages if messages.is_empty() => Ok(InitialData::None),
        messages => Ok(InitialData::Json(messages)),
    }
}

impl CreateDecision {
    /// HTTP status: 201, 200, or the rejection's.
    pub fn status(&self) -> u16 {
        match self {
            CreateDecision::Create { .. } => 201,
            CreateDecision::Exists => 200,
            CreateDecision::Rejected(r) => r.status(),
        }
    }
}

impl fmt::Display for CreateRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CreateRejection::Expiry(e) => e.fmt(f),
            CreateRejection::ForkOffset(e) => e.fmt(f),
            CreateRejection::ForkSubOffset => f.write_str(
                "Stream-Fork-Sub-Offset must be a non-negative integer and needs Stream-Forked-From",
            ),
            CreateRejection::ForkOffsetWithoutSource => f.write_str("Stream-Fork-Offset needs Stream-Forked-From"),
            CreateRejection::ConfigConflict => {
                f.write_str("a stream already exists at this path with a different configuration")
            }
            CreateRejection::SourceMissing => f.write_str("the source stream does not exist"),
            CreateRejection::SourceSoftDeleted => f.write_str("the source stream was deleted"),
            CreateRejection::ForkTooDeep => write!(
                f,
                "the source stream is already {} forks deep",
                limits::STREAM_FORK_DEPTH_MAX
            ),
            CreateRejection::ContentType(e) => e.fmt(f),
            CreateRejection::Json(e) => e.fmt(f),
            CreateRejection::BodyTooLarge => {
                write!(f, "initial data may be at most {} bytes", limits::STREAM_APPEND_BYTES_MAX)
            }
        }
    }
}

impl Rejection for CreateRejection {
    fn row(&self) -> Row {
        match self {
            CreateRejection::Expiry(e) => e.row(),
            CreateRejection::ForkOffset(e) => e.row(),
            CreateRejection::ForkSubOffset => rows::FORK_SUB_OFFSET_INVALID,
            CreateRejection::ForkOffsetWithoutSource => rows::FORK_OFFSET_WITHOUT_SOURCE,
            CreateRejection::ConfigConflict => rows::STREAM_EXISTS,
            CreateRejection::SourceMissing => rows::FORK_SOURCE_MISSING,
            CreateRejection::SourceSoftDeleted => rows::FORK_SOURCE_DELETED,
            CreateRejection::ForkTooDeep => rows::FORK_TOO_DEEP,
            CreateRejection::ContentType(e) => e.row(),
            CreateRejection::Json(e) => e.row(),
            CreateRejection::BodyTooLarge => rows::APPEND_TOO_LARGE,
        }
    }
}
