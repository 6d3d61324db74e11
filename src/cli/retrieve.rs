//! `ai-tool retrieve` and `ai-tool eval-retrieval`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use super::{write_line, Failure};
use crate::retrieval::{RetrieveOptions, Retrieved, Retriever};
use crate::ToolSpec;

/// Which retriever the command line builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Kind {
    /// BM25: no model needed.
    Bm25,
    /// Dense embeddings (needs the `embed-candle` feature and the model).
    Dense,
    /// BM25 and dense, fused.
    Hybrid,
}

/// Where the model is unless `--model` says: `AI_TOOL_MODEL_DIR`, else `models/all-MiniLM-L6-v2`.
pub(crate) fn default_model_dir() -> PathBuf {
    std::env::var_os("AI_TOOL_MODEL_DIR")
        .map_or_else(|| PathBuf::from("models/all-MiniLM-L6-v2"), PathBuf::from)
}

pub(crate) async fn build(
    specs: &[&ToolSpec],
    kind: Kind,
    model: &Path,
) -> Result<Retriever, Failure> {
    if kind == Kind::Bm25 {
        return Ok(Retriever::lexical(specs.iter().copied()));
    }
    let embedder = embedder(model)?;
    let store = Arc::new(crate::retrieval::InMemoryStore::new());
    let built = match kind {
        Kind::Dense => Retriever::dense(specs.iter().copied(), embedder, store).await,
        _ => Retriever::hybrid(specs.iter().copied(), embedder, store).await,
    };
    built.map_err(|e| Failure {
        code: 1,
        message: e.to_string(),
    })
}

#[cfg(feature = "embed-candle")]
fn embedder(model: &Path) -> Result<Arc<dyn crate::retrieval::EmbeddingProvider>, Failure> {
    crate::retrieval::candle::MiniLm::load(model)
        .map(|m| Arc::new(m) as Arc<dyn crate::retrieval::EmbeddingProvider>)
        .map_err(|e| Failure::input(e.to_string()))
}

#[cfg(not(feature = "embed-candle"))]
fn embedder(_model: &Path) -> Result<Arc<dyn crate::retrieval::EmbeddingProvider>, Failure> {
    Err(Failure::input("the dense and hybrid retrievers need the `embed-candle` feature: build ai-tool with `--features embed-candle`"))
}

pub(crate) fn print_ranked(found: &[Retrieved], out: &mut dyn Write) -> Result<(), Failure> {
    for r in found {
        let reason = match r.reason {
            crate::retrieval::Reason::Ranked => String::new(),
            other => format!("  ({other:?})").to_lowercase(),
        };
        write_line(out, &format!("{:>8.4}  {}{reason}", r.score, r.name))?;
    }
    Ok(())
}

/// `rrf`, `rrf:K` or `blend:W`; a value out of its range (`rrf:-1`, `blend:2`, `NaN`) is
/// refused, naming the range, rather than ranking badly or not at all.
pub(crate) fn parse_fusion(text: &str) -> Result<crate::retrieval::Fusion, String> {
    use crate::retrieval::Fusion;
    let (name, value) = text
        .split_once(':')
        .map_or((text, None), |(n, v)| (n, Some(v)));
    let number = |v: Option<&str>, default: f32| {
        v.map_or(Ok(default), |v| {
            v.parse::<f32>().map_err(|e| format!("`{v}`: {e}"))
        })
    };
    let fusion = match name {
        "rrf" => Fusion::rrf(number(value, 60.0)?),
        "blend" => Fusion::blend(number(value, 0.1)?),
        _ => {
            return Err(format!(
                "unknown fusion `{text}`; expected rrf, rrf:K or blend:W"
            ))
        }
    };
    fusion.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_fusion_value_out_of_its_range_is_a_usage_error_naming_the_range() {
        for (fusion, expected) in [
            (
                "rrf:-1",
                "the RRF constant must be a finite number of 0 or more, not -1",
            ),
            (
                "rrf:NaN",
                "the RRF constant must be a finite number of 0 or more, not NaN",
            ),
            (
                "blend:NaN",
                "the blend's lexical weight must be from 0 to 1, not NaN",
            ),
            (
                "blend:2",
                "the blend's lexical weight must be from 0 to 1, not 2",
            ),
        ] {
            let args = [
                "ai-tool",
                "eval-retrieval",
                "--catalog",
                "tools.jsonl",
                "--queries",
                "queries.jsonl",
                "--fusion",
                fusion,
            ];
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let builder = crate::Executor::builder().registered_tools(false);
            let code = super::super::run_with(args, builder, &mut out, &mut err);
            let err = String::from_utf8(err).unwrap();
            assert_eq!(code, 2, "{fusion}: {err}");
            assert!(
                err.contains(&format!("'{fusion}'")) && err.contains(expected),
                "{fusion}: {err}"
            );
        }
        assert!(super::parse_fusion("blend:0.3").is_ok());
        assert!(super::parse_fusion("rrf").is_ok());
    }
}

