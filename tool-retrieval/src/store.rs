//! Where tool embeddings live: the [`ToolStore`] trait and the exact in-memory store.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::RwLock;

use super::embed::EmbeddingProvider;
use super::RetrieveError;

/// A boxed future borrowing its store.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, RetrieveError>> + Send + 'a>>;

/// One tool as a store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTool {
    /// The tool's name.
    pub name: String,
    /// A hash of the text and the model: when it is unchanged, the embedding is too.
    pub content_hash: String,
    /// The text that is embedded.
    pub text: String,
}

impl StoredTool {
    /// A tool with its content hash computed for `model_id`.
    pub fn new(name: impl Into<String>, text: impl Into<String>, model_id: &str) -> Self {
        let text = text.into();
        let content_hash = content_hash(model_id, &text);
        StoredTool {
            name: name.into(),
            content_hash,
            text,
        }
    }
}

/// FNV-1a (64 bits) of the model id and the text: a change detector, not a security measure.
pub fn content_hash(model_id: &str, text: &str) -> String {
    let hash = model_id
        .bytes()
        .chain([0u8])
        .chain(text.bytes())
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    format!("{hash:016x}")
}

/// What a sync did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Tools embedded (new or changed).
    pub embedded: usize,
    /// Tools removed (no longer in the set).
    pub removed: usize,
    /// Tools kept as they were.
    pub unchanged: usize,
}

/// Keeps one embedding per tool and finds the nearest to a query vector.
pub trait ToolStore: Send + Sync {
    /// Makes the store hold exactly `tools`: embeds only the new or changed ones (by content
    /// hash) and deletes the removed ones. A name given twice is refused.
    fn sync<'a>(
        &'a self,
        tools: &'a [StoredTool],
        embedder: &'a dyn EmbeddingProvider,
    ) -> StoreFuture<'a, SyncReport>;

    /// The `k` nearest tools by cosine similarity, best first, those under `threshold` left out.
    fn search<'a>(
        &'a self,
        vector: &'a [f32],
        k: usize,
        threshold: Option<f32>,
    ) -> StoreFuture<'a, Vec<(String, f32)>>;
}

/// Exact search in memory: one contiguous matrix of unit vectors, a dot product per tool.
#[derive(Debug, Default)]
pub struct InMemoryStore {
    inner: RwLock<Matrix>,
}

#[derive(Debug, Default)]
struct Matrix {
    dimension: usize,
    names: Vec<String>,
    hashes: Vec<String>,
    vectors: Vec<f32>,
}

impl InMemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        InMemoryStore::default()
    }

    /// Puts vectors in directly (they are normalized), replacing everything; for vectors made
    /// elsewhere and for benchmarks. Every vector has the first one's length, and at least one
    /// dimension.
    pub fn load(&self, entries: Vec<(String, Vec<f32>)>) -> Result<(), RetrieveError> {
        let dimension = entries.first().map_or(0, |(_, v)| v.len());
        if let (Some((name, _)), 0) = (entries.first(), dimension) {
            return Err(RetrieveError::store(format!(
                "`{name}` has a vector of 0 dimensions; vectors need at least one"
            )));
        }
        let mut matrix = Matrix {
            dimension,
            ..Matrix::default()
        };
        for (name, mut vector) in entries {
            if vector.len() != dimension {
                return Err(RetrieveError::store(format!(
                    "`{name}` has {} dimensions, not {dimension}",
                    vector.len()
                )));
            }
            normalize(&mut vector);
            matrix.names.push(name);
            matrix.hashes.push(String::new());
            matrix.vectors.extend(vector);
        }
        *self.inner.write().map_err(|_| poisoned())? = matrix;
        Ok(())
    }

    /// The exact nearest neighbours; what `search` does, without the future.
    pub fn nearest(
        &self,
        vector: &[f32],
        k: usize,
        threshold: Option<f32>,
    ) -> Result<Vec<(String, f32)>, RetrieveError> {
        let matrix = self.inner.read().map_err(|_| poisoned())?;
        if matrix.names.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        if vector.len() != matrix.dimension {
            return Err(RetrieveError::store(format!(
                "the query has {} dimensions; the store holds {}",
                vector.len(),
                matrix.dimension
            )));
        }
        // `load` and `sync` refuse 0 dimensions; this keeps `chunks_exact` from panicking should
        // that ever change.
        if matrix.dimension == 0 {
            return Err(RetrieveError::store(
                "the store holds vectors of 0 dimensions",
            ));
        }
        let mut query = vector.to_vec();
        normalize(&mut query);
        let scores: Vec<f32> = matrix
            .vectors
            .chunks_exact(matrix.dimension)
            .map(|row| dot(row, &query))
            .collect();
        let best = top_k(&scores, k, threshold);
        Ok(best
            .into_iter()
            .map(|(i, s)| (matrix.names[i].clone(), s))
            .collect())
    }
}

