//! Tool retrieval: the few tools relevant to a user's message, out of thousands.
//!
//! A [`Retriever`] ranks the selectable tools it was built over, lexically (BM25, the default:
//! no model needed), by dense embeddings, or both fused. Tools that are not selectable are
//! system tools: always in the result, after the ranked ones. Writing `[tool_name]` in the
//! query forces that tool in (at most [`RetrieveOptions::max_forced`] of them); brackets around
//! anything else stay in the query's text, unless [`RetrieveOptions::strict`] makes every
//! `[name]` a forced name.

#![warn(missing_docs)]

mod bm25;
#[cfg(feature = "embed-candle")]
pub mod candle;
mod embed;
mod fusion;
#[cfg(feature = "pgvector")]
pub mod pgvector;
mod store;
mod text;

use std::collections::HashSet;
use std::sync::Arc;

use tool_core::ToolSpec;

use text::tool_text;

pub use bm25::Bm25Index;
pub use embed::{EmbedFuture, EmbeddingProvider};
pub use fusion::{Fusion, FusionRule};
pub use store::{content_hash, InMemoryStore, StoreFuture, StoredTool, SyncReport, ToolStore};

/// The error under a retrieval error, kept for `source()`.
pub type Source = Arc<dyn std::error::Error + Send + Sync>;

/// Why retrieval failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RetrieveError {
    /// A forced or always-included tool does not exist (with `strict`).
    #[error("no tool is named `{0}`")]
    ToolNotFound(String),
    /// The query forces more tools with `[name]` than [`RetrieveOptions::max_forced`] allows
    /// (with `strict`).
    #[error(
        "the query forces {forced} tools with `[name]`; at most {limit} are allowed \
         (RetrieveOptions::max_forced)"
    )]
    TooManyForced {
        /// How many distinct names the query forces.
        forced: usize,
        /// The limit, `max_forced`.
        limit: usize,
    },
    /// A fusion's value is out of its range ([`Fusion::rrf`], [`Fusion::blend`]).
    #[error("invalid fusion: {0}")]
    InvalidFusion(String),
    /// The embedding provider failed.
    #[error("embedding failed: {message}")]
    Embedding {
        /// What failed, and where.
        message: String,
        /// The model's or the file system's own error, when there is one.
        #[source]
        source: Option<Source>,
    },
    /// The store failed.
    #[error("the tool store failed: {message}")]
    Store {
        /// What failed, and where.
        message: String,
        /// The database's own error, when there is one.
        #[source]
        source: Option<Source>,
    },
}

impl RetrieveError {
    /// An embedding failure described by `message` alone.
    pub fn embedding(message: impl Into<String>) -> Self {
        RetrieveError::Embedding {
            message: message.into(),
            source: None,
        }
    }

    /// An embedding failure caused by `source`; the message says what was being done.
    pub fn embedding_caused_by(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        let source: Source = Arc::new(source);
        RetrieveError::Embedding {
            message: format!("{}: {source}", message.into()),
            source: Some(source),
        }
    }

    /// A store failure described by `message` alone.
    pub fn store(message: impl Into<String>) -> Self {
        RetrieveError::Store {
            message: message.into(),
            source: None,
        }
    }

    /// A store failure caused by `source`; the message says what was being done.
    pub fn store_caused_by(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        let source: Source = Arc::new(source);
        RetrieveError::Store {
            message: format!("{}: {source}", message.into()),
            source: Some(source),
        }
    }
}

/// Two errors are equal when they are of one kind and say the same; sources are not compared.
impl PartialEq for RetrieveError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (RetrieveError::ToolNotFound(a), RetrieveError::ToolNotFound(b))
            | (RetrieveError::InvalidFusion(a), RetrieveError::InvalidFusion(b)) => a == b,
            (
                RetrieveError::TooManyForced {
                    forced: a,
                    limit: x,
                },
                RetrieveError::TooManyForced {
                    forced: b,
                    limit: y,
                },
            ) => a == b && x == y,
            (
                RetrieveError::Embedding { message: a, .. },
                RetrieveError::Embedding { message: b, .. },
            )
            | (RetrieveError::Store { message: a, .. }, RetrieveError::Store { message: b, .. }) => {
                a == b
            }
            _ => false,
        }
    }
}

