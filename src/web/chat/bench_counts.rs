//! What every chat response of this module instance did, summed: states offered to readers,
//! lines encoded, messages encoded and reused. Counted only in the test build (feature
//! `test-hooks`, pkg-worker-test/), whose `__snapshotCountsForBench` export tests/js and
//! bench/turn.mjs read; the npm build has neither the counter nor the export, and its calls
//! below compile to nothing.

use crate::turn::snapshot::LineCounts;

#[cfg(feature = "test-hooks")]
mod counted {
    use std::cell::Cell;

    use wasm_bindgen::prelude::*;

    use crate::turn::snapshot::LineCounts;

    #[derive(Clone, Copy, Default)]
    pub(super) struct Counts {
        pub(super) offered: u64,
        pub(super) lines: LineCounts,
    }

    thread_local! {
        pub(super) static COUNTS: Cell<Counts> = Cell::new(Counts::default());
    }

    pub(super) fn count(change: impl FnOnce(&mut Counts)) {
        COUNTS.with(|c| {
            let mut counts = c.get();
            change(&mut counts);
            c.set(counts);
        });
    }

    /// **Test build only.** Snapshot counts of every chat response so far:
    /// `{ statesOffered, linesEmitted, messagesEncoded, messagesReused }`. The lines are encoded
    /// when a reader pulls, so lines built and lines emitted are the same count.
    #[wasm_bindgen(js_name = __snapshotCountsForBench)]
    pub fn snapshot_counts_for_bench() -> JsValue {
        let counts = COUNTS.with(|c| c.get());
        let out = js_sys::Object::new();
        let set = |k: &str, v: u64| crate::web::js::set(&out, k, v as f64);
        set("statesOffered", counts.offered);
        set("linesEmitted", counts.lines.lines);
        set("messagesEncoded", counts.lines.messages_encoded);
        set("messagesReused", counts.lines.messages_reused);
        out.into()
    }
}

/// A state was offered to the response's reader.
pub(super) fn offered() {
    #[cfg(feature = "test-hooks")]
    counted::count(|c| c.offered += 1);
}

/// An encoder went from `before` to `after` while it built one line.
pub(super) fn encoded(before: LineCounts, after: LineCounts) {
    #[cfg(feature = "test-hooks")]
    counted::count(|c| {
        c.lines.lines += after.lines - before.lines;
        c.lines.messages_encoded += after.messages_encoded - before.messages_encoded;
        c.lines.messages_reused += after.messages_reused - before.messages_reused;
    });
    #[cfg(not(feature = "test-hooks"))]
    let _ = (before, after);
}
