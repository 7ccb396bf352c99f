//! What one stream's Durable Object keeps in SQLite, and the only code that writes it.
//!
//! Three tables: `stream_meta` (one row: the stream's configuration and position as JSON),
//! `stream_rows` (one row per append, keyed by the byte offset where it ends; an append is at most
//! `STREAM_APPEND_BYTES_MAX` = 1 MiB, so no row comes near the 2 MB row limit) and
//! `stream_producers` (idempotent-producer state). A fork holds a copy of the rows it inherits, so
//! reading a fork never needs its source (offsets are shared with the source, as the protocol says).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use super::recent::RecentRows;
use crate::cloudflare::sql::{blob_at, int_at, text_at, Param, Sql};
use crate::core::limits::STREAM_RECENT_ROWS_BYTES_MAX;
use crate::core::streams::closure::ClosedBy;
use crate::core::streams::create::StreamConfig;
use crate::core::streams::offset::Offset;
use crate::core::streams::producer::ProducerState;
use crate::core::streams::ttl::{ExpiresAt, Expiry, Lifetime};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS stream_meta (k INTEGER PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stream_rows (end_byte INTEGER PRIMARY KEY, start_byte INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS stream_producers (id TEXT PRIMARY KEY, epoch INTEGER NOT NULL, last_seq INTEGER NOT NULL);";

/// The stream's configuration and position: the one `stream_meta` row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Meta {
    /// When the stream was created; part of the ETag so a re-created stream never matches.
    pub created_ms: u64,
    pub content_type: String,
    pub expiry: StoredExpiry,
    pub requested_expiry: StoredExpiry,
    pub last_access_ms: u64,
    /// Byte offset after the last stored append (offsets are `0_<bytes>`).
    pub tail: u64,
    pub stored_bytes: u64,
    pub closed: bool,
    pub closed_by: Option<(String, u64, u64)>,
    pub last_stream_seq: Option<String>,
    pub forked_from: Option<String>,
    pub fork_offset: Option<u64>,
    pub fork_sub_offset: u64,
    /// Deleted (or expired) while forks still read from it: 410 until the last fork lets go.
    pub soft_deleted: bool,
    /// Forks created from this stream that still exist.
    pub fork_refs: u64,
    /// `StreamConfig::fork_depth` (absent in rows written before it existed: read as 0).
    #[serde(default)]
    pub fork_depth: u32,
}

/// `Expiry` as stored (the core type is not serde-aware on purpose).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum StoredExpiry {
    Never,
    Ttl { seconds: u64 },
    At { raw: String, at_ms: u64 },
}

pub use super::recent::Row;

/// The stream's tables and an in-memory copy of its small state.
pub struct Store {
    sql: Sql,
    pub meta: Option<Meta>,
    pub producers: HashMap<String, ProducerState>,
    /// `meta.last_access_ms` as storage last saw it (a read's renewal may be ahead of it: see
    /// `STREAM_TTL_RENEWAL_UNSAVED_MS_MAX`).
    pub saved_last_access_ms: u64,
    /// The newest rows this instance wrote: readers woken by an append read them from here.
    recent: RecentRows,
}

impl Store {
    /// Creates the tables if needed and loads the stream's state.
    pub fn open(sql: Sql) -> Result<Store, JsValue> {
        sql.run(SCHEMA, &[])?;
        let meta = sql
            .rows("SELECT v FROM stream_meta WHERE k = 0", &[])?
            .first()
            .and_then(|row| serde_json::from_str::<Meta>(&text_at(row, 0)).ok());
        let producers = sql
            .rows("SELECT id, epoch, last_seq FROM stream_producers", &[])?
            .iter()
            .map(|row| {
                let state = ProducerState {
                    epoch: int_at(row, 1),
                    last_seq: int_at(row, 2),
                };
                (text_at(row, 0), state)
            })
            .collect();
        Ok(Store {
            sql,
            saved_last_access_ms: meta.as_ref().map_or(0, |m: &Meta| m.last_access_ms),
            meta,
            producers,
            recent: RecentRows::new(STREAM_RECENT_ROWS_BYTES_MAX),
        })
    }

    /// What this store's statements cost SQLite so far (test builds only; a reopened store
    /// starts from zero).
    #[cfg(feature = "test-hooks")]
    pub fn io(&self) -> crate::cloudflare::sql::SqlIo {
        self.sql.io()
    }

    /// Writes the in-memory meta row.
    pub fn save_meta(&mut self) -> Result<(), JsValue> {
        let Some(meta) = &self.meta else {
            return Ok(());
        };
        let text = serde_json::to_string(meta).map_err(|_| JsValue::from_str("meta encoding"))?;
        self.sql.run(
            "INSERT INTO stream_meta (k, v) VALUES (0, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v",
            &[Param::Text(&text)],
        )?;
        self.saved_last_access_ms = meta.last_access_ms;
        Ok(())
    }

    /// Forgets everything: the stream no longer exists.
    pub fn purge(&mut self) -> Result<(), JsValue> {
        self.sql.run(
            "DELETE FROM stream_meta; DELETE FROM stream_rows; DELETE FROM stream_producers;",
            &[],
        )?;
        self.meta = None;
        self.producers.clear();
        self.recent.clear();
        Ok(())
    }

