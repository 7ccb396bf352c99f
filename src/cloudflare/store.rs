//! `ChatSessionStore`: what the `ChatSession` Durable Object does with its SQLite storage.
//! The object (`super::chat_session`) builds one from its storage and serves its RPC methods
//! from here. The values are the ones today's RPC callers pass (JSON text or plain JS values),
//! and the tables are the ones the earlier JS class wrote, so stored sessions stay readable.
//!
//! - The session envelope: `saveSession(snapshot, expectedCursor)` is compare-and-set on the
//!   stored cursor inside one `transactionSync`; `false` on conflict, never an overwrite.
//! - The canonical messages (ChatMemory): validated with the wire decoder, one message per
//!   position, each split over rows of at most `DO_ROW_BYTES_MAX` bytes; a save rewrites only
//!   the positions whose text changed.
//!
//! Every method is synchronous: a Durable Object runs one at a time, and nothing here awaits,
//! so no other request can interleave between the compare and the write.

use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::rows::{decide_save, join_rows, plan_messages, split_rows, Row, SaveDecision, Stored};
use super::sql::{int_at, opt_text_at, uint_at, Param, Sql, SqlRow};
use crate::core::checks::{is_safe_id, safe_uint};
use crate::core::limits::{
    DO_MESSAGES_JSON_BYTES_MAX, DO_ROW_BYTES_MAX, DO_SESSION_JSON_BYTES_MAX,
};
use crate::core::protocol::message::{decode_messages, message_to_value};
use crate::core::session::check_fence;
use crate::web::adapters::chat_memory::read_fence;
use crate::web::convert::optional_safe_uint;

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS turnkeep_session (session_id TEXT PRIMARY KEY, cursor INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS turnkeep_session_row (session_id TEXT NOT NULL, part INTEGER NOT NULL, \
     body TEXT NOT NULL, PRIMARY KEY (session_id, part))",
    "CREATE TABLE IF NOT EXISTS turnkeep_message_row (position INTEGER NOT NULL, part INTEGER NOT NULL, \
     body TEXT NOT NULL, PRIMARY KEY (position, part))",
    // The highest memory fence a save was made under (one row; none until a fenced save).
    "CREATE TABLE IF NOT EXISTS turnkeep_message_fence (id INTEGER PRIMARY KEY CHECK (id = 0), \
     fence INTEGER NOT NULL)",
];

/// The storage of one `ChatSession` Durable Object.
pub struct ChatSessionStore {
    sql: Sql,
}

impl ChatSessionStore {
    /// Creates the tables when missing. Fails when the storage has no SQL interface (the class
    /// is missing from `new_sqlite_classes`).
    pub fn open(storage: &worker::Storage) -> Result<ChatSessionStore, JsValue> {
        let sql = Sql::from_storage(storage).map_err(|m| error("new ChatSessionStore", &m))?;
        for statement in SCHEMA {
            sql.run(statement, &[])?;
        }
        Ok(Self { sql })
    }

