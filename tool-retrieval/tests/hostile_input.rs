//! Queries, options and embedders a caller may not control: each gets an answer or a clear
//! error, never a panic, an overflow or a quadratic walk.

use std::sync::Arc;

use serde_json::json;
use tool_core::{ToolMetadata, ToolSpec};
use tool_retrieval::{
    forced_names, EmbedFuture, EmbeddingProvider, InMemoryStore, Reason, RetrieveError,
    RetrieveOptions, Retriever, StoreFuture, StoredTool, SyncReport, ToolStore,
};

fn tool(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: json!({ "type": "object", "properties": {} }),
        output_schema: None,
        metadata: ToolMetadata {
            selectable: true,
            ..ToolMetadata::default()
        },
    }
}

fn tools(count: usize) -> Vec<ToolSpec> {
    (0..count)
        .map(|i| tool(&format!("tool_{i}"), &format!("weather report number {i}")))
        .collect()
}

/// Vectors of a fixed length, the same for every text but the first coordinate.
struct Fixed(usize);

impl EmbeddingProvider for Fixed {
    fn model_id(&self) -> &str {
        "fixed"
    }

    fn dimension(&self) -> usize {
        self.0
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        let vectors = texts
            .iter()
            .map(|t| {
                let mut v = vec![1.0; self.0];
                if let Some(first) = v.first_mut() {
                    *first = t.len() as f32;
                }
                v
            })
            .collect();
        Box::pin(async move { Ok(vectors) })
    }
}

#[tokio::test]
async fn a_match_count_of_usize_max_with_a_forced_tool_ranks_every_tool() {
    // `--k 18446744073709551615` on the command line: `match_count + forced` overflowed.
    let specs = tools(4);
    let options = RetrieveOptions {
        match_count: usize::MAX,
        ..RetrieveOptions::default()
    };
    let lexical = Retriever::lexical(&specs);
    let found = lexical
        .retrieve("[tool_3] weather report", &options)
        .await
        .unwrap();
    assert_eq!(found.len(), 4);
    assert_eq!(
        (found[0].name.as_str(), found[0].reason),
        ("tool_3", Reason::Forced)
    );
    for method in ["dense", "hybrid"] {
        let (embedder, store) = (Arc::new(Fixed(3)), Arc::new(InMemoryStore::new()));
        let retriever = match method {
            "dense" => Retriever::dense(&specs, embedder, store).await,
            _ => Retriever::hybrid(&specs, embedder, store).await,
        }
        .unwrap();
        let found = retriever
            .retrieve("[tool_3] weather report", &options)
            .await
            .unwrap();
        assert_eq!(found.len(), 4, "{method}");
        assert_eq!(found[0].reason, Reason::Forced, "{method}");
    }
}

#[test]
fn a_megabyte_of_open_brackets_forces_nothing_and_stays_text() {
    // Each `[` used to be matched by a search to the end of the query: 10^12 steps for 1 MB.
    let query = "[".repeat(1 << 20);
    let (forced, text) = forced_names(&query);
    assert!(forced.is_empty());
    assert_eq!(text, query);
}

#[test]
fn a_megabyte_of_open_brackets_and_names_closed_once_at_the_end_forces_only_the_last_name() {
    let query = format!("{}[tool_1]", "[tool_0 ".repeat(100_000));
    let (forced, text) = forced_names(&query);
    assert_eq!(forced, ["tool_1"]);
    assert_eq!(text.len(), "[tool_0 ".len() * 100_000 - 1);
    let (forced, text) = forced_names("a [b [c] d] [e.f] [not a name] ]x[");
    assert_eq!(forced, ["c", "e.f"]);
    assert_eq!(text, "a [b d] [not a name] ]x[");
}