/// What to retrieve.
#[derive(Debug, Clone)]
pub struct RetrieveOptions {
    /// How many ranked tools to return (default 5). Forced, always-included and system tools
    /// come on top of these.
    pub match_count: usize,
    /// The most tools a query may force with `[name]` (default 5), so that a query cannot pull
    /// in every tool past `match_count`: the tools a query chooses number at most
    /// `max_forced + match_count`, beside the always-included and system tools the caller set.
    /// The first `max_forced` distinct names written count (without `strict`, only the names
    /// of tools; with it, every `[name]`); the others are an error with `strict`
    /// ([`RetrieveError::TooManyForced`]), otherwise ignored with one `tracing` warning.
    pub max_forced: usize,
    /// Ranked tools scoring under this are left out. The scale is the method's: BM25 score,
    /// cosine similarity, or the fused score.
    pub threshold: Option<f32>,
    /// Whether a forced or always-included name that does not exist is an error. Without it,
    /// an always-included name that does not exist is ignored with a `tracing` warning, and a
    /// `[word]` that names no tool is not a forced name: it stays in the text that is ranked.
    pub strict: bool,
    /// Tools to include whatever the query.
    pub always_include: Vec<String>,
}

impl Default for RetrieveOptions {
    fn default() -> Self {
        RetrieveOptions {
            match_count: 5,
            max_forced: 5,
            threshold: None,
            strict: false,
            always_include: Vec::new(),
        }
    }
}

/// Why a tool is in the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Ranked by relevance.
    Ranked,
    /// Named as `[tool]` in the query.
    Forced,
    /// In `always_include`.
    AlwaysIncluded,
    /// Not selectable: always offered.
    System,
}

/// One tool in a retrieval result.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieved {
    /// The tool's name.
    pub name: String,
    /// Its score (0 for tools that were not ranked).
    pub score: f32,
    /// Why it is here.
    pub reason: Reason,
}

/// How a retriever ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// BM25 over the tool texts.
    Lexical,
    /// Cosine similarity of embeddings.
    Dense,
    /// Both, fused.
    Hybrid,
}

struct DenseParts {
    embedder: Arc<dyn EmbeddingProvider>,
    store: Arc<dyn ToolStore>,
}

/// Ranks tools for a user's message. Built once over a set of tools; cheap to query.
pub struct Retriever {
    /// Selectable tools, in index order.
    names: Vec<String>,
    /// The selectable tools' texts, in the same order.
    texts: Vec<String>,
    /// Tools that are always offered.
    system: Vec<String>,
    all: HashSet<String>,
    /// Selectable tool name -> index, for mapping a store's answers back.
    positions: std::collections::HashMap<String, usize>,
    lexical: Bm25Index,
    dense: Option<DenseParts>,
    method: Method,
    fusion: Fusion,
}

impl Retriever {
    /// A BM25 retriever. Needs no model.
    ///
    /// A retriever over tools none of which is selectable ranks nothing: every tool is a system
    /// tool, in every result. That is warned of (`tracing`), since it is most often a mistake:
    /// `#[ai_tool]` tools are system tools unless marked `selectable`
    /// (`ExecutorBuilder::selectable_where` marks many at once).
    pub fn lexical<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Self {
        let (names, system, texts) = split(specs);
        if names.is_empty() && system.len() > 1 {
            tracing::warn!(
                tools = system.len(),
                "the retriever has {} tools and none is selectable: it ranks nothing, and every \
                 result holds them all as system tools; mark the tools to rank selectable \
                 (#[ai_tool(selectable)], ExecutorBuilder::selectable_where)",
                system.len()
            );
        }
        let lexical = Bm25Index::build(texts.iter().map(String::as_str));
        let all = names.iter().chain(&system).cloned().collect();
        let positions = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Retriever {
            names,
            texts,
            system,
            all,
            positions,
            lexical,
            dense: None,
            method: Method::Lexical,
            fusion: Fusion::default(),
        }
    }