/// One line of a queries file.
struct Query {
    text: String,
    gold: Vec<String>,
}

fn read_queries(path: &Path) -> Result<Vec<Query>, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    let mut queries = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), index + 1);
        let line: Value = serde_json::from_str(raw)
            .map_err(|e| Failure::input(format!("{at}: malformed JSON: {e}")))?;
        let query = line.get("query").and_then(Value::as_str);
        let gold = line.get("tools").and_then(Value::as_array).map(|t| {
            t.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        });
        match (query, gold) {
            (Some(query), Some(gold)) if !gold.is_empty() => queries.push(Query {
                text: query.to_owned(),
                gold,
            }),
            _ => {
                return Err(Failure::input(format!(
                    "{at}: expected {{\"query\": \"..\", \"tools\": [\"gold tool\", ..]}}"
                )))
            }
        }
    }
    Ok(queries)
}

/// The scores of one evaluation run.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Report {
    queries: usize,
    retriever: String,
    hit_at_1: f64,
    hit_at_5: f64,
    hit_at_10: f64,
    mrr: f64,
    latency_p50_ms: f64,
    latency_p99_ms: f64,
}

pub(crate) async fn evaluate(
    retriever: &Retriever,
    kind: Kind,
    queries_path: &Path,
    k: usize,
    limit: Option<usize>,
) -> Result<Report, Failure> {
    let mut queries = read_queries(queries_path)?;
    if let Some(limit) = limit {
        queries = spread(queries, limit);
    }
    let depth = k.max(10);
    let options = RetrieveOptions {
        match_count: depth,
        ..RetrieveOptions::default()
    };
    let (mut hits, mut reciprocal, mut latencies) =
        ([0usize; 3], 0.0f64, Vec::with_capacity(queries.len()));
    for query in &queries {
        let started = Instant::now();
        let found = retriever
            .retrieve(&query.text, &options)
            .await
            .map_err(|e| Failure {
                code: 1,
                message: e.to_string(),
            })?;
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        let rank = found.iter().position(|r| query.gold.contains(&r.name));
        for (slot, cutoff) in [1, 5, 10].into_iter().enumerate() {
            hits[slot] += usize::from(rank.is_some_and(|r| r < cutoff));
        }
        reciprocal += rank.map_or(0.0, |r| 1.0 / (r + 1) as f64);
    }
    latencies.sort_by(f64::total_cmp);
    let n = queries.len().max(1) as f64;
    let percentile = |p: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    Ok(Report {
        queries: queries.len(),
        retriever: format!("{kind:?}").to_lowercase(),
        hit_at_1: hits[0] as f64 / n,
        hit_at_5: hits[1] as f64 / n,
        hit_at_10: hits[2] as f64 / n,
        mrr: reciprocal / n,
        latency_p50_ms: percentile(0.5),
        latency_p99_ms: percentile(0.99),
    })
}

/// Every `len / limit`-th query, so a sample covers the whole file.
fn spread(queries: Vec<Query>, limit: usize) -> Vec<Query> {
    if limit == 0 || queries.len() <= limit {
        return queries;
    }
    let step = queries.len() as f64 / limit as f64;
    let wanted: Vec<usize> = (0..limit).map(|i| (i as f64 * step) as usize).collect();
    queries
        .into_iter()
        .enumerate()
        .filter(|(i, _)| wanted.binary_search(i).is_ok())
        .map(|(_, q)| q)
        .collect()
}

pub(crate) fn print_report(
    report: &Report,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    if as_json {
        return write_line(out, &json!(report).to_string());
    }
    write_line(out, &format!("queries    {}", report.queries))?;
    write_line(out, &format!("retriever  {}", report.retriever))?;
    write_line(out, &format!("hit@1      {:.4}", report.hit_at_1))?;
    write_line(out, &format!("hit@5      {:.4}", report.hit_at_5))?;
    write_line(out, &format!("hit@10     {:.4}", report.hit_at_10))?;
    write_line(out, &format!("MRR        {:.4}", report.mrr))?;
    write_line(out, &format!("p50        {:.3} ms", report.latency_p50_ms))?;
    write_line(out, &format!("p99        {:.3} ms", report.latency_p99_ms))
}
