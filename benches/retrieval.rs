//! Retrieval over 10,000 generated tools.
//!
//! `cargo bench --features embed-candle --bench retrieval` (after `scripts/install-model.sh`).
//!
//! The tools' vectors in the dense and hybrid cases are pseudo-random unit vectors: search costs
//! the same whatever the values, and embedding 10,000 texts would only slow the setup. Every
//! query is embedded by the real model.

use std::future::Future;
use std::path::Path;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use ai_tool::retrieval::candle::MiniLm;
use ai_tool::retrieval::{
    EmbedFuture, EmbeddingProvider, InMemoryStore, RetrieveOptions, Retriever,
};
use ai_tool::{ToolMetadata, ToolSpec};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

const VERBS: &[&str] = &[
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "convert",
    "book",
    "track",
    "send",
    "schedule",
    "translate",
    "summarize",
    "analyze",
    "compare",
];
const NOUNS: &[&str] = &[
    "weather",
    "flight",
    "hotel",
    "invoice",
    "order",
    "customer",
    "recipe",
    "song",
    "stock",
    "currency",
    "email",
    "meeting",
    "document",
    "image",
    "repository",
    "ticket",
    "package",
    "movie",
    "restaurant",
    "route",
    "account",
    "payment",
    "calendar",
    "news",
    "job",
];
const QUALIFIERS: &[&str] = &[
    "daily", "shared", "archived", "pending", "public", "private", "recent", "local", "global",
    "weekly", "draft", "urgent",
];

fn tools(count: usize) -> Vec<ToolSpec> {
    (0..count)
        .map(|i| {
            let (verb, noun, qualifier) = (VERBS[i % VERBS.len()], NOUNS[(i / 7) % NOUNS.len()], QUALIFIERS[(i / 3) % QUALIFIERS.len()]);
            ToolSpec {
                name: format!("{verb}_{qualifier}_{noun}_{i}"),
                description: format!("{verb} the {qualifier} {noun} records of service {i}, with filters by date and owner"),
                parameters: json!({ "type": "object", "properties": { "id": { "type": "string", "description": format!("The {noun} id") } } }),
                output_schema: None,
                metadata: ToolMetadata { selectable: true, ..ToolMetadata::default() },
            }
        })
        .collect()
}

/// The real model for one text (a query); pseudo-random unit vectors for batches (the tools).
struct QueryModel(MiniLm);

impl EmbeddingProvider for QueryModel {
    fn model_id(&self) -> &str {
        self.0.model_id()
    }
    fn dimension(&self) -> usize {
        self.0.dimension()
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        if texts.len() == 1 {
            return self.0.embed(texts);
        }
        let dimension = self.dimension();
        Box::pin(async move {
            Ok(texts
                .iter()
                .enumerate()
                .map(|(i, _)| unit_vector(i as u64, dimension))
                .collect())
        })
    }
}

fn unit_vector(seed: u64, dimension: usize) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let v: Vec<f32> = (0..dimension)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

fn ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("retrieval here does not wait"),
    }
}

fn model() -> MiniLm {
    let dir = std::env::var_os("AI_TOOL_MODEL_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2"));
    MiniLm::load(&dir).expect("install the model with scripts/install-model.sh")
}

fn retrieval(c: &mut Criterion) {
    let specs = tools(10_000);
    let query = "book a hotel room near the airport for next weekend".to_owned();
    let options = RetrieveOptions::default();
    let mut group = c.benchmark_group("retrieval_10k");

    group.bench_function("bm25_index_build", |b| {
        b.iter(|| Retriever::lexical(&specs))
    });

    let lexical = Retriever::lexical(&specs);
    group.bench_function("bm25_top5", |b| {
        b.iter(|| ready(lexical.retrieve(&query, &options)).expect("retrieves"))
    });

    let embedder = Arc::new(QueryModel(model()));
    let store = InMemoryStore::new();
    store
        .load(
            (0..specs.len())
                .map(|i| (format!("t{i}"), unit_vector(i as u64, 384)))
                .collect(),
        )
        .expect("loads");
    let query_vector = embedder
        .0
        .embed_now(std::slice::from_ref(&query))
        .expect("embeds")
        .remove(0);
    group.bench_function("dense_top5_given_query_vector", |b| {
        b.iter(|| store.nearest(&query_vector, 5, None).expect("searches"))
    });

    group.bench_function("query_embedding", |b| {
        b.iter(|| {
            embedder
                .0
                .embed_now(std::slice::from_ref(&query))
                .expect("embeds")
        })
    });

    let hybrid = ready(Retriever::hybrid(
        &specs,
        embedder.clone(),
        Arc::new(InMemoryStore::new()),
    ))
    .expect("builds");
    group.bench_function("hybrid_end_to_end", |b| {
        b.iter(|| ready(hybrid.retrieve(&query, &options)).expect("retrieves"))
    });
    group.finish();
}

/// What a process pays at start-up for a hybrid retriever in memory: every tool of a 2,000-tool
/// catalog embedded by the real model (a `PgVectorStore` pays it once per new or changed tool).
fn startup(c: &mut Criterion) {
    // Some 17 s a build: left out of `cargo test`'s one pass over the benches.
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let specs = tools(2_000);
    let embedder = Arc::new(model());
    let mut group = c.benchmark_group("startup_2k");
    group.bench_function("hybrid_build_real_embeddings", |b| {
        b.iter(|| {
            ready(Retriever::hybrid(
                &specs,
                embedder.clone(),
                Arc::new(InMemoryStore::new()),
            ))
            .expect("builds")
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(4)).warm_up_time(std::time::Duration::from_secs(1));
    targets = retrieval
}
criterion_group! {
    name = startup_benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(1)).warm_up_time(std::time::Duration::from_millis(1));
    targets = startup
}
criterion_main!(benches, startup_benches);
