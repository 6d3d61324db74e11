//! `ai-tool route --tools FILE [--type T] [--json] "query"` and `ai-tool tools --tools FILE`:
//! declared tools (NLWeb's `tools.xml`, or TOML or JSON), routed with the model of
//! `OPENAI_BASE_URL` (features `cli` and `agent`).

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

use super::{write_line, Failure};
use crate::agent::OpenAiChatModel;
use crate::router::{CandidateScore, Route, RouteRequest, Router, ToolsFile};

/// The model's name when `AI_TOOL_MODEL` is unset.
const DEFAULT_MODEL: &str = "gpt-4o-mini";

fn read(file: &Path, err: &mut dyn Write) -> Result<ToolsFile, Failure> {
    let declared = ToolsFile::from_path(file).map_err(|e| Failure::input(e.to_string()))?;
    for warning in &declared.warnings {
        let _ = writeln!(err, "warning: {warning}");
    }
    Ok(declared)
}

/// `tools --tools FILE`: one line per declared tool (`Type/name  handler`), or the
/// tools file as JSON.
pub(crate) fn list(
    file: &Path,
    as_json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Failure> {
    let declared = read(file, err)?;
    if as_json {
        let text =
            serde_json::to_string_pretty(&declared).map_err(|e| Failure::input(e.to_string()))?;
        return write_line(out, &text);
    }
    if declared.tools.is_empty() {
        let _ = writeln!(err, "no tools: {} declares none", file.display());
        return Ok(());
    }
    let names: Vec<String> = declared
        .tools
        .iter()
        .map(|t| format!("{}/{}", t.schema_type, t.name))
        .collect();
    let width = names.iter().map(String::len).max().unwrap_or(0);
    for (name, tool) in names.iter().zip(&declared.tools) {
        let disabled = if tool.enabled { "" } else { "  (disabled)" };
        write_line(
            out,
            &format!("{name:width$}  -> {}{disabled}", tool.handler_name()),
        )?;
    }
    Ok(())
}

/// What `route` is asked.
pub(crate) struct RouteArgs<'a> {
    pub file: &'a Path,
    pub query: &'a str,
    pub schema_type: &'a str,
    pub site: Option<String>,
    pub threshold: Option<u8>,
    pub fallback: Option<String>,
    pub as_json: bool,
}

/// `route`: scores the declared tools for the query and prints the candidates and the winner,
/// without running anything (so the handlers need not exist). Fails when the model answered
/// none of the evaluations it was asked for (unreachable, refused the key): that is not "no
/// tool fits".
pub(crate) async fn route(
    args: RouteArgs<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Failure> {
    let declared = read(args.file, err)?;
    let read_warnings = declared.warnings.len();
    let Some(base_url) = std::env::var("OPENAI_BASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        return Err(Failure::input(
            "route needs a model: set OPENAI_BASE_URL (with its /v1), and OPENAI_API_KEY and AI_TOOL_MODEL as needed",
        ));
    };
    let name = std::env::var("AI_TOOL_MODEL").unwrap_or_else(|_| DEFAULT_MODEL.to_owned());
    let mut builder =
        Router::builder(OpenAiChatModel::new(name).with_base_url(&base_url)).tools_file(declared);
    if let Some(threshold) = args.threshold {
        builder = builder.threshold(threshold);
    }
    if let Some(fallback) = args.fallback {
        builder = builder.fallback(fallback);
    }
    let router = builder.build().map_err(|e| Failure::input(e.to_string()))?;
    // The file's own warnings were printed as it was read; these are the build's.
    for warning in router.warnings().iter().skip(read_warnings) {
        let _ = writeln!(err, "warning: {warning}");
    }
    let mut request = RouteRequest::new(args.query, args.schema_type);
    if let Some(site) = args.site {
        request = request.with_site(site);
    }
    let route = router.route_request(&request).await;
    print_route(&route, args.as_json, out)?;
    match unanswered(&route) {
        Some(error) => Err(Failure {
            code: 1,
            message: format!("the model answered none of the evaluations: {error}"),
        }),
        None => Ok(()),
    }
}

/// The first evaluation's error, when the model was asked and answered none.
fn unanswered(route: &Route) -> Option<&str> {
    let asked: Vec<&CandidateScore> = route
        .candidates()
        .iter()
        .filter(|c| c.answered || (c.error.is_some() && c.source.asks_the_model()))
        .collect();
    match asked.first() {
        Some(first) if asked.iter().all(|c| !c.answered) => first.error.as_deref(),
        _ => None,
    }
}

fn print_route(route: &Route, in_json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    if in_json {
        return write_line(out, &as_json(route).to_string());
    }
    let width = route
        .candidates()
        .iter()
        .map(|c| c.tool.len())
        .max()
        .unwrap_or(0);
    for candidate in route.candidates() {
        let mut line = format!(
            "{:>3}  {:width$}  ({})",
            candidate.score, candidate.tool, candidate.schema_type
        );
        if let Some(error) = &candidate.error {
            line.push_str(&format!("  {error}"));
        }
        write_line(out, &line)?;
    }
    match route {
        Route::Tool(routed) => {
            let fallback = if routed.fallback { ", fallback" } else { "" };
            write_line(
                out,
                &format!(
                    "=> {} ({}{fallback}) {}",
                    routed.tool,
                    routed.score,
                    Value::Object(routed.params.clone())
                ),
            )
        }
        Route::NoMatch(_) => write_line(out, "=> no match"),
    }
}

/// `{"tool","score","params","candidates":[{"tool","score","error"}]}`; `null`s when no tool fits.
fn as_json(route: &Route) -> Value {
    let candidates: Vec<Value> = route
        .candidates()
        .iter()
        .map(|c| json!({ "tool": c.tool, "score": c.score, "error": c.error }))
        .collect();
    match route {
        Route::Tool(routed) => json!({
            "tool": routed.tool,
            "score": routed.score,
            "params": routed.params,
            "candidates": candidates,
        }),
        Route::NoMatch(_) => {
            json!({ "tool": null, "score": null, "params": null, "candidates": candidates })
        }
    }
}