#[tokio::test]
async fn brackets_that_name_no_tool_stay_in_the_ranked_text_unless_strict() {
    let specs = [
        tool("get_forecast", "weather forecast for a city"),
        tool("book_flight", "book a plane ticket"),
    ];
    let retriever = Retriever::lexical(&specs);
    let found = retriever
        .retrieve("what's the [weather] in Paris", &RetrieveOptions::default())
        .await
        .unwrap();
    let found: Vec<(&str, Reason)> = found.iter().map(|r| (r.name.as_str(), r.reason)).collect();
    assert_eq!(found, [("get_forecast", Reason::Ranked)]);
    // A tool's name is forced and taken out; the other bracket is ranked on.
    let found = retriever
        .retrieve(
            "[book_flight] and the [weather]",
            &RetrieveOptions::default(),
        )
        .await
        .unwrap();
    let found: Vec<(&str, Reason)> = found.iter().map(|r| (r.name.as_str(), r.reason)).collect();
    assert_eq!(
        found,
        [
            ("book_flight", Reason::Forced),
            ("get_forecast", Reason::Ranked)
        ]
    );
    // Brackets that name no tool count for nothing against `max_forced`.
    let one = RetrieveOptions {
        max_forced: 1,
        strict: false,
        ..RetrieveOptions::default()
    };
    let found = retriever
        .retrieve("[rain] [snow] [book_flight]", &one)
        .await
        .unwrap();
    assert_eq!(found[0].name, "book_flight");
    assert_eq!(found[0].reason, Reason::Forced);
    // With `strict`, as documented, every `[name]` is a forced name: a misspelt one is caught.
    let strict = RetrieveOptions {
        strict: true,
        ..RetrieveOptions::default()
    };
    let err = retriever
        .retrieve("what's the [weather] in Paris", &strict)
        .await
        .unwrap_err();
    assert_eq!(err, RetrieveError::ToolNotFound("weather".into()));
}

#[tokio::test]
async fn a_query_forcing_a_thousand_tools_gets_max_forced_of_them() {
    let specs = tools(1_000);
    let retriever = Retriever::lexical(&specs);
    let query: String = (0..1_000).map(|i| format!("[tool_{i}] ")).collect();
    let options = RetrieveOptions {
        match_count: 2,
        max_forced: 3,
        ..RetrieveOptions::default()
    };
    let found = retriever
        .retrieve(&format!("{query} weather report"), &options)
        .await
        .unwrap();
    let forced: Vec<&str> = found
        .iter()
        .filter(|r| r.reason == Reason::Forced)
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(forced, ["tool_0", "tool_1", "tool_2"]);
    assert_eq!(found.len(), 3 + 2);
    // Repeating a name forces it once and takes one place.
    let found = retriever
        .retrieve("[tool_7] [tool_7] [tool_7] [tool_8]", &options)
        .await
        .unwrap();
    let names: Vec<&str> = found.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["tool_7", "tool_8"]);
    let strict = RetrieveOptions {
        strict: true,
        ..options
    };
    let err = retriever.retrieve(&query, &strict).await.unwrap_err();
    assert_eq!(
        err,
        RetrieveError::TooManyForced {
            forced: 1_000,
            limit: 3
        }
    );
    assert_eq!(
        err.to_string(),
        "the query forces 1000 tools with `[name]`; at most 3 are allowed \
         (RetrieveOptions::max_forced)"
    );
    assert_eq!(RetrieveOptions::default().max_forced, 5);
}

#[tokio::test]
async fn an_embedder_of_0_dimensions_is_refused_when_the_retriever_is_built() {
    let specs = tools(2);
    let store = Arc::new(InMemoryStore::new());
    let Err(err) = Retriever::dense(&specs, Arc::new(Fixed(0)), store.clone()).await else {
        panic!("an embedder of 0 dimensions was accepted");
    };
    assert_eq!(
        err,
        RetrieveError::embedding(
            "the embedder `fixed` makes vectors of 0 dimensions; they need at least one"
        )
    );
    // The store itself refuses it too, and still answers.
    let synced = tool_retrieval::ToolStore::sync(store.as_ref(), &[], &Fixed(0)).await;
    assert!(matches!(synced, Err(RetrieveError::Embedding { .. })));
    assert!(store.nearest(&[], 1, None).unwrap().is_empty());
}

/// A store whose first tool scores NaN, as pgvector's cosine distance to a zero vector does.
struct NanFirst;