    /// A dense retriever: the store is synced with the tools (only new or changed tools are
    /// embedded). An embedder whose `dimension()` is 0 is refused
    /// ([`RetrieveError::Embedding`]).
    pub async fn dense<'a>(
        specs: impl IntoIterator<Item = &'a ToolSpec>,
        embedder: Arc<dyn EmbeddingProvider>,
        store: Arc<dyn ToolStore>,
    ) -> Result<Self, RetrieveError> {
        let mut retriever = Retriever::lexical(specs);
        retriever.attach(embedder, store).await?;
        retriever.method = Method::Dense;
        Ok(retriever)
    }

    /// A hybrid retriever: BM25 and dense rankings fused.
    pub async fn hybrid<'a>(
        specs: impl IntoIterator<Item = &'a ToolSpec>,
        embedder: Arc<dyn EmbeddingProvider>,
        store: Arc<dyn ToolStore>,
    ) -> Result<Self, RetrieveError> {
        let mut retriever = Retriever::dense(specs, embedder, store).await?;
        retriever.method = Method::Hybrid;
        Ok(retriever)
    }

    /// Replaces the fusion of a hybrid retriever. Its values are not checked here: build it
    /// with [`Fusion::rrf`] or [`Fusion::blend`], which refuse values that rank badly.
    pub fn with_fusion(mut self, fusion: Fusion) -> Self {
        self.fusion = fusion;
        self
    }

    async fn attach(
        &mut self,
        embedder: Arc<dyn EmbeddingProvider>,
        store: Arc<dyn ToolStore>,
    ) -> Result<(), RetrieveError> {
        store::check_dimension(embedder.as_ref())?;
        let tools: Vec<StoredTool> = self
            .names
            .iter()
            .zip(&self.texts)
            .map(|(name, text)| StoredTool::new(name.clone(), text.clone(), embedder.model_id()))
            .collect();
        store.sync(&tools, embedder.as_ref()).await?;
        self.dense = Some(DenseParts { embedder, store });
        Ok(())
    }

    /// How this retriever ranks.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The tools for `query`: forced ones first, then always-included ones, then the ranked
    /// ones (best first), then system tools (these last even when forced or always-included).
    pub async fn retrieve(
        &self,
        query: &str,
        options: &RetrieveOptions,
    ) -> Result<Vec<Retrieved>, RetrieveError> {
        // With `strict`, every `[name]` is a forced name, so that a misspelt one is an error;
        // without it, a bracket that names no tool is the user's text ("the [weather] in
        // Paris") and is ranked on.
        let (forced, text) = if options.strict {
            forced_names(query)
        } else {
            forced_names_where(query, |name| self.all.contains(name))
        };
        let forced = first_distinct(&forced, options)?;
        let mut result: Vec<Retrieved> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let named = forced.into_iter().map(|n| (n, Reason::Forced)).chain(
            options
                .always_include
                .iter()
                .map(|n| (n, Reason::AlwaysIncluded)),
        );
        for (name, reason) in named {
            if !self.all.contains(name) {
                if options.strict {
                    return Err(RetrieveError::ToolNotFound(name.clone()));
                }
                tracing::warn!(tool = %name, "ignoring a forced or always-included tool that does not exist");
                continue;
            }
            // A system tool is in the result anyway, after the ranked ones: naming it moves
            // it no earlier.
            if self.is_system(name) {
                continue;
            }
            if seen.insert(name.clone()) {
                result.push(Retrieved {
                    name: name.clone(),
                    score: 0.0,
                    reason,
                });
            }
        }
        // A caller may ask for every tool with `usize::MAX`.
        let wanted = options.match_count.saturating_add(seen.len());
        let mut ranked = 0;
        for (index, score) in self.rank(&text, wanted, options.threshold).await? {
            let name = &self.names[index];
            if ranked == options.match_count {
                break;
            }
            if seen.insert(name.clone()) {
                ranked += 1;
                result.push(Retrieved {
                    name: name.clone(),
                    score,
                    reason: Reason::Ranked,
                });
            }
        }
        for name in &self.system {
            if seen.insert(name.clone()) {
                result.push(Retrieved {
                    name: name.clone(),
                    score: 0.0,
                    reason: Reason::System,
                });
            }
        }
        Ok(result)
    }

    /// Whether `name` is a tool that is not selectable (every name in `all` is one or the
    /// other).
    fn is_system(&self, name: &str) -> bool {
        self.all.contains(name) && !self.positions.contains_key(name)
    }

    /// Indexes into `names` with scores, best first.
    async fn rank(
        &self,
        text: &str,
        k: usize,
        threshold: Option<f32>,
    ) -> Result<Vec<(usize, f32)>, RetrieveError> {
        if text.trim().is_empty() || self.names.is_empty() {
            return Ok(Vec::new());
        }
        match self.method {
            Method::Lexical => {
                let scores = self.lexical.scores(text);
                let best = store::top_k(&scores, k, threshold);
                Ok(best.into_iter().filter(|(_, s)| *s > 0.0).collect())
            }
            Method::Dense => {
                let found = self.dense_search(text, k).await?;
                Ok(found
                    .into_iter()
                    .filter(|(_, s)| threshold.is_none_or(|t| *s >= t))
                    .collect())
            }
            Method::Hybrid => {
                // Asked for more than the fusion's depth, both rankings are searched and fused
                // that deep: fusing only `depth` of each could return fewer than `k` tools.
                let depth = self.fusion.depth.max(k);
                let lexical = store::top_k(&self.lexical.scores(text), depth, None);
                let lexical: Vec<(usize, f32)> =
                    lexical.into_iter().filter(|(_, s)| *s > 0.0).collect();
                let dense = self.dense_search(text, depth).await?;
                let fusion = Fusion {
                    depth,
                    ..self.fusion
                };
                let fused = fusion.fuse(&lexical, &dense, self.names.len());
                Ok(fused
                    .into_iter()
                    .filter(|(_, s)| threshold.is_none_or(|t| *s >= t))
                    .take(k)
                    .collect())
            }
        }
    }

    async fn dense_search(&self, text: &str, k: usize) -> Result<Vec<(usize, f32)>, RetrieveError> {
        let Some(dense) = &self.dense else {
            return Ok(Vec::new());
        };
        let vectors = dense.embedder.embed(&[text.to_owned()]).await?;
        let vector = vectors
            .into_iter()
            .next()
            .ok_or_else(|| RetrieveError::embedding("no vector for the query"))?;
        let found = dense.store.search(&vector, k, None).await?;
        // A score that is not a finite number (pgvector's cosine distance to a zero vector is
        // NaN) ranks nothing, and would sort first.
        Ok(found
            .into_iter()
            .filter(|(_, score)| score.is_finite())
            .filter_map(|(name, score)| self.positions.get(&name).map(|&i| (i, score)))
            .collect())
    }
}

