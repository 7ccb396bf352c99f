//! `createLocalRetriever({ corpusId, documents })`: the built-in BM25 retriever
//! (`core::ask::bm25`) as an Ask retriever object, `{ retrieve(input) }`.
//!
//! It serves one corpus: asked under a site whose `corpus.id` is another one, it throws (the
//! handler answers `ASK_RETRIEVAL_FAILED`), so a host that mounts it for the wrong site fails
//! closed instead of citing another site's documents.

use wasm_bindgen::prelude::*;

use super::options::invalid;
use crate::core::ask::bm25::{decode_documents, Bm25Index};
use crate::core::checks::is_safe_id;
use crate::core::limits::ASK_SOURCES_MAX;
use crate::web::convert::{from_json, js_error, to_json};
use crate::web::js::get;

#[wasm_bindgen]
pub struct LocalRetriever {
    corpus_id: String,
    index: Bm25Index,
}

/// Builds the index once. Throws (`code: "ASK_INTERNAL"`) for a bad corpus.
#[wasm_bindgen(js_name = createLocalRetriever)]
pub fn create_local_retriever(options: JsValue) -> Result<LocalRetriever, JsValue> {
    let corpus_id = get(&options, "corpusId")
        .as_string()
        .filter(|id| is_safe_id(id))
        .ok_or_else(|| invalid("createLocalRetriever: corpusId must be a SafeId"))?;
    let documents = to_json(&get(&options, "documents"))
        .map_err(|e| invalid(&format!("createLocalRetriever: documents: {e}")))?;
    let docs = decode_documents(&documents)
        .map_err(|e| invalid(&format!("createLocalRetriever: {}", e.message())))?;
    Ok(LocalRetriever {
        corpus_id,
        index: Bm25Index::new(docs),
    })
}

#[wasm_bindgen]
impl LocalRetriever {
    /// `{ query, site }` → the best sources `{ id, title, href, excerpt }`, at most the site's
    /// `limits.maxSources`.
    pub fn retrieve(&self, input: JsValue) -> Result<JsValue, JsValue> {
        let site = get(&input, "site");
        let corpus = get(&get(&site, "corpus"), "id").as_string();
        if corpus.as_deref() != Some(self.corpus_id.as_str()) {
            return Err(js_error("this local retriever serves another corpus"));
        }
        let query = get(&input, "query")
            .as_string()
            .ok_or_else(|| js_error("input.query must be a string"))?;
        let limit = get(&get(&site, "limits"), "maxSources")
            .as_f64()
            .map_or(ASK_SOURCES_MAX, |n| {
                n.clamp(0.0, ASK_SOURCES_MAX as f64) as usize
            });
        let sources: Vec<serde_json::Value> = self
            .index
            .sources(&query, limit)
            .iter()
            .map(|s| s.to_value())
            .collect();
        Ok(from_json(&serde_json::Value::Array(sources)))
    }

    /// The corpus this retriever serves.
    #[wasm_bindgen(getter, js_name = corpusId)]
    pub fn corpus_id(&self) -> String {
        self.corpus_id.clone()
    }

    /// How many documents it holds.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> usize {
        self.index.len()
    }
}