/// Refuses an embedder whose vectors would have no dimension: nothing can be compared.
pub(crate) fn check_dimension(embedder: &dyn EmbeddingProvider) -> Result<(), RetrieveError> {
    if embedder.dimension() == 0 {
        return Err(RetrieveError::embedding(format!(
            "the embedder `{}` makes vectors of 0 dimensions; they need at least one",
            embedder.model_id()
        )));
    }
    Ok(())
}

/// Refuses a set that names a tool twice: a store keeps one embedding per name, so one of the
/// two would silently be lost.
pub(crate) fn check_unique(tools: &[StoredTool]) -> Result<(), RetrieveError> {
    let mut seen: HashSet<&str> = HashSet::with_capacity(tools.len());
    match tools.iter().find(|t| !seen.insert(t.name.as_str())) {
        Some(twice) => Err(RetrieveError::store(format!(
            "the tool `{}` is given twice: a store keeps one embedding per name",
            twice.name
        ))),
        None => Ok(()),
    }
}

/// The embeddings of `tools`, in order: one per tool, each of the embedder's dimension, or an
/// error naming the embedder (and the tool), so that no tool is dropped or stored malformed.
pub(crate) async fn embed_tools(
    embedder: &dyn EmbeddingProvider,
    tools: &[&StoredTool],
) -> Result<Vec<Vec<f32>>, RetrieveError> {
    if tools.is_empty() {
        return Ok(Vec::new());
    }
    let texts: Vec<String> = tools.iter().map(|t| t.text.clone()).collect();
    let vectors = embedder.embed(&texts).await?;
    if vectors.len() != texts.len() {
        return Err(RetrieveError::embedding(format!(
            "the embedder `{}` returned {} vectors for {} texts; it must return one per text",
            embedder.model_id(),
            vectors.len(),
            texts.len()
        )));
    }
    let dimension = embedder.dimension();
    if let Some((tool, vector)) = tools
        .iter()
        .zip(&vectors)
        .find(|(_, v)| v.len() != dimension)
    {
        return Err(RetrieveError::embedding(format!(
            "the embedder `{}` embedded `{}` with {} dimensions, not the {dimension} it declares",
            embedder.model_id(),
            tool.name,
            vector.len()
        )));
    }
    Ok(vectors)
}

fn poisoned() -> RetrieveError {
    RetrieveError::store("the in-memory store's lock was poisoned by a panic")
}

