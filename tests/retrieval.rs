//! Tool retrieval through the public API: lexical always; dense and hybrid on the real model
//! with the `embed-candle` feature (the test script installs the model).

mod common;

use ai_tool::retrieval::{Reason, RetrieveError, RetrieveOptions, Retriever};
use ai_tool::{ToolMetadata, ToolSpec};
use serde_json::json;

fn tool(name: &str, description: &str, selectable: bool) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: json!({ "type": "object", "properties": {} }),
        output_schema: None,
        metadata: ToolMetadata {
            selectable,
            ..ToolMetadata::default()
        },
    }
}

fn tools() -> Vec<ToolSpec> {
    let mut weather = tool(
        "get_weather",
        "Current weather and forecast for a city",
        true,
    );
    weather.metadata.keywords = vec!["temperature".into(), "rain".into()];
    let mut flights = tool("searchFlights", "Find flights between airports", true);
    flights.parameters = json!({ "type": "object", "properties": { "destination_airport": { "type": "string", "description": "IATA code of the arrival airport" } } });
    vec![
        weather,
        flights,
        tool(
            "convert_currency",
            "Convert an amount between currencies at today's exchange rate",
            true,
        ),
        tool(
            "recipe.search",
            "Look up cooking recipes by ingredient",
            true,
        ),
        tool("help", "Explains what the assistant can do", false),
    ]
}

fn names(found: &[ai_tool::retrieval::Retrieved]) -> Vec<&str> {
    found.iter().map(|r| r.name.as_str()).collect()
}

#[tokio::test]
async fn lexical_ranks_by_name_description_keywords_and_parameters() {
    let specs = tools();
    let retriever = Retriever::lexical(&specs);
    let options = RetrieveOptions {
        match_count: 1,
        ..Default::default()
    };
    for (query, expected) in [
        ("will it rain tomorrow", "get_weather"),
        ("I need to fly to another airport", "searchFlights"),
        ("how many yen is 20 euros in currency", "convert_currency"),
        ("recipes with tomatoes", "recipe.search"),
        ("search flights", "searchFlights"),
    ] {
        let found = retriever.retrieve(query, &options).await.unwrap();
        assert_eq!(found[0].name, expected, "{query}: {found:?}");
        assert_eq!(found[0].reason, Reason::Ranked);
    }
}

#[tokio::test]
async fn system_tools_are_always_offered_and_never_ranked() {
    let specs = tools();
    let found = Retriever::lexical(&specs)
        .retrieve("what can you help with", &RetrieveOptions::default())
        .await
        .unwrap();
    let last = found.last().unwrap();
    assert_eq!((last.name.as_str(), last.reason), ("help", Reason::System));
    assert_eq!(found.iter().filter(|r| r.name == "help").count(), 1);
}

#[tokio::test]
async fn a_forced_tool_comes_first_and_is_removed_from_the_searched_text() {
    let specs = tools();
    let retriever = Retriever::lexical(&specs);
    let options = RetrieveOptions {
        match_count: 2,
        ..Default::default()
    };
    let found = retriever
        .retrieve("[recipe.search] weather in Paris", &options)
        .await
        .unwrap();
    assert_eq!(found[0].name, "recipe.search");
    assert_eq!(found[0].reason, Reason::Forced);
    assert_eq!(found[1].name, "get_weather");
    // BM25 ranks only tools sharing a word with the query: here one.
    assert_eq!(
        found.iter().filter(|r| r.reason == Reason::Ranked).count(),
        1
    );
}

#[tokio::test]
async fn a_forced_name_that_does_not_exist_is_an_error_only_when_strict() {
    let specs = tools();
    let retriever = Retriever::lexical(&specs);
    let strict = RetrieveOptions {
        strict: true,
        ..Default::default()
    };
    let err = retriever
        .retrieve("[no_such_tool] weather", &strict)
        .await
        .unwrap_err();
    assert_eq!(err, RetrieveError::ToolNotFound("no_such_tool".into()));
    let lenient = retriever
        .retrieve("[no_such_tool] weather", &RetrieveOptions::default())
        .await
        .unwrap();
    assert_eq!(lenient[0].name, "get_weather");
    assert!(!names(&lenient).contains(&"no_such_tool"));
}

#[tokio::test]
async fn always_include_and_threshold_shape_the_result() {
    let specs = tools();
    let retriever = Retriever::lexical(&specs);
    let options = RetrieveOptions {
        always_include: vec!["convert_currency".into()],
        threshold: Some(1.0),
        ..Default::default()
    };
    let found = retriever
        .retrieve("weather forecast", &options)
        .await
        .unwrap();
    assert_eq!(names(&found), ["convert_currency", "get_weather", "help"]);
    assert_eq!(found[0].reason, Reason::AlwaysIncluded);
    let none = retriever
        .retrieve(
            "weather forecast",
            &RetrieveOptions {
                threshold: Some(1e6),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(names(&none), ["help"], "nothing ranks over the threshold");
}

#[tokio::test]
async fn brackets_that_are_not_tool_names_stay_in_the_query() {
    let (forced, text) = ai_tool::retrieval::forced_names("see [this note] and [get_weather] now");
    assert_eq!(forced, ["get_weather"]);
    assert_eq!(text, "see [this note] and now");
}

#[cfg(feature = "cli")]
#[test]
fn eval_retrieval_reports_on_the_metatool_sample_and_bad_lines_name_file_and_line() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/metatool");
    let exec = || ai_tool::Executor::builder().registered_tools(false);
    let (catalog, queries) = (
        data.join("tools.jsonl").display().to_string(),
        data.join("queries.jsonl").display().to_string(),
    );
    let args = [
        "eval-retrieval",
        "--catalog",
        &catalog,
        "--queries",
        &queries,
        "--limit",
        "2000",
        "--json",
    ];
    let (code, out, err) = common::cli::run(exec(), &args);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["queries"], json!(2000));
    let hit5 = report["hit_at_5"].as_f64().unwrap();
    assert!(
        hit5 > 0.5
            && report["hit_at_1"].as_f64().unwrap() <= hit5
            && hit5 <= report["hit_at_10"].as_f64().unwrap(),
        "{report}"
    );

    let bad = common::TempFile::with_lines(
        "queries.jsonl",
        &[
            r#"{"query": "x", "tools": ["a"]}"#,
            r#"{"query": "no gold"}"#,
        ],
    );
    let bad_path = bad.path().display().to_string();
    let args = [
        "eval-retrieval",
        "--catalog",
        &catalog,
        "--queries",
        &bad_path,
    ];
    let (code, _, err) = common::cli::run(exec(), &args);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(&format!("error: {}:2: expected", bad.path().display())),
        "{err}"
    );
}

