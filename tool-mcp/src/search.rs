//! Serving by search: a server with thousands of tools offers only `search_tools` and the tools
//! each session found with it, so that a client sees a few at a time.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};
use tool_retrieval::{RetrieveOptions, Retriever};

/// The name of the tool that finds the others.
pub const SEARCH_TOOL: &str = "search_tools";

/// How many tools one search adds when the client does not say.
const DEFAULT_FOUND: usize = 5;
/// The most one search ranks. A query may name up to `RetrieveOptions::max_forced` (5) more
/// as `[name]`, which are added whatever their rank.
const MAX_FOUND: usize = 20;

/// The `search_tools` tool as listed.
pub(crate) fn search_tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "description": "What you want to do, in words"
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_FOUND,
                "description": "How many tools to find (5 when left out)"
            }
        },
        "required": ["query"],
        "additionalProperties": false
    });
    let schema = match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    let mut tool = Tool::new(
        SEARCH_TOOL,
        "Finds the tools for a task among all this server's tools and makes them callable: they \
         join the tool list (a notifications/tools/list_changed follows). Search again for \
         another task.",
        Arc::new(schema),
    );
    tool.annotations = Some(ToolAnnotations::from_raw(
        Some("Search tools".into()),
        Some(true),
        Some(false),
        Some(true),
        Some(false),
    ));
    tool
}

/// One session's search: the names of the tools it found so far. Names, not places in the
/// list, so that what was found stays found when a followed server's list changes.
#[derive(Debug, Default)]
pub(crate) struct Found(Mutex<BTreeSet<String>>);

impl Found {
    /// Whether the tool called `name` was found.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(name)
    }

    /// The names found so far.
    pub(crate) fn names(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds tools; whether any was new.
    fn add<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> bool {
        let mut found = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let before = found.len();
        found.extend(names.into_iter().map(str::to_owned));
        found.len() > before
    }
}

/// Runs `search_tools`: the tools found join the session's list. Returns the result, and
/// whether the list changed. Bad arguments are an `isError` result the model can act on.
pub(crate) async fn search(
    retriever: &Retriever,
    tools: &[Tool],
    found: &Found,
    args: &JsonObject,
) -> (CallToolResult, bool) {
    let query = match args.get("query").and_then(Value::as_str) {
        Some(q) if !q.trim().is_empty() => q,
        _ => {
            return (
                refuse("`query` must be a string saying what you want to do"),
                false,
            )
        }
    };
    let limit = match args.get("limit") {
        None | Some(Value::Null) => DEFAULT_FOUND,
        Some(v) => match v.as_u64().filter(|n| (1..=MAX_FOUND as u64).contains(n)) {
            Some(n) => n as usize,
            None => {
                return (
                    refuse(&format!("`limit` must be an integer from 1 to {MAX_FOUND}")),
                    false,
                )
            }
        },
    };
    let options = RetrieveOptions {
        match_count: limit,
        ..RetrieveOptions::default()
    };
    let retrieved = match retriever.retrieve(query, &options).await {
        Ok(r) => r,
        Err(e) => return (refuse(&format!("the search failed: {e}")), false),
    };
    let hits: Vec<usize> = retrieved
        .iter()
        .filter_map(|r| tools.iter().position(|t| t.name == r.name))
        .collect();
    let changed = found.add(hits.iter().map(|&i| &*tools[i].name));
    let listed: Vec<Value> = hits
        .iter()
        .map(|&i| {
            let tool = &tools[i];
            json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": tool.input_schema,
            })
        })
        .collect();
    let text = if listed.is_empty() {
        format!("No tool matches `{query}`; try other words.")
    } else {
        let lines: Vec<String> = hits
            .iter()
            .map(|&i| {
                let description = tools[i].description.as_deref().unwrap_or_default();
                format!("{}: {description}", tools[i].name)
            })
            .collect();
        format!("Now callable:\n{}", lines.join("\n"))
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json!({ "tools": listed }));
    (result, changed)
}

fn refuse(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_owned())])
}