    /// Stores one append that ends at `end`, and keeps it for the readers it wakes. (A write
    /// whose transaction fails later makes the shell reopen the whole store, this copy too.)
    pub fn insert_row(&mut self, start: u64, end: u64, data: &[u8]) -> Result<(), JsValue> {
        self.sql.run(
            "INSERT INTO stream_rows (end_byte, start_byte, data) VALUES (?, ?, ?)",
            &[Param::Int(end), Param::Int(start), Param::Blob(data)],
        )?;
        self.recent.push(Row {
            start,
            end,
            data: data.to_vec(),
        });
        Ok(())
    }

    /// Stores a producer's new state.
    pub fn save_producer(&mut self, id: &str, state: ProducerState) -> Result<(), JsValue> {
        self.sql.run(
            "INSERT INTO stream_producers (id, epoch, last_seq) VALUES (?, ?, ?)
             ON CONFLICT (id) DO UPDATE SET epoch = excluded.epoch, last_seq = excluded.last_seq",
            &[
                Param::Text(id),
                Param::Int(state.epoch),
                Param::Int(state.last_seq),
            ],
        )?;
        self.producers.insert(id.to_owned(), state);
        Ok(())
    }

    /// Rows ending after `from`, in order, until `bytes_max` is passed (always at least one row)
    /// or `upto` is reached (rows ending after `upto` are left out).
    /// Readers at or near the tail get them from the rows this instance kept, without a read.
    pub fn rows_after(&self, from: u64, upto: u64, bytes_max: u64) -> Result<Vec<Row>, JsValue> {
        if let Some(rows) = self.recent.after(from, upto, bytes_max) {
            return Ok(rows);
        }
        let mut out = Vec::new();
        let mut total = 0u64;
        let mut cursor = from;
        // Pages of a few rows keep each SQL result small even when rows are large.
        loop {
            let page = self.sql.rows(
                "SELECT start_byte, end_byte, data FROM stream_rows WHERE end_byte > ? AND end_byte <= ? ORDER BY end_byte LIMIT 64",
                &[Param::Int(cursor), Param::Int(upto)],
            )?;
            let page_len = page.len();
            for row in &page {
                let data = blob_at(row, 2);
                if !out.is_empty() && total + data.len() as u64 > bytes_max {
                    return Ok(out);
                }
                total += data.len() as u64;
                cursor = int_at(row, 1);
                out.push(Row {
                    start: int_at(row, 0),
                    end: cursor,
                    data,
                });
            }
            if page_len < 64 || total >= bytes_max {
                return Ok(out);
            }
        }
    }

    /// The row that starts exactly at `start`, if any.
    pub fn row_starting_at(&self, start: u64) -> Result<Option<Row>, JsValue> {
        let rows = self.sql.rows(
            "SELECT start_byte, end_byte, data FROM stream_rows WHERE start_byte = ? ORDER BY end_byte LIMIT 1",
            &[Param::Int(start)],
        )?;
        Ok(rows.first().map(|row| Row {
            start: int_at(row, 0),
            end: int_at(row, 1),
            data: blob_at(row, 2),
        }))
    }
}

impl Meta {
    pub fn tail_offset(&self) -> Offset {
        Offset {
            read_seq: 0,
            byte_offset: self.tail,
        }
    }

    pub fn lifetime(&self) -> Lifetime {
        Lifetime {
            expiry: self.expiry.to_core(),
            last_access_ms: self.last_access_ms,
        }
    }

    /// The configuration an idempotent PUT is compared with.
    pub fn config(&self) -> StreamConfig {
        StreamConfig {
            content_type: self.content_type.clone(),
            expiry: self.expiry.to_core(),
            requested_expiry: self.requested_expiry.to_core(),
            forked_from: self.forked_from.clone(),
            fork_offset: self.fork_offset.map(|b| Offset {
                read_seq: 0,
                byte_offset: b,
            }),
            fork_sub_offset: self.fork_sub_offset,
            fork_depth: self.fork_depth,
        }
    }

    pub fn closed_by(&self) -> Option<ClosedBy> {
        self.closed_by.as_ref().map(|(id, epoch, seq)| ClosedBy {
            producer_id: id.clone(),
            epoch: *epoch,
            seq: *seq,
        })
    }
}

impl StoredExpiry {
    pub fn from_core(expiry: &Expiry) -> StoredExpiry {
        match expiry {
            Expiry::Never => StoredExpiry::Never,
            Expiry::Ttl { seconds } => StoredExpiry::Ttl { seconds: *seconds },
            Expiry::At(at) => StoredExpiry::At {
                raw: at.raw.clone(),
                at_ms: at.at_ms,
            },
        }
    }

    pub fn to_core(&self) -> Expiry {
        match self {
            StoredExpiry::Never => Expiry::Never,
            StoredExpiry::Ttl { seconds } => Expiry::Ttl { seconds: *seconds },
            StoredExpiry::At { raw, at_ms } => Expiry::At(ExpiresAt {
                raw: raw.clone(),
                at_ms: *at_ms,
            }),
        }
    }
}