impl ToolStore for InMemoryStore {
    fn sync<'a>(
        &'a self,
        tools: &'a [StoredTool],
        embedder: &'a dyn EmbeddingProvider,
    ) -> StoreFuture<'a, SyncReport> {
        Box::pin(async move {
            check_dimension(embedder)?;
            check_unique(tools)?;
            let known: HashMap<String, (String, Vec<f32>)> = {
                let matrix = self.inner.read().map_err(|_| poisoned())?;
                let dimension = matrix.dimension.max(1);
                matrix
                    .names
                    .iter()
                    .zip(&matrix.hashes)
                    .zip(matrix.vectors.chunks_exact(dimension))
                    .map(|((n, h), v)| (n.clone(), (h.clone(), v.to_vec())))
                    .collect()
            };
            let changed: Vec<&StoredTool> = tools
                .iter()
                .filter(|t| {
                    known
                        .get(&t.name)
                        .is_none_or(|(hash, _)| *hash != t.content_hash)
                })
                .collect();
            let fresh = embed_tools(embedder, &changed).await?;
            let mut fresh: HashMap<&str, Vec<f32>> =
                changed.iter().map(|t| t.name.as_str()).zip(fresh).collect();
            let mut matrix = Matrix {
                dimension: embedder.dimension(),
                ..Matrix::default()
            };
            for tool in tools {
                let mut vector = match fresh.remove(tool.name.as_str()) {
                    Some(v) => v,
                    None => known
                        .get(&tool.name)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default(),
                };
                if vector.len() != matrix.dimension {
                    return Err(RetrieveError::embedding(format!(
                        "`{}` was embedded with {} dimensions, not {}",
                        tool.name,
                        vector.len(),
                        matrix.dimension
                    )));
                }
                normalize(&mut vector);
                matrix.names.push(tool.name.clone());
                matrix.hashes.push(tool.content_hash.clone());
                matrix.vectors.extend(vector);
            }
            // A set, not a scan of `tools` per known name: quadratic for tens of thousands.
            let wanted: HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            let removed = known
                .keys()
                .filter(|n| !wanted.contains(n.as_str()))
                .count();
            let report = SyncReport {
                embedded: changed.len(),
                removed,
                unchanged: tools.len() - changed.len(),
            };
            *self.inner.write().map_err(|_| poisoned())? = matrix;
            Ok(report)
        })
    }

    fn search<'a>(
        &'a self,
        vector: &'a [f32],
        k: usize,
        threshold: Option<f32>,
    ) -> StoreFuture<'a, Vec<(String, f32)>> {
        Box::pin(async move { self.nearest(vector, k, threshold) })
    }
}

pub(crate) fn normalize(vector: &mut [f32]) {
    let norm = dot(vector, vector).sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Written as eight independent sums so the compiler vectorizes it.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0.0f32; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for i in 0..8 {
            sums[i] += x[i] * y[i];
        }
    }
    sums.iter().sum::<f32>() + tail
}