    /// `loadSession(sessionId)`: the stored envelope as JSON text, or `undefined` when absent.
    pub fn load_session(&self, session_id: JsValue) -> Result<JsValue, JsValue> {
        let id = safe_id_arg("loadSession", &session_id)?;
        match session_text(&self.sql, &id)? {
            Some(text) => Ok(JsValue::from_str(&text)),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// `saveSession(snapshot, expectedCursor)`: compare-and-set. `expectedCursor`
    /// `undefined`/`null` creates only when absent; a number writes only over that stored
    /// cursor. Returns `false` on conflict. Throws for a snapshot without a SafeId `sessionId`
    /// and a safe-integer `cursor`, or larger than `DO_SESSION_JSON_BYTES_MAX`.
    pub fn save_session(
        &self,
        snapshot: JsValue,
        expected_cursor: JsValue,
    ) -> Result<bool, JsValue> {
        let (id, cursor, text) = read_snapshot(&snapshot).map_err(|m| error("saveSession", &m))?;
        let expected =
            read_expected_cursor(&expected_cursor).map_err(|m| error("saveSession", &m))?;
        let sql = self.sql.clone();
        self.sql.transaction(move || {
            let stored = stored_cursor(&sql, &id)?;
            if decide_save(stored, expected) == SaveDecision::Conflict {
                return Ok(false);
            }
            sql.run(
                "INSERT INTO turnkeep_session (session_id, cursor) VALUES (?, ?) \
                 ON CONFLICT (session_id) DO UPDATE SET cursor = excluded.cursor",
                &[Param::Text(&id), Param::Int(cursor)],
            )?;
            sql.run(
                "DELETE FROM turnkeep_session_row WHERE session_id = ?",
                &[Param::Text(&id)],
            )?;
            insert_parts(
                &sql,
                "INSERT INTO turnkeep_session_row (session_id, part, body) VALUES (?, ?, ?)",
                Param::Text(&id),
                &text,
            )?;
            Ok(true)
        })
    }

    /// `deleteSession(sessionId)`: removes the envelope; `true` when one existed.
    pub fn delete_session(&self, session_id: JsValue) -> Result<bool, JsValue> {
        let id = safe_id_arg("deleteSession", &session_id)?;
        let sql = self.sql.clone();
        self.sql.transaction(move || {
            let existed = stored_cursor(&sql, &id)? != Stored::Absent;
            sql.run(
                "DELETE FROM turnkeep_session WHERE session_id = ?",
                &[Param::Text(&id)],
            )?;
            sql.run(
                "DELETE FROM turnkeep_session_row WHERE session_id = ?",
                &[Param::Text(&id)],
            )?;
            Ok(existed)
        })
    }

    /// `loadMessages()`: the saved canonical messages (an array; empty when none were saved).
    pub fn load_messages(&self) -> Result<JsValue, JsValue> {
        js_sys::JSON::parse(&self.load_messages_json()?)
    }

    /// `loadMessagesJson()`: the same as JSON text (what the Worker's Rust ChatMemory reads:
    /// the stored texts joined, no JS array built on either side).
    pub fn load_messages_json(&self) -> Result<String, JsValue> {
        Ok(format!("[{}]", message_texts(&self.sql)?.join(",")))
    }

    /// `saveMessages(messages, fence?)`: replaces the saved conversation. Throws (storing
    /// nothing) when `messages` is not a valid message array or its JSON exceeds
    /// `DO_MESSAGES_JSON_BYTES_MAX`, and when a save under a higher `fence` (a safe integer; a
    /// turn's claim generation) was made before (`core::session::check_fence`).
    pub fn save_messages(&self, messages: JsValue, fence: JsValue) -> Result<(), JsValue> {
        let texts = read_messages(&messages).map_err(|m| error("saveMessages", &m))?;
        let fence = read_fence(&fence).map_err(|m| error("saveMessages", &m))?;
        let sql = self.sql.clone();
        self.sql.transaction(move || {
            if let Some(fence) = fence {
                check_fence(stored_fence(&sql)?, Some(fence))
                    .map_err(|refused| error("saveMessages", &refused))?;
                sql.run(
                    "INSERT INTO turnkeep_message_fence (id, fence) VALUES (0, ?) \
                     ON CONFLICT (id) DO UPDATE SET fence = excluded.fence",
                    &[Param::Int(fence)],
                )?;
            }
            let plan = plan_messages(&message_texts(&sql)?, &texts);
            for position in plan.rewrite {
                let at = Param::Int(position as u64);
                sql.run("DELETE FROM turnkeep_message_row WHERE position = ?", &[at])?;
                insert_parts(
                    &sql,
                    "INSERT INTO turnkeep_message_row (position, part, body) VALUES (?, ?, ?)",
                    at,
                    &texts[position],
                )?;
            }
            if let Some(from) = plan.truncate_from {
                sql.run(
                    "DELETE FROM turnkeep_message_row WHERE position >= ?",
                    &[Param::Int(from as u64)],
                )?;
            }
            Ok(())
        })
    }

    /// `stats()`: `{ sessionRows, messageRows, rowBytesMax }` — how the data is laid out in
    /// rows (operators and tests check that no row nears the Durable Object value limit).
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        let count = |table: &str| -> Result<(f64, f64), JsValue> {
            let rows = self.sql.rows(
                &format!("SELECT COUNT(*) AS n, COALESCE(MAX(LENGTH(CAST(body AS BLOB))), 0) AS bytes FROM {table}"),
                &[],
            )?;
            let number = |i| rows.first().map_or(0.0, |row| int_at(row, i) as f64);
            Ok((number(0), number(1)))
        };
        let (session_rows, session_bytes) = count("turnkeep_session_row")?;
        let (message_rows, message_bytes) = count("turnkeep_message_row")?;
        let out = js_sys::Object::new();
        js_sys::Reflect::set(&out, &"sessionRows".into(), &session_rows.into())?;
        js_sys::Reflect::set(&out, &"messageRows".into(), &message_rows.into())?;
        js_sys::Reflect::set(
            &out,
            &"rowBytesMax".into(),
            &session_bytes.max(message_bytes).into(),
        )?;
        Ok(out.into())
    }
}

/// A JS `Error` naming the method, for the developer (never sent to a chat client as is).
fn error(method: &str, detail: &str) -> JsValue {
    js_sys::Error::new(&format!("ChatSessionStore.{method}: {detail}")).into()
}

fn safe_id_arg(method: &str, value: &JsValue) -> Result<String, JsValue> {
    value
        .as_string()
        .filter(|s| is_safe_id(s))
        .ok_or_else(|| error(method, "sessionId must be a SafeId"))
}

/// Stores `text` as rows `(key, part, body)` of at most `DO_ROW_BYTES_MAX` bytes each, through
/// `insert` (a three-placeholder INSERT into the record's row table).
fn insert_parts(sql: &Sql, insert: &str, key: Param<'_>, text: &str) -> Result<(), JsValue> {
    for (part, body) in split_rows(text, DO_ROW_BYTES_MAX).into_iter().enumerate() {
        sql.run(insert, &[key, Param::Int(part as u64), Param::Text(body)])?;
    }
    Ok(())
}

/// The fence of the last fenced save (`None` before the first).
fn stored_fence(sql: &Sql) -> Result<Option<u64>, JsValue> {
    let rows = sql.rows("SELECT fence FROM turnkeep_message_fence WHERE id = 0", &[])?;
    Ok(rows.first().and_then(|row| uint_at(row, 0)))
}

/// The stored cursor of `id`, read in the same transaction as the write that depends on it.
fn stored_cursor(sql: &Sql, id: &str) -> Result<Stored, JsValue> {
    let rows = sql.rows(
        "SELECT cursor FROM turnkeep_session WHERE session_id = ?",
        &[Param::Text(id)],
    )?;
    let Some(row) = rows.first() else {
        return Ok(Stored::Absent);
    };
    let cursor = uint_at(row, 0).and_then(|n| safe_uint(&Value::from(n)));
    Ok(cursor.map_or(Stored::Unreadable, Stored::Cursor))
}

fn session_text(sql: &Sql, id: &str) -> Result<Option<String>, JsValue> {
    let rows = sql.rows(
        "SELECT 0, part, body FROM turnkeep_session_row WHERE session_id = ? ORDER BY part",
        &[Param::Text(id)],
    )?;
    let rows = rows.iter().map(read_row).collect::<Result<Vec<_>, _>>()?;
    let mut texts = join_rows(rows).map_err(|e| error("loadSession", &e.to_string()))?;
    Ok(texts.pop())
}

fn message_texts(sql: &Sql) -> Result<Vec<String>, JsValue> {
    let rows = sql.rows(
        "SELECT position, part, body FROM turnkeep_message_row ORDER BY position, part",
        &[],
    )?;
    let rows = rows.iter().map(read_row).collect::<Result<Vec<_>, _>>()?;
    join_rows(rows).map_err(|e| error("loadMessages", &e.to_string()))
}

/// One SQL row `(position, part, body)` as a [`Row`].
fn read_row(row: &SqlRow) -> Result<Row, JsValue> {
    match (uint_at(row, 0), uint_at(row, 1), opt_text_at(row, 2)) {
        (Some(position), Some(part), Some(body)) => Ok(Row {
            position,
            part,
            body,
        }),
        _ => Err(error(
            "read",
            "a stored row is damaged (position, part or body missing)",
        )),
    }
}

/// A value's JSON text: strings are taken as JSON text, anything else goes through `JSON.stringify`.
fn json_text(value: &JsValue) -> Result<String, String> {
    if let Some(text) = value.as_string() {
        return Ok(text);
    }
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| "value has no JSON form".to_string())
}

