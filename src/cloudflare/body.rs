//! Request bodies, read within a limit.

use js_sys::Uint8Array;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Request};

use crate::core::limits;
use crate::turn::race::{race, Either};
use crate::web::js::{get, sleep_ms};

/// Why a body could not be had.
#[derive(Debug, PartialEq, Eq)]
pub enum BodyError {
    TooLarge,
    Failed,
}

/// The whole body (empty when there is none), or `TooLarge` as soon as it passes `max_bytes`
/// (the rest is read and dropped, within the drain limits, before the answer goes out).
pub async fn read_limited(request: &Request, max_bytes: u64) -> Result<Vec<u8>, BodyError> {
    let declared = request
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > max_bytes => {
            drain(request).await;
            return Err(BodyError::TooLarge);
        }
        // A declared length within the limit (the runtime holds the body to it): one read.
        Some(_) => {
            let buffer = request.array_buffer().map_err(|_| BodyError::Failed)?;
            let buffer = JsFuture::from(buffer)
                .await
                .map_err(|_| BodyError::Failed)?;
            return Ok(Uint8Array::new(&buffer).to_vec());
        }
        None => {}
    }
    let Some(mut chunks) = Chunks::of(request)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    while let Some(chunk) = chunks.next().await? {
        if out.len() as u64 + u64::from(chunk.length()) > max_bytes {
            // Read the rest before the 413 goes out: a runtime that closes a connection with
            // unread bytes resets it, and the reset can drop the answer before the client reads
            // it (a body dripped past the limit lost its 413 that way).
            chunks.drain_within(out.len() as u64).await;
            return Err(BodyError::TooLarge);
        }
        let start = out.len();
        out.resize(start + chunk.length() as usize, 0);
        chunk.copy_to(&mut out[start..]);
    }
    Ok(out)
}

/// Reads and drops the rest of the body, within `UNREAD_BODY_DRAIN_BYTES_MAX` and
/// `UNREAD_BODY_DRAIN_MS_MAX` (a refused request's, so the client has sent it all before the
/// answer comes).
pub async fn drain(request: &Request) {
    if let Ok(Some(chunks)) = Chunks::of(request) {
        chunks.drain_within(0).await;
    }
}

/// A body's reader, one chunk at a time.
struct Chunks {
    reader: ReadableStreamDefaultReader,
}

impl Chunks {
    fn of(request: &Request) -> Result<Option<Chunks>, BodyError> {
        let Some(body) = request.body() else {
            return Ok(None);
        };
        let reader = body.get_reader().dyn_into().map_err(|_| BodyError::Failed)?;
        Ok(Some(Chunks { reader }))
    }

    /// The next chunk, or `None` at the end of the body.
    async fn next(&mut self) -> Result<Option<Uint8Array>, BodyError> {
        let step = JsFuture::from(self.reader.read())
            .await
            .map_err(|_| BodyError::Failed)?;
        if get(&step, "done").is_truthy() {
            return Ok(None);
        }
        let chunk = get(&step, "value").dyn_into().map_err(|_| BodyError::Failed)?;
        Ok(Some(chunk))
    }

    /// Reads and drops chunks until the body ends, `UNREAD_BODY_DRAIN_BYTES_MAX` bytes in all
    /// (counting the `seen_bytes` already read) or `UNREAD_BODY_DRAIN_MS_MAX` have passed; then
    /// cancels the reader (the connection closes).
    async fn drain_within(mut self, seen_bytes: u64) {
        let read = async {
            let mut seen = seen_bytes;
            while let Ok(Some(chunk)) = self.next().await {
                seen += u64::from(chunk.length());
                if seen > limits::UNREAD_BODY_DRAIN_BYTES_MAX {
                    return false;
                }
            }
            true
        };
        let ended = matches!(race(read, sleep_ms(limits::UNREAD_BODY_DRAIN_MS_MAX)).await, Either::Left(true));
        if !ended {
            let _ = JsFuture::from(self.reader.cancel()).await;
        }
    }
}