#[cfg(feature = "embed-candle")]
mod dense {
    use super::*;
    use ai_tool::retrieval::candle::MiniLm;
    use ai_tool::retrieval::{EmbeddingProvider, InMemoryStore, StoredTool, ToolStore};
    use std::sync::Arc;

    pub fn model() -> Arc<MiniLm> {
        let dir = std::env::var_os("AI_TOOL_MODEL_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2")
            });
        Arc::new(MiniLm::load(&dir).expect("the model is installed by scripts/install-model.sh"))
    }

    #[test]
    fn the_reference_sentence_embeds_as_sentence_transformers_does() {
        let vectors = model()
            .embed_now(&["This is an example sentence".to_owned()])
            .unwrap();
        let expected = [0.0677, 0.0635, 0.0487, 0.0793, 0.0374];
        for (got, want) in vectors[0].iter().zip(expected) {
            assert!((got - want).abs() < 5e-4, "{:?}", &vectors[0][..5]);
        }
        assert_eq!(vectors[0].len(), 384);
        let norm: f32 = vectors[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
    }

    #[test]
    fn a_batch_embeds_each_text_as_alone() {
        let m = model();
        let texts = vec![
            "short".to_owned(),
            "a much longer sentence that needs padding for the short one".to_owned(),
        ];
        let batch = m.embed_now(&texts).unwrap();
        let alone = m.embed_now(&texts[..1]).unwrap();
        for (a, b) in batch[0].iter().zip(&alone[0]) {
            assert!((a - b).abs() < 1e-4);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dense_retrieval_understands_paraphrases() {
        let specs = tools();
        let retriever = Retriever::dense(&specs, model(), Arc::new(InMemoryStore::new()))
            .await
            .unwrap();
        let options = RetrieveOptions {
            match_count: 1,
            ..Default::default()
        };
        for (query, expected) in [
            ("Do I need an umbrella today?", "get_weather"),
            ("book me a plane ticket to Rome", "searchFlights"),
            ("what can I cook with eggs", "recipe.search"),
        ] {
            let found = retriever.retrieve(query, &options).await.unwrap();
            assert_eq!(found[0].name, expected, "{query}: {found:?}");
            assert!(found[0].score > 0.0 && found[0].score <= 1.0);
        }
    }

    #[tokio::test]
    async fn a_second_sync_embeds_nothing_and_a_removed_tool_disappears() {
        let m = model();
        let store = InMemoryStore::new();
        let mut set: Vec<StoredTool> = tools()
            .iter()
            .map(|t| StoredTool::new(&t.name, &t.description, m.model_id()))
            .collect();
        let first = store.sync(&set, m.as_ref()).await.unwrap();
        assert_eq!((first.embedded, first.removed), (5, 0));
        let second = store.sync(&set, m.as_ref()).await.unwrap();
        assert_eq!((second.embedded, second.unchanged), (0, 5));
        set.retain(|t| t.name != "get_weather");
        set[0] = StoredTool::new(&set[0].name, "Find cheap flights", m.model_id());
        let third = store.sync(&set, m.as_ref()).await.unwrap();
        assert_eq!((third.embedded, third.removed, third.unchanged), (1, 1, 3));
        let query = m.embed_now(&["weather".to_owned()]).unwrap();
        let found = store.nearest(&query[0], 10, None).unwrap();
        assert!(found.iter().all(|(n, _)| n != "get_weather"));
    }

    #[cfg(feature = "cli")]
    #[test]
    fn hybrid_beats_lexical_and_dense_on_a_metatool_sample() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/metatool");
        let (catalog, queries) = (
            data.join("tools.jsonl").display().to_string(),
            data.join("queries.jsonl").display().to_string(),
        );
        let report = |kind: &str| {
            let exec = ai_tool::Executor::builder().registered_tools(false);
            let args = [
                "eval-retrieval",
                "--catalog",
                &catalog,
                "--queries",
                &queries,
                "--limit",
                "600",
                "--retriever",
                kind,
                "--json",
            ];
            let (code, out, err) = common::cli::run(exec, &args);
            assert_eq!(code, 0, "{err}");
            serde_json::from_str::<serde_json::Value>(&out).unwrap()
        };
        let (bm25, dense, hybrid) = (report("bm25"), report("dense"), report("hybrid"));
        for metric in ["hit_at_5", "mrr"] {
            let (b, d, h) = (
                bm25[metric].as_f64().unwrap(),
                dense[metric].as_f64().unwrap(),
                hybrid[metric].as_f64().unwrap(),
            );
            assert!(h > b && h > d, "{metric}: bm25 {b}, dense {d}, hybrid {h}");
        }
    }
}