/// The first `max_forced` distinct names of `forced`, in order; more is an error with `strict`.
fn first_distinct<'a>(
    forced: &'a [String],
    options: &RetrieveOptions,
) -> Result<Vec<&'a String>, RetrieveError> {
    let mut distinct: HashSet<&str> = HashSet::new();
    let mut kept = Vec::new();
    for name in forced {
        if !distinct.insert(name) {
            continue;
        }
        if kept.len() < options.max_forced {
            kept.push(name);
        }
    }
    if distinct.len() > kept.len() {
        if options.strict {
            return Err(RetrieveError::TooManyForced {
                forced: distinct.len(),
                limit: options.max_forced,
            });
        }
        tracing::warn!(
            forced = distinct.len(),
            limit = options.max_forced,
            "ignoring the tools a query forces past RetrieveOptions::max_forced"
        );
    }
    Ok(kept)
}

/// Selectable names, system names, and the selectable tools' texts.
fn split<'a>(
    specs: impl IntoIterator<Item = &'a ToolSpec>,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut names, mut system, mut texts) = (Vec::new(), Vec::new(), Vec::new());
    for spec in specs {
        if spec.metadata.selectable {
            names.push(spec.name.clone());
            texts.push(tool_text(spec));
        } else {
            system.push(spec.name.clone());
        }
    }
    (names, system, texts)
}

/// The names written as `[name]` in the query, and the query without them.
///
/// Linear in the query's length: a name holds no bracket, so each `[` is matched with the
/// next bracket only, and the text between two brackets is read once.
pub fn forced_names(query: &str) -> (Vec<String>, String) {
    forced_names_where(query, |_| true)
}

/// The names written as `[name]` in the query that `forces` accepts, and the query without
/// them; other brackets stay in the text as written.
fn forced_names_where(query: &str, forces: impl Fn(&str) -> bool) -> (Vec<String>, String) {
    let mut names = Vec::new();
    let mut text = String::with_capacity(query.len());
    let mut rest = query;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        match after.find(['[', ']']) {
            Some(close)
                if after[close..].starts_with(']')
                    && is_tool_name(&after[..close])
                    && forces(&after[..close]) =>
            {
                text.push_str(&rest[..open]);
                text.push(' ');
                names.push(after[..close].to_owned());
                rest = &after[close + 1..];
            }
            // The next `[` may open a name; what comes before it is text.
            Some(next) => {
                text.push_str(&rest[..open + 1 + next]);
                rest = &after[next..];
            }
            None => break,
        }
    }
    text.push_str(rest);
    (names, text.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn is_tool_name(text: &str) -> bool {
    tool_core::name::check_wide(text).is_ok()
}

#[cfg(test)]
mod error_tests {
    use super::RetrieveError;
    use std::error::Error as _;

    #[test]
    fn a_store_error_keeps_its_cause_as_its_source() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let err = RetrieveError::store_caused_by("connecting", io);
        assert_eq!(
            err.to_string(),
            "the tool store failed: connecting: refused"
        );
        let source = err.source().expect("the cause is kept");
        assert_eq!(source.to_string(), "refused");
        assert!(RetrieveError::embedding("no model").source().is_none());
    }
}