/// Indexes of the `k` best scores, best first; those under `threshold`, and those that are not
/// finite numbers, left out.
pub(crate) fn top_k(scores: &[f32], k: usize, threshold: Option<f32>) -> Vec<(usize, f32)> {
    let mut candidates: Vec<(usize, f32)> = scores
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, s)| threshold.is_none_or(|t| *s >= t) && s.is_finite())
        .collect();
    let k = k.min(candidates.len());
    if k == 0 {
        return Vec::new();
    }
    let by_score = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    candidates.select_nth_unstable_by(k - 1, by_score);
    candidates.truncate(k);
    candidates.sort_by(by_score);
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_is_best_first_and_respects_the_threshold() {
        let scores = [0.1, 0.9, 0.5, 0.9, 0.3];
        assert_eq!(top_k(&scores, 3, None), [(1, 0.9), (3, 0.9), (2, 0.5)]);
        assert_eq!(
            top_k(&scores, 10, Some(0.4)),
            [(1, 0.9), (3, 0.9), (2, 0.5)]
        );
        assert!(top_k(&scores, 0, None).is_empty());
    }

    #[test]
    fn nearest_finds_the_most_similar_vector() {
        let store = InMemoryStore::new();
        store
            .load(vec![
                ("x".into(), vec![1.0, 0.0]),
                ("y".into(), vec![0.0, 2.0]),
                ("xy".into(), vec![1.0, 1.0]),
            ])
            .unwrap();
        let found = store.nearest(&[0.1, 1.0], 2, None).unwrap();
        assert_eq!(found[0].0, "y");
        assert_eq!(found[1].0, "xy");
        assert!(store.nearest(&[1.0, 2.0, 3.0], 1, None).is_err());
    }

    #[test]
    fn loading_vectors_of_0_dimensions_is_an_error_and_the_store_still_answers() {
        let store = InMemoryStore::new();
        store.load(vec![("x".into(), vec![1.0, 0.0])]).unwrap();
        let err = store
            .load(vec![("empty".into(), vec![]), ("also".into(), vec![])])
            .unwrap_err();
        assert_eq!(
            err,
            RetrieveError::store("`empty` has a vector of 0 dimensions; vectors need at least one")
        );
        // The failed load replaced nothing; an empty query is a dimension error, not a panic.
        assert_eq!(store.nearest(&[1.0, 0.0], 1, None).unwrap()[0].0, "x");
        assert!(store.nearest(&[], 1, None).is_err());
        store.load(Vec::new()).unwrap();
        assert!(store.nearest(&[], 1, None).unwrap().is_empty());
    }

    /// Vectors of its dimension, but `drop` fewer than the texts it is given.
    struct Short {
        drop: usize,
    }

    impl EmbeddingProvider for Short {
        fn model_id(&self) -> &str {
            "short"
        }
        fn dimension(&self) -> usize {
            2
        }
        fn embed<'a>(&'a self, texts: &'a [String]) -> crate::EmbedFuture<'a> {
            let count = texts.len().saturating_sub(self.drop);
            Box::pin(async move { Ok(vec![vec![1.0, 0.5]; count]) })
        }
    }

    fn stored(names: &[&str]) -> Vec<StoredTool> {
        names
            .iter()
            .map(|n| StoredTool::new(*n, format!("the {n} tool"), "short"))
            .collect()
    }

    #[tokio::test]
    async fn a_short_batch_of_vectors_is_an_error_naming_the_embedder() {
        let store = InMemoryStore::new();
        let err = store
            .sync(&stored(&["a", "b", "c"]), &Short { drop: 1 })
            .await
            .unwrap_err();
        assert_eq!(
            err,
            RetrieveError::embedding(
                "the embedder `short` returned 2 vectors for 3 texts; it must return one per text"
            )
        );
        // Nothing was stored; a full batch then syncs.
        assert!(store.nearest(&[1.0, 0.0], 5, None).unwrap().is_empty());
        let report = store
            .sync(&stored(&["a", "b"]), &Short { drop: 0 })
            .await
            .unwrap();
        assert_eq!(report.embedded, 2);
    }

    #[tokio::test]
    async fn a_tool_named_twice_is_refused_before_anything_is_embedded() {
        let store = InMemoryStore::new();
        let err = store
            .sync(&stored(&["a", "b", "a"]), &Short { drop: 0 })
            .await
            .unwrap_err();
        assert_eq!(
            err,
            RetrieveError::store(
                "the tool `a` is given twice: a store keeps one embedding per name"
            )
        );
    }

    #[tokio::test]
    async fn a_vector_of_another_dimension_than_declared_names_the_tool() {
        struct Wide;
        impl EmbeddingProvider for Wide {
            fn model_id(&self) -> &str {
                "wide"
            }
            fn dimension(&self) -> usize {
                2
            }
            fn embed<'a>(&'a self, texts: &'a [String]) -> crate::EmbedFuture<'a> {
                Box::pin(async move { Ok(texts.iter().map(|_| vec![1.0; 3]).collect()) })
            }
        }
        let err = InMemoryStore::new()
            .sync(&stored(&["a"]), &Wide)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            RetrieveError::embedding(
                "the embedder `wide` embedded `a` with 3 dimensions, not the 2 it declares"
            )
        );
    }

    #[test]
    fn dot_matches_the_plain_sum() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..19).map(|i| 3.0 - i as f32).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-3);
    }
}