impl ToolStore for NanFirst {
    fn sync<'a>(
        &'a self,
        tools: &'a [StoredTool],
        _embedder: &'a dyn EmbeddingProvider,
    ) -> StoreFuture<'a, SyncReport> {
        Box::pin(async move {
            Ok(SyncReport {
                unchanged: tools.len(),
                ..SyncReport::default()
            })
        })
    }

    fn search<'a>(
        &'a self,
        _vector: &'a [f32],
        _k: usize,
        _threshold: Option<f32>,
    ) -> StoreFuture<'a, Vec<(String, f32)>> {
        Box::pin(async move {
            Ok(vec![
                ("tool_0".to_owned(), f32::NAN),
                ("tool_1".to_owned(), 0.5),
                ("tool_2".to_owned(), 0.25),
            ])
        })
    }
}

#[tokio::test]
async fn a_nan_score_from_the_store_is_dropped_not_ranked_first() {
    let specs = vec![
        tool("tool_0", "unrelated"),
        tool("tool_1", "weather report"),
        tool("tool_2", "weather"),
    ];
    let options = RetrieveOptions::default();
    let dense = Retriever::dense(&specs, Arc::new(Fixed(4)), Arc::new(NanFirst))
        .await
        .unwrap();
    let found = dense.retrieve("weather report", &options).await.unwrap();
    let names: Vec<&str> = found.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["tool_1", "tool_2"]);
    let hybrid = Retriever::hybrid(&specs, Arc::new(Fixed(4)), Arc::new(NanFirst))
        .await
        .unwrap();
    let found = hybrid.retrieve("weather report", &options).await.unwrap();
    let names: Vec<&str> = found.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["tool_1", "tool_2"]);
    assert!(found.iter().all(|r| r.score.is_finite()), "{found:?}");
}

#[tokio::test]
async fn a_hybrid_retriever_asked_for_more_than_its_fusion_depth_returns_that_many() {
    // The search was widened to `k`, but the fusion kept only its depth (50) of each ranking.
    let specs = tools(60);
    let retriever = Retriever::hybrid(&specs, Arc::new(Fixed(3)), Arc::new(InMemoryStore::new()))
        .await
        .unwrap();
    assert_eq!(tool_retrieval::Fusion::default().depth, 50);
    let options = RetrieveOptions {
        match_count: 55,
        ..RetrieveOptions::default()
    };
    let found = retriever
        .retrieve("weather report", &options)
        .await
        .unwrap();
    assert_eq!(found.len(), 55);
}

#[tokio::test]
async fn syncing_a_hundred_thousand_tools_over_as_many_others_counts_them_removed() {
    // Each known name was looked for in the whole new set: 10^10 comparisons here.
    let named = |prefix: &str| -> Vec<StoredTool> {
        (0..100_000)
            .map(|i| StoredTool::new(format!("{prefix}_{i}"), "a tool", "fixed"))
            .collect()
    };
    let store = InMemoryStore::new();
    store.sync(&named("old"), &Fixed(1)).await.unwrap();
    let report = store.sync(&named("new"), &Fixed(1)).await.unwrap();
    assert_eq!(
        report,
        SyncReport {
            embedded: 100_000,
            removed: 100_000,
            unchanged: 0
        }
    );
}

#[tokio::test]
async fn a_system_tool_forced_or_always_included_still_comes_after_the_ranked_ones() {
    // It came first, as `Forced` or `AlwaysIncluded`, where the README puts system tools last.
    let mut help = tool("help", "what this assistant can do");
    help.metadata.selectable = false;
    let specs = [tool("get_forecast", "weather forecast for a city"), help];
    let retriever = Retriever::lexical(&specs);
    for options in [
        RetrieveOptions::default(),
        RetrieveOptions {
            always_include: vec!["help".into()],
            strict: true,
            ..RetrieveOptions::default()
        },
    ] {
        let found = retriever
            .retrieve("[help] the weather forecast", &options)
            .await
            .unwrap();
        let found: Vec<(&str, Reason)> =
            found.iter().map(|r| (r.name.as_str(), r.reason)).collect();
        assert_eq!(
            found,
            [("get_forecast", Reason::Ranked), ("help", Reason::System)],
            "{options:?}"
        );
    }
}