/// The snapshot's `sessionId`, `cursor` and compact JSON text.
fn read_snapshot(snapshot: &JsValue) -> Result<(String, u64, String), String> {
    let text = json_text(snapshot)?;
    if text.len() > DO_SESSION_JSON_BYTES_MAX {
        return Err(format!(
            "snapshot JSON is larger than {DO_SESSION_JSON_BYTES_MAX} bytes"
        ));
    }
    let value: Value =
        serde_json::from_str(&text).map_err(|_| "snapshot is not valid JSON".to_string())?;
    let id = value
        .get("sessionId")
        .and_then(Value::as_str)
        .filter(|s| is_safe_id(s))
        .ok_or("snapshot.sessionId must be a SafeId")?
        .to_string();
    let cursor = value
        .get("cursor")
        .and_then(safe_uint)
        .ok_or("snapshot.cursor must be a non-negative safe integer")?;
    Ok((id, cursor, value.to_string()))
}

fn read_expected_cursor(value: &JsValue) -> Result<Option<u64>, String> {
    optional_safe_uint(value)
        .map_err(|()| "expectedCursor must be undefined or a non-negative safe integer".to_string())
}

/// Validated messages, one canonical JSON text each.
fn read_messages(messages: &JsValue) -> Result<Vec<String>, String> {
    let text = json_text(messages)?;
    if text.len() > DO_MESSAGES_JSON_BYTES_MAX {
        return Err(format!(
            "messages JSON is larger than {DO_MESSAGES_JSON_BYTES_MAX} bytes"
        ));
    }
    let value: Value =
        serde_json::from_str(&text).map_err(|_| "messages is not valid JSON".to_string())?;
    let decoded = decode_messages(&value).map_err(|e| e.to_string())?;
    Ok(decoded
        .iter()
        .map(|m| message_to_value(m).to_string())
        .collect())
}
