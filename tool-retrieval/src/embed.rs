//! Turning text into vectors: the [`EmbeddingProvider`] trait.

use std::future::Future;
use std::pin::Pin;

use super::RetrieveError;

/// A boxed future borrowing its provider.
pub type EmbedFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<Vec<f32>>, RetrieveError>> + Send + 'a>>;

/// Embeds texts, in batches.
pub trait EmbeddingProvider: Send + Sync {
    /// Identifies the model, so stores can tell vectors of different models apart.
    fn model_id(&self) -> &str;

    /// The length of every vector.
    fn dimension(&self) -> usize;

    /// One vector per text, in order, each of [`dimension`](Self::dimension): the stores
    /// refuse any other batch ([`RetrieveError::Embedding`]).
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a>;
}
