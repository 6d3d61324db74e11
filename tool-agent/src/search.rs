//! Tool search: the agent's selectable tools declared deferred, loaded when a search finds them,
//! so that the request's tools, and with them the provider's prompt cache, stay the same from
//! step to step.

#[cfg(feature = "retrieval")]
use std::sync::Arc;

use serde_json::Value;
use tool_core::provider::hosted::{HostedTool, SearchBy};
use tool_core::provider::tool_search::{defers_loading, TOOL_SEARCH};
#[cfg(feature = "retrieval")]
use tool_core::provider::tool_search::{tool_search_spec, DEFAULT_TOOL_SEARCH_RESULTS};
use tool_core::provider::Format;
use tool_core::{ToolCall, ToolError, ToolOutput, ToolSpec};
use tool_model::OfferedTools;

/// How the model finds the agent's selectable tools
/// ([`AgentBuilder::tool_search`](crate::AgentBuilder::tool_search)).
///
/// Where the model's API has deferred loading (Anthropic, OpenAI Responses), every selectable
/// tool is declared deferred (`defer_loading: true`) beside the search, and the declarations
/// are the same at every step. Elsewhere the run falls back to choosing its tools up front:
/// by the agent's [`retriever`](crate::AgentBuilder::retriever), else by the search's own
/// retriever ([`ToolSearch::Local`]), else only those the run selects by name.
#[derive(Clone)]
pub enum ToolSearch {
    /// The provider's hosted search ([`HostedTool::ToolSearch`]): Anthropic's BM25 or regex
    /// search, OpenAI's `tool_search` (by words only). The provider runs it; nothing runs here.
    Provider(SearchBy),
    /// A `tool_search` tool the loop answers with this retriever over the deferred tools
    /// (BM25, dense or hybrid, as it was built), loading at most
    /// [`RetrieveOptions::match_count`](tool_retrieval::RetrieveOptions) tools a search.
    /// Anthropic gets `tool_reference` blocks; OpenAI Responses declares it as a
    /// client-executed `tool_search` and gets the found tools' declarations.
    #[cfg(feature = "retrieval")]
    Local(
        Arc<tool_retrieval::Retriever>,
        tool_retrieval::RetrieveOptions,
    ),
}

impl std::fmt::Debug for ToolSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolSearch::Provider(by) => f.debug_tuple("Provider").field(by).finish(),
            #[cfg(feature = "retrieval")]
            ToolSearch::Local(_, options) => f
                .debug_struct("Local")
                .field("match_count", &options.match_count)
                .finish_non_exhaustive(),
        }
    }
}

impl ToolSearch {
    /// The provider's search by words.
    pub fn provider() -> Self {
        ToolSearch::Provider(SearchBy::Words)
    }

    /// A search run by this retriever, loading at most
    /// [`DEFAULT_TOOL_SEARCH_RESULTS`] tools a search.
    #[cfg(feature = "retrieval")]
    pub fn local(retriever: Arc<tool_retrieval::Retriever>) -> Self {
        let options = tool_retrieval::RetrieveOptions {
            match_count: DEFAULT_TOOL_SEARCH_RESULTS,
            ..tool_retrieval::RetrieveOptions::default()
        };
        ToolSearch::Local(retriever, options)
    }

    /// Whether a model of `format` searches deferred tools this way: its API defers loading,
    /// and hosts the search when the provider is to run it.
    pub(crate) fn native_in(&self, format: Option<Format>) -> bool {
        let Some(format) = format.filter(|f| defers_loading(*f)) else {
            return false;
        };
        match self {
            ToolSearch::Provider(by) => HostedTool::ToolSearch(*by).declaration(format).is_ok(),
            #[cfg(feature = "retrieval")]
            ToolSearch::Local(..) => true,
        }
    }

    /// The hosted tool to declare, for the provider's search.
    pub(crate) fn hosted(&self) -> Vec<HostedTool> {
        match self {
            ToolSearch::Provider(by) => vec![HostedTool::ToolSearch(*by)],
            #[cfg(feature = "retrieval")]
            ToolSearch::Local(..) => Vec::new(),
        }
    }

    /// The search tool to offer, for a search run here.
    pub(crate) fn spec(&self) -> Option<ToolSpec> {
        match self {
            ToolSearch::Provider(_) => None,
            #[cfg(feature = "retrieval")]
            ToolSearch::Local(_, options) => Some(tool_search_spec(options.match_count)),
        }
    }

    /// The retriever a run without deferred loading chooses its tools by, if the search has
    /// one.
    #[cfg(feature = "retrieval")]
    pub(crate) fn retriever(
        &self,
    ) -> Option<(
        &Arc<tool_retrieval::Retriever>,
        &tool_retrieval::RetrieveOptions,
    )> {
        match self {
            ToolSearch::Local(retriever, options) => Some((retriever, options)),
            ToolSearch::Provider(_) => None,
        }
    }

    /// Answers a call of the search tool: the deferred tools of the run that the retriever
    /// finds for its `query`, at most its `limit` (and the search's most).
    pub(crate) async fn answer(
        &self,
        call: &ToolCall,
        offered: &OfferedTools,
    ) -> Result<ToolOutput, ToolError> {
        let invalid = |message: &str| ToolError::failed(TOOL_SEARCH, message.to_owned());
        let query = match call.arguments.get("query") {
            Some(Value::String(query)) if !query.trim().is_empty() => query.as_str(),
            _ => {
                return Err(invalid(
                    "`query` must be a few words saying what the tool does",
                ))
            }
        };
        let limit = match call.arguments.get("limit") {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                value
                    .as_u64()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| invalid("`limit` must be a whole number, at least 1"))?,
            ),
        };
        match self {
            ToolSearch::Provider(_) => {
                let _ = (query, limit, offered);
                Err(invalid("the provider runs this search"))
            }
            #[cfg(feature = "retrieval")]
            ToolSearch::Local(retriever, options) => {
                let most = options.match_count.max(1);
                let count = limit.map_or(most, |n| usize::try_from(n).unwrap_or(most).min(most));
                let deferred = |name: &str| {
                    offered
                        .specs()
                        .iter()
                        .any(|s| s.name == name && s.metadata.defer_loading)
                };
                let retrieve = tool_retrieval::RetrieveOptions {
                    match_count: count,
                    strict: false,
                    ..options.clone()
                };
                let found = retriever
                    .retrieve(query, &retrieve)
                    .await
                    .map_err(|e| ToolError::failed(TOOL_SEARCH, e.to_string()))?;
                let names: Vec<String> = found
                    .into_iter()
                    .map(|r| r.name)
                    .filter(|name| deferred(name))
                    .take(count)
                    .collect();
                if names.is_empty() {
                    return Ok(ToolOutput::text(format!(
                        "No tool matches \"{query}\". Try other words."
                    )));
                }
                Ok(ToolOutput::tool_references(names))
            }
        }
    }
}
