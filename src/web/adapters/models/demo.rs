//! The demo model on a JS host: the host-independent [`crate::turn::DemoModel`] pausing
//! `chunkDelayMs` between chunks through the host's own `setTimeout`. Deterministic, no network.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::descriptor::chunk_delay_ms;
use crate::ports::chat::Sleep;
use crate::ports::LocalFuture;
use crate::turn::DemoModel;
use crate::web::js::sleep_ms;

/// Pauses through `setTimeout`. Dropping the returned future is the abort.
struct HostSleep;

impl Sleep for HostSleep {
    fn sleep(&self, ms: u64) -> LocalFuture<'_, ()> {
        let ms = u32::try_from(ms).unwrap_or(u32::MAX);
        Box::pin(async move {
            sleep_ms(ms).await;
        })
    }
}

/// From `{ kind: 'turnkeep.demo', chunkDelayMs? }`. A delay of 0 streams without timers.
pub fn demo_model_from_descriptor(descriptor: &JsValue) -> Result<DemoModel, String> {
    let ms = chunk_delay_ms(descriptor)?;
    let sleep = (ms > 0).then(|| Rc::new(HostSleep) as Rc<dyn Sleep>);
    Ok(DemoModel::new(sleep, u64::from(ms)))
}
