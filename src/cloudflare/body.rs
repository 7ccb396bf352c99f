//! Request bodies, read within a limit.

use js_sys::Uint8Array;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Request};

use crate::web::js::get;

/// Why a body could not be had.
#[derive(Debug, PartialEq, Eq)]
pub enum BodyError {
    TooLarge,
    Failed,
}

/// The whole body (empty when there is none), or `TooLarge` as soon as it passes `max_bytes`
/// (the rest is never read).
pub async fn read_limited(request: &Request, max_bytes: u64) -> Result<Vec<u8>, BodyError> {
    let declared = request
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > max_bytes => return Err(BodyError::TooLarge),
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
    let mut out = Vec::new();
    let complete = read_chunks(request, |chunk| {
        if out.len() as u64 + u64::from(chunk.length()) > max_bytes {
            return false;
        }
        let start = out.len();
        out.resize(start + chunk.length() as usize, 0);
        chunk.copy_to(&mut out[start..]);
        true
    })
    .await?;
    if complete {
        Ok(out)
    } else {
        Err(BodyError::TooLarge)
    }
}

/// Reads and drops up to `max_bytes` of the body (a refused request's, so the client has sent
/// it all before the answer comes).
pub async fn drain(request: &Request, max_bytes: u64) {
    let mut seen = 0u64;
    let _ = read_chunks(request, |chunk| {
        seen += u64::from(chunk.length());
        seen <= max_bytes
    })
    .await;
}

/// Feeds each chunk to `take` until the body ends (`true`) or `take` says stop (`false`, and
/// the reader is cancelled).
async fn read_chunks(
    request: &Request,
    mut take: impl FnMut(&Uint8Array) -> bool,
) -> Result<bool, BodyError> {
    let Some(body) = request.body() else {
        return Ok(true);
    };
    let reader: ReadableStreamDefaultReader = body
        .get_reader()
        .dyn_into()
        .map_err(|_| BodyError::Failed)?;
    loop {
        let step = JsFuture::from(reader.read())
            .await
            .map_err(|_| BodyError::Failed)?;
        if get(&step, "done").is_truthy() {
            return Ok(true);
        }
        let chunk: Uint8Array = get(&step, "value")
            .dyn_into()
            .map_err(|_| BodyError::Failed)?;
        if !take(&chunk) {
            let _ = JsFuture::from(reader.cancel()).await;
            return Ok(false);
        }
    }
}
